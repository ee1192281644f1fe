"""The Causal map tab's patching follows what the student chose (issue 40): the caption
describes the changed sentence in the box, not the suggested one it replaced ("Mary became
Peter ..." stayed after typing), and patching can be limited to chosen tokens, which the
summary and the table then name."""

from __future__ import annotations

from app.state.causal_state import CausalState, describe_change
from app.state.head_tables import patching_top_table
from app.state.model_state import ModelState
from app.views.causal_view import CausalView
from engine import trained

PROGRAM = "a=5; b=7; a=3; ?a"
SUGGESTED = "a=5; b=7; a=0; ?a"
TYPED = "a=5; b=7; a=7; ?a"


def _view():
    m = ModelState(text=PROGRAM)
    c = CausalState(m)
    # The suggestion is looked for on a worker, which here delivers on its own thread (a page
    # delivers on its session's): let it land before the view is built, not halfway through.
    assert c.settle(60)
    view = CausalView(c, m)
    assert c.settle(60)
    return m, c, view


def test_the_caption_follows_the_typed_sentence():
    _, c, view = _view()
    assert c.corrupted == SUGGESTED and "a=3 became a=0" in view.change.object
    view.corrupted.value_input = TYPED
    tokens = trained.load("binding").check(PROGRAM)
    three = tokens.index("3")
    assert view.change.object.startswith("Your sentence: ")
    assert f"3 became 7 at token {three}" in view.change.object
    assert "a=0" not in view.change.object
    view.corrupted.value_input = "a=5; ?a"
    assert "the same number" in view.change.object
    view.corrupted.value_input = SUGGESTED  # the suggestion again: its own words
    assert view.change.object == c.change


def test_patching_limited_to_chosen_tokens_is_the_engines_and_says_where():
    m, c, view = _view()
    model = trained.load("binding")
    tokens = model.check(PROGRAM)
    three = tokens.index("3")
    assert list(view.positions.options.values()) == list(range(len(tokens)))
    view.corrupted.value_input = TYPED
    view.positions.value = [three]
    assert c.positions == [three]
    view._start_patch()
    assert c.settle(60) and c.error == ""
    pmap = c.patching
    assert pmap.positions == (three,) and pmap.corrupted == TYPED
    # The engine's own map at the same positions, and not the whole-sentence one.
    alone = model.patching_map(PROGRAM, TYPED, positions=[three])
    assert [r.recovered for r in pmap.records] == [r.recovered for r in alone.records]
    everywhere = model.patching_map(PROGRAM, TYPED)
    assert [r.recovered for r in pmap.records] != [r.recovered for r in everywhere.records]
    summary = view.patch_summary.object
    assert f"Patched into “{TYPED}”" in summary and f"only at 3 @{three}" in summary
    assert f"3 became 7 at token {three}" in summary
    table = patching_top_table(pmap)
    assert f"only at token positions {three}" in table.description
    # Typing another sentence afterwards does not rename the map drawn.
    view.corrupted.value_input = SUGGESTED
    assert f"Patched into “{TYPED}”" in view.patch_summary.object
    # None chosen: every position, said so.
    view.positions.value = []
    view._start_patch()
    assert c.settle(60) and c.patching.positions is None
    assert "at every position" in view.patch_summary.object
    assert "at every position" in patching_top_table(c.patching).description


def test_a_new_sentence_forgets_the_chosen_positions():
    m, c, view = _view()
    view.positions.value = [3]
    assert m.try_update(text="a=1; b=2; ?b")
    assert c.settle(60)
    assert c.positions == [] and view.positions.value == []


def test_a_change_is_described_token_by_token():
    model = trained.load("binding")
    assert describe_change(model, PROGRAM, PROGRAM).startswith("it is the open sentence itself")
    assert "tokens and the open sentence" in describe_change(model, PROGRAM, "a=5; ?a")
