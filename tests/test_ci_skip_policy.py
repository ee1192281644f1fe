"""The suite's skip policy (tests/conftest.py), run on small suites of its own: in CI a skip is
a failure, except a hardware skip allowed by name; outside CI a skip is a skip."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).with_name("conftest.py").read_text()
# The real rules, with the machine's hardware replaced by known answers: "cuda" is absent here,
# "openblas" present, and "no-cuda" cannot be told (as without torch).
FAKE_MACHINE = """
HARDWARE["cuda"] = Hardware("a CUDA GPU that torch can use", lambda: False)
HARDWARE["openblas"] = Hardware("NumPy built on OpenBLAS", lambda: True)
HARDWARE["no-cuda"] = Hardware("a machine without a CUDA GPU", lambda: None)
"""
SUITE = """
import pytest

@pytest.mark.hardware("cuda")
def test_needs_a_gpu():
    raise AssertionError("runs only where there is a GPU")

@pytest.mark.hardware("openblas")
def test_needs_openblas_and_has_it():
    pass

def test_plain_skip():
    pytest.skip("not today")

@pytest.mark.skipif(True, reason="never here")
def test_skipif():
    pass

@pytest.mark.hardware("openblas")
def test_hardware_marked_but_skipped_for_another_reason():
    pytest.importorskip("a_module_that_is_not_installed")

@pytest.mark.hardware("cuda")
def test_also_needs_a_gpu():
    pass

@pytest.mark.hardware("no-cuda")
def test_hardware_that_cannot_be_told_runs():
    pass

def test_claims_the_reason_without_the_marker():
    pytest.skip("needs hardware 'cuda': a CUDA GPU that torch can use, not on this machine")

@pytest.mark.xfail(reason="known", strict=True)
def test_expected_failure():
    raise AssertionError
"""


@pytest.fixture(autouse=True)
def _the_projects_packages(monkeypatch):
    """The copied conftest imports the project's `tools` (the session secret): its suites run
    in a folder of their own, with the checkout on their path."""
    root = str(Path(__file__).resolve().parents[1])
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    )


@pytest.fixture
def run(pytester, monkeypatch):
    pytester.makeconftest(CONFTEST + FAKE_MACHINE)
    pytester.makepyfile(test_suite=SUITE)

    def _run(ci: bool):
        monkeypatch.setenv("COLUMNS", "400")  # room for each skip's whole reason
        if ci:
            monkeypatch.setenv("CI", "true")
        else:
            monkeypatch.delenv("CI", raising=False)
        # A fresh process: the conftest reads CI when it is imported.
        result = pytester.runpytest_subprocess("-v", "-p", "no:cacheprovider")
        outcomes = {}  # "test_suite.py::test_x SKIPPED (reason) [ 10%]" -> {test_x: (SKIPPED, reason)}
        for line in result.outlines:
            if line.startswith("test_suite.py::"):
                node, word, *rest = line.split(" ")
                reason = " ".join(rest).rsplit(" [", 1)[0].strip()
                outcomes[node.split("::")[1]] = (word, reason.removeprefix("(").removesuffix(")"))
        return result, outcomes

    return _run


def test_in_ci_only_a_hardware_skip_by_its_own_marker_passes(run):
    result, outcomes = run(ci=True)
    words = {name: word for name, (word, _) in outcomes.items()}
    assert words == {
        "test_needs_a_gpu": "SKIPPED",  # the machine has no GPU: allowed
        "test_needs_openblas_and_has_it": "PASSED",
        "test_plain_skip": "FAILED",
        "test_skipif": "ERROR",  # a skipif skips in setup: failed there, an error
        "test_hardware_marked_but_skipped_for_another_reason": "FAILED",
        "test_also_needs_a_gpu": "SKIPPED",
        "test_hardware_that_cannot_be_told_runs": "PASSED",
        "test_claims_the_reason_without_the_marker": "FAILED",
        "test_expected_failure": "XFAIL",
    }
    gpu = "needs hardware 'cuda': a CUDA GPU that torch can use, not on this machine"
    assert outcomes["test_needs_a_gpu"][1] == outcomes["test_also_needs_a_gpu"][1] == gpu
    assert "skipped in CI, which must run every test" in result.stdout.str()
    result.assert_outcomes(passed=2, skipped=2, failed=3, errors=1, xfailed=1)


def test_outside_ci_a_skip_is_a_skip(run):
    result, _ = run(ci=False)
    result.assert_outcomes(passed=2, skipped=6, xfailed=1)


def test_an_unknown_hardware_name_is_an_error(pytester, monkeypatch):
    monkeypatch.setenv("CI", "true")
    pytester.makeconftest(CONFTEST + FAKE_MACHINE)
    pytester.makepyfile(
        test_typo="""
import pytest

@pytest.mark.hardware("gpu")
def test_typo():
    pass
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    assert "hardware takes one of ['cuda', 'no-cuda', 'openblas'], got ('gpu',)" in (
        result.stdout.str()
    )


def test_the_suites_hardware_tests_use_the_allowlist():
    """Each hardware skip in the suite goes through a marker (no test skips on a GPU or a BLAS
    build by hand, which CI would count as a failure)."""
    root = Path(__file__).parent
    marked = {
        path.relative_to(root).as_posix(): path.read_text().count("@pytest.mark.hardware(")
        for path in root.rglob("test_*.py")
        if path.name != Path(__file__).name
    }
    assert {name: n for name, n in marked.items() if n} == {
        "engine/test_device_check.py": 2,  # tools/check_cuda.py with and without a GPU
        "engine/test_kernels.py": 1,
        "engine/test_torch.py": 1,
    }
