"""The Causal map tab's patching controls, in process: "Patch every head" is enabled only with
a changed sentence, and says why when it is not."""

from __future__ import annotations

import pytest

from app.state.causal_state import LOOKING, CausalState
from app.state.model_state import ModelState
from app.views.causal_view import CausalView


def _view(text: str) -> tuple[ModelState, CausalState, CausalView]:
    m = ModelState(text=text)
    c = CausalState(m)
    view = CausalView(c, m)
    assert c.settle(60)  # the suggestion is looked for on the worker
    return m, c, view


def test_a_suggested_sentence_enables_patching():
    _, c, view = _view("a=5; b=7; a=3; ?a")
    assert view.corrupted.value_input == c.corrupted == "a=5; b=7; a=0; ?a"
    assert not view.patch.disabled and view.patch_why.object == ""


@pytest.mark.parametrize("typed", ["", "   "])
def test_without_a_changed_sentence_patching_is_disabled_and_says_why(typed):
    # It stayed enabled and then drew an empty chart without a word.
    _, c, view = _view("rate=12; x=4; y=9; ?charge")  # nothing is defined to change
    assert c.corrupted == "" and "no change suggested" in c.change
    view.corrupted.value_input = typed
    assert view.patch.disabled
    assert "needs a changed sentence" in view.patch_why.object
    assert "none could be suggested" in view.patch_why.object
    view._start_patch()  # a click that reached the server anyway starts nothing
    assert c.running == "" and c.patching is None
    # Typing one enables it at once, before Enter.
    view.corrupted.value_input = "rate=12; x=4; y=8; ?charge"
    assert not view.patch.disabled and view.patch_why.object == ""


def test_while_a_suggestion_is_sought_the_button_says_so():
    m, c, view = _view("a=5; b=7; a=3; ?a")
    held = []
    c.deliver = held.append  # the suggestion waits here, as on a page until its next tick
    m.text = "a=1; b=2; ?b"  # a new sentence: the old suggestion goes, a new one is sought
    assert c.settle(60) and c.corrupted == "" and c.change == LOOKING
    assert view.patch.disabled and "being looked for" in view.patch_why.object
    for delivery in held:
        delivery()
    assert c.corrupted == "a=1; b=0; ?b" and not view.patch.disabled
