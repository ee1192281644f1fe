"""The operator's own model file in headless Chromium (issue 43): a lab served with
`--model tiny=FILE` (a random llama file of `engine.trained.random_gguf`) lists "tiny" in its model
menu; choosing it draws its run and, below, every one of its heads. A truncated file listed
beside it shows its error in the model's place, and the first-screen lab still responds."""

from __future__ import annotations

import pytest

pytest.importorskip("gguf")
pytest.importorskip("tokenizers")

from engine import trained  # noqa: E402
from engine.heads import token_labels  # noqa: E402
from engine.trained.random_gguf import write_random  # noqa: E402
from tools.harness import serve_lab  # noqa: E402

from .labpage import READ_SOURCE, page_opener  # noqa: E402

pytestmark = pytest.mark.browser

GRID_TITLE = "Every head at once, and the open head's whole pattern"


@pytest.fixture(scope="module")
def files_lab(tmp_path_factory):
    """A lab of its own listing a random llama file as `tiny` and a truncated one as `cut`."""
    folder = tmp_path_factory.mktemp("model-files")
    tiny = write_random(folder / "tiny-file.gguf", "llama", n_layers=3, seed=7)
    cut = folder / "cut.gguf"
    cut.write_bytes(tiny.read_bytes()[: tiny.stat().st_size // 3])
    server = serve_lab(folder / "lab.log", "--model", f"tiny={tiny}", "--model", f"cut={cut}")
    yield server, tiny
    server.stop()


@pytest.fixture
def open_files_lab(chromium, files_lab, problems):
    opener, close_all = page_opener(chromium, files_lab[0], problems)
    yield opener
    close_all()


def _answer_drawn(page) -> bool:
    prediction = page.data("prediction")
    return prediction is not None and len(prediction["token"]) > 0


def test_the_menu_offers_the_file_and_choosing_it_draws_its_run_and_every_head(
    open_files_lab, files_lab, problems
):
    seen = len(problems)
    _, tiny = files_lab
    trained.add_file(tiny, "tiny")  # in this process too: its title and its own run
    try:
        title = {name: title for name, title, *_ in trained.available()}["tiny"]
        model = trained.load("tiny")
    finally:
        trained.remove_file("tiny")
    run = model.run(next(iter(model.examples.values())))
    page = open_files_lab("?model=binding")
    page.wait_until(lambda: _answer_drawn(page), "the binding model's answer")
    menu = page.page.get_by_label("Model", exact=True)
    offered = menu.locator("option").all_inner_texts()
    assert title in offered and "tiny" in title, offered
    menu.select_option(label=title)

    labels = list(token_labels(run.tokens))
    page.wait_until(lambda: page.data("weights")["label"] == labels, "tiny's run drawn")
    assert "model=tiny" in page.search()
    page.wait_until(lambda: run.answer in page.data("prediction")["token"], "tiny's answer")

    page.page.get_by_role("region", name=GRID_TITLE).get_by_role("button").click()
    page.wait_until(
        lambda: (
            len((page.page.evaluate(READ_SOURCE, "head_grid") or {"layer": []})["layer"])
            == model.n_layers * model.n_heads
        ),
        "a cell for each of tiny's 3 x 4 heads",
    )
    grid = page.data("head_grid")
    assert sorted(set(grid["layer"])) == [0, 1, 2] and sorted(set(grid["head"])) == [0, 1, 2, 3]
    assert problems[seen:] == []


def test_a_bad_file_shows_its_error_and_the_lab_still_responds(open_files_lab, problems):
    page = open_files_lab("?model=cut")
    page.wait_until(
        lambda: page.shows("could not be loaded") and page.shows("cut.gguf"),
        "the truncated file's error, naming it",
    )
    assert _answer_drawn(page)  # the head drawn meanwhile stays, whole
    page.click_button("Hand-made vectors")
    page.wait_until(lambda: "model=" not in page.search(), "the address to drop the model")
    page.wait_until(lambda: page.data("weights")["label"][:3] == ["A", "B", "C"], "keys A, B, C")
    assert page.data("key_tips")["x"] != []
