"""The Causal map tab, in process: "Patch every head" is enabled only with a changed sentence,
and says why when it is not; the map reads every head's weight on the token the open head looks
at, or on the one the student picked."""

from __future__ import annotations

import numpy as np
import pytest

from app.state.causal_state import LOOKING, CausalState
from app.state.model_state import ModelState
from app.views.causal_view import CausalView
from engine import trained
from engine.trained import causal


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


def _open_head_top(m: ModelState) -> int:
    return int(np.argmax(m.run.head(m.layer, m.head).weights))


def test_the_map_reads_the_weights_on_the_token_the_open_head_looks_at():
    # Issue 29: the head put 89% on " loan" and the map's "weight on the token" picked " the".
    m, c, view = _view("a=5; b=7; a=3; ?a")
    assert m.try_update(layer=0, head=1)  # it looks at "=" @2; the answer's mention is "3" @11
    top = _open_head_top(m)
    assert top == 2 != causal.default_token(m.run, m.run.answer)
    assert view.token.value == c.open_token() == top
    c.measure()
    assert c.settle(60)
    assert c.causal.token == top and view.token.value == top
    assert view.figure.xaxis.axis_label == "weight on ="
    # Opening another head before measuring: the picker follows it.
    c.forget()
    assert c.settle(60)
    assert m.try_update(layer=0, head=0)
    assert view.token.value == _open_head_top(m) == 12


def test_a_token_the_student_picked_stays_when_another_head_opens():
    m, c, view = _view("a=5; b=7; a=3; ?a")
    view.token.value = 5  # "b"
    assert c.token == 5
    assert m.try_update(layer=0, head=1)
    assert view.token.value == 5
    c.measure()
    assert c.settle(60) and c.causal.token == 5


def test_on_smollm2_the_map_opens_on_loan_where_the_default_head_looks():
    if not (pytest.importorskip("tokenizers") and trained.smollm.status()[0]):
        pytest.skip("smollm2 is not installed")
    m = ModelState(model="smollm2-135m", text="The bank approved the loan because it was")
    c = CausalState(m)
    view = CausalView(c, m)
    head = m.run.head(m.layer, m.head)
    assert (m.layer, m.head) == (13, 8) and head.weights[4] > 0.85
    assert m.run.tokens[view.token.value] == " loan"
