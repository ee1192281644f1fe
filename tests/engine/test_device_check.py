"""tools.check_cuda: both trained models on torch:cuda against NumPy where a GPU is present, a
plain "no CUDA here" and exit 0 where none is, and the same checks on the CPU as a dry run."""

from __future__ import annotations

import pytest

from tools import check_cuda


@pytest.mark.torch
def test_the_dry_run_checks_the_binding_model_on_torch_cpu(capsys):
    pytest.importorskip("torch")
    assert check_cuda.main(["--device", "cpu", "--models", "binding"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith(("pass", "FAIL"))]
    names = [line.split(None, 2)[2] for line in lines]
    assert len(lines) == 13 and all(line.startswith("pass") for line in lines), out
    for kind in (
        "plain run",
        "swap values",
        "rotate the query",
        "patch",
        "causal map (4 of 4)",
        "head gradients",
    ):
        assert any(name.startswith(kind) for name in names), (kind, out)
    assert "13 of 13 checks passed on torch:cpu" in out


@pytest.mark.torch
@pytest.mark.hardware("no-cuda")
def test_without_cuda_it_says_so_and_exits_0(capsys):
    pytest.importorskip("torch")
    assert check_cuda.main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("no CUDA device here (") and "checks passed" not in out


@pytest.mark.torch
@pytest.mark.hardware("cuda")
@pytest.mark.timeout(900)
def test_on_cuda_both_models_agree_with_numpy(capsys):
    rc = check_cuda.main([])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "FAIL" not in out and "checks passed on torch:cuda" in out


def test_bad_arguments_are_refused():
    with pytest.raises(SystemExit):
        check_cuda.main(["--models", "gpt2"])
    with pytest.raises(SystemExit):
        check_cuda.main(["--long-tokens", "4096"])
