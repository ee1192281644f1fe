"""The model files the operator lists (issue 43): their names, the errors that name the file,
a listed file that has gone, a notebook's load by path, and the limit on a model's size.

Every model file here is a tiny random one of `engine.trained.random_gguf`, written per test."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("gguf")
pytest.importorskip("tokenizers")

from waiting import wait_until  # noqa: E402

from engine import trained  # noqa: E402
from engine.trained import files  # noqa: E402
from engine.trained.random_gguf import write_random  # noqa: E402


@pytest.fixture(autouse=True)
def registry():
    """Each test starts with no file listed and the default limit, and leaves it so."""
    before = {entry.name for entry in files.listed()}
    yield
    for entry in files.listed():
        if entry.name not in before:
            trained.remove_file(entry.name)
    trained.set_max_mb(trained.DEFAULT_MAX_MB)


@pytest.fixture
def llama(tmp_path):
    return write_random(tmp_path / "tiny-llama.gguf", "llama", seed=1)


def _listed() -> dict[str, tuple[str, bool, str]]:
    return {name: (title, ok, reason) for name, title, ok, reason in trained.available()}


def test_a_file_is_listed_under_its_file_name_after_the_shipped_models(llama):
    assert trained.add_file(llama) == "tiny-llama"
    names = [name for name, *_ in trained.available()]
    assert names[:2] == ["binding", "smollm2-135m"] and names[-1] == "tiny-llama"
    title, ok, reason = _listed()["tiny-llama"]
    assert ok and reason == ""
    assert "tiny-llama" in title and "GGUF file" in title


def test_a_name_given_replaces_the_file_name_and_the_same_listing_again_is_no_change(llama):
    assert trained.add_file(str(llama), "tiny") == "tiny"
    assert trained.add_file(llama, "tiny") == "tiny"  # a notebook cell run twice
    assert [entry.name for entry in files.listed()] == ["tiny"]
    assert files.find("tiny").path == llama.resolve()


def test_the_title_is_the_files_own_name_for_its_model(tmp_path):
    import gguf

    path = tmp_path / "named.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("Tiny\x00 Llama\n 1B")  # control characters and a line break dropped
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    trained.add_file(path, "mine")
    assert _listed()["mine"][0] == "Tiny Llama 1B (GGUF file mine)"


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../up", "cannot be a model's name"),
        ("/etc/passwd", "cannot be a model's name"),
        ("two words", "cannot be a model's name"),
        (".hidden", "cannot be a model's name"),
        ("", "cannot be a model's name"),
        ("x" * 49, "cannot be a model's name"),
        ("again.gguf", "may not end in .gguf"),
        ("binding", "a model the lab ships"),
        ("SmolLM2-135M", "a model the lab ships"),  # no case apart from a shipped name
    ],
)
def test_a_name_that_cannot_be_one_is_refused_naming_the_file(llama, name, why):
    with pytest.raises(ValueError, match=why) as refused:
        trained.add_file(llama, name)
    assert str(llama) in str(refused.value)
    assert files.listed() == []


def test_a_name_taken_by_another_file_is_refused_naming_both(llama, tmp_path):
    other = write_random(tmp_path / "other.gguf", "gpt2")
    trained.add_file(llama, "tiny")
    with pytest.raises(ValueError, match="is taken by") as refused:
        trained.add_file(other, "TINY")
    assert str(other) in str(refused.value) and str(llama) in str(refused.value)


def test_a_path_that_is_no_file_is_refused_naming_it(tmp_path):
    with pytest.raises(ValueError, match="no such file") as refused:
        trained.add_file(tmp_path / "absent.gguf")
    assert str(tmp_path / "absent.gguf") in str(refused.value)
    with pytest.raises(ValueError, match="not a file"):
        trained.add_file(tmp_path, "folder")


def test_a_listed_file_that_has_gone_is_not_installed_naming_it_but_not_its_folder(llama):
    trained.add_file(llama, "gone")
    os.remove(llama)
    title, ok, reason = _listed()["gone"]
    # A visitor reads this reason: the file's name, never where the server keeps it.
    assert not ok and reason.startswith(f"the file {llama.name} is missing")
    assert str(llama.parent) not in reason
    assert trained.loading_status("gone") == (0.0, "not installed", False, reason)
    with pytest.raises(trained.ModelNotInstalled, match="is missing"):
        trained.load("gone")


def test_a_listed_file_loads_in_the_background_with_its_progress(llama):
    trained.add_file(llama, "tiny")
    seen = []
    trained.start_loading("tiny")
    ready = wait_until(
        lambda: seen.append(trained.loading_status("tiny")) or seen[-1][2], "the file to load"
    )
    assert ready and seen[-1] == (1.0, "ready", True, "")
    model = trained.load("tiny")
    assert model.name == "tiny" and model.n_layers == 2 and model.n_heads == 4
    run = model.run(next(iter(model.examples.values())))
    n = len(run.tokens)
    weights = run.attention(1, 3)  # any head of the file opens: its last query's row
    assert weights.shape == (n,) and abs(weights.sum() - 1) < 1e-5


def test_a_path_loads_once_per_resolved_path_and_shares_a_listed_files_model(llama, tmp_path):
    by_path = trained.load(llama)
    assert by_path.name == "tiny-llama"
    assert trained.load(str(llama)) is by_path
    assert trained.load(str(tmp_path / "." / llama.name)) is by_path  # resolved, the same file
    trained.add_file(llama, "tiny")
    assert trained.load("tiny") is by_path


def test_only_load_takes_a_path_a_page_asks_by_name(llama):
    """The page's calls (`start_loading`, `loading_status`) open only listed names: a path a
    visitor typed into a link is an unknown model, whatever the file."""
    for typed in (str(llama), "/etc/passwd", "../tiny-llama.gguf", "tiny-llama.gguf"):
        with pytest.raises(ValueError, match="unknown model"):
            trained.start_loading(typed)
        with pytest.raises(ValueError, match="unknown model"):
            trained.loading_status(typed)
    with pytest.raises(ValueError, match="unknown model"):
        trained.load("not-listed")


def test_a_truncated_file_fails_naming_the_file_and_says_so_in_its_status(llama, tmp_path):
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(llama.read_bytes()[: llama.stat().st_size // 2])
    trained.add_file(cut)
    assert _listed()["cut"][1]  # its content is not read until it is opened
    with pytest.raises(ValueError, match="cut.gguf"):
        trained.load("cut")
    fraction, message, ready, error = trained.loading_status("cut")
    assert message == "failed" and not ready and "cut.gguf" in error


def test_a_model_larger_than_the_limit_is_refused_naming_file_and_limit(llama, tmp_path):
    trained.add_file(llama, "tiny")
    trained.set_max_mb(0.01)  # the random file's float32 weights are about 0.3 MB
    with pytest.raises(ValueError, match="tiny-llama.gguf") as refused:
        trained.load("tiny")
    assert "--max-model-mb" in str(refused.value)
    trained.set_max_mb(1)  # the limit in force when it loads, not when it was listed
    assert trained.load("tiny").n_layers == 2


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf")])
def test_the_limit_is_a_positive_number(bad):
    with pytest.raises(ValueError, match="positive number"):
        trained.set_max_mb(bad)
    assert files.max_mb() == trained.DEFAULT_MAX_MB == 4096
