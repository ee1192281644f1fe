"""The Causal map tab, in process: "Patch every head" is enabled only with a changed sentence,
and says why when it is not; the map reads every head's weight on the token the open head looks
at, or on the one the student picked; its first picture is the estimate, and the note prices the
exact map before the click and says how long it has left while it runs."""

from __future__ import annotations

import numpy as np
import pytest

from app.state import model_runs
from app.state.causal_state import LOOKING, CausalState
from app.state.map_cost import price_words
from app.state.model_state import ModelState
from app.state.receipt_state import ReceiptState
from app.views.causal_view import (
    ESTIMATED_ALPHA,
    ESTIMATED_TITLE,
    FRAME_GUESS,
    TITLE,
    CausalView,
)
from app.views.label_layout import overlaps, text_box
from app.views.receipt_labels import FONT_PX, screen_points
from engine import trained
from engine.trained import causal
from tests.waiting import wait_until


def _view(text: str) -> tuple[ModelState, CausalState, CausalView]:
    m = ModelState(text=text)
    c = CausalState(m)
    # The suggestion is looked for on a worker, which here delivers on its own thread (a page
    # delivers on its session's): let it land before the view is built, not halfway through.
    assert c.settle(60)
    view = CausalView(c, m)
    assert c.settle(60)
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


def test_the_first_picture_is_the_estimate_and_the_price_is_said_before_the_click():
    # Issue 29: on a 441-token text the map took 272 s with nothing saying it would take
    # minutes. Before the click the note prices it; the estimate draws the picture meanwhile.
    model_runs.plain_run("binding", "a=1; ?a", None, "numpy")  # a first forward, untimed
    model_runs.clear()  # so this sentence's forward is run, and timed, again
    m = ModelState(text="a=5; b=7; a=3; ?a")
    c, r = CausalState(m), ReceiptState(m)
    view = CausalView(c, m, r)
    assert c.settle(60)
    cost = c.cost()
    assert cost.forwards == causal.map_forwards(m.loaded) == 3.0
    assert cost.forward_s is not None  # the forward of this sentence, timed when it ran
    assert view.note.object == price_words(cost, 4) and "heads in turn" in view.note.object
    assert len(view.source.data["effect"]) == 0  # nothing estimated yet: the tab is not open
    r.following = True  # the student opens the tab
    assert r.settle(60)
    estimates = {(h.layer, h.head): h.estimate for h in r.amap.records}
    drawn = view.source.data
    assert view.figure.title.text == ESTIMATED_TITLE
    assert [estimates[lh] for lh in zip(drawn["layer"], drawn["head"], strict=True)] == (
        pytest.approx(list(drawn["effect"]), abs=1e-6)
    )
    assert list(drawn["alpha"]) == pytest.approx([ESTIMATED_ALPHA] * 4)
    assert view.summary.object.startswith("<i>Estimated from one backward pass")
    # The exact map replaces it.
    c.measure()
    assert c.settle(60)
    exact = c.causal
    assert view.figure.title.text == TITLE and view.note.object == ""
    assert list(view.source.data["effect"]) == pytest.approx([h.effect for h in exact.records])
    assert "Estimated" not in view.summary.object


def test_while_the_map_runs_the_note_says_how_far_and_how_long_is_left():
    m = ModelState(text="a=5; b=7; a=3; ?a")
    c = CausalState(m)
    view = CausalView(c, m)
    assert c.settle(60)
    held = []
    c.deliver = held.append  # the map's reports wait here, as on a page until its next tick
    causal.clear_cache(m.loaded)  # measured, not read from an earlier test's cache
    c.measure()
    assert c.settle(60)
    held[0]()  # the first head of four removed
    assert c.running == "causal" and c.progress == 0.25
    assert not view.stop.disabled and view.bar.visible and view.bar.value == 25
    assert view.note.object.startswith("Measuring every head (causal): 25% done, ")
    assert " left. Stop ends it" in view.note.object
    for report in held[1:]:
        report()
    assert c.causal is not None and view.stop.disabled and view.note.object == ""


def test_the_named_heads_labels_fit_the_frame_and_cover_no_other():
    # Issue 29: the head labels overlapped in the map (fixed offsets from each dot).
    m, c, view = _view("a=5; b=7; a=3; ?a")
    c.measure()
    assert c.settle(60)
    fig, labels = view.figure, view.labels.data
    top = c.causal.decisive(1)[0]
    assert any(f"L{top.layer} H{top.head}" in text for text in labels["text"])
    points = screen_points(
        labels["weight"],
        labels["effect"],
        (fig.x_range.start, fig.x_range.end),
        (fig.y_range.start, fig.y_range.end),
        FRAME_GUESS,
    )
    boxes = [
        text_box(x + dx, y + dy, text, FONT_PX)
        for (x, y), dx, dy, text in zip(
            points, labels["dx"], labels["dy"], labels["text"], strict=True
        )
    ]
    for i, box in enumerate(boxes):
        assert 0 <= box[0] and box[2] <= FRAME_GUESS[0] and 0 <= box[1] and box[3] <= FRAME_GUESS[1]
        assert not any(overlaps(box, other) for other in boxes[i + 1 :])
    effects = [r.effect for r in c.causal.records]
    assert fig.y_range.start < min(effects) and fig.y_range.end > max(effects)


def test_switching_to_another_model_keeps_the_view_up():
    # The link ?model=smollm2-135m: the head (13, 8) came before SmolLM2's run, and the token
    # picker asked the binding model's run for it (ValueError: no head (13, 8)).
    if not (pytest.importorskip("tokenizers") and trained.smollm.status()[0]):
        pytest.skip("smollm2 is not installed")
    m, c, view = _view("a=5; b=7; a=3; ?a")
    m.try_update(
        model="smollm2-135m", text="The bank approved the loan because it was", layer=13, head=8
    )
    wait_until(lambda: m.poll()[0] == 1.0 and not m.loading, "SmolLM2", timeout=300)
    assert m.error == "" and (m.layer, m.head) == (13, 8)
    assert m.run.tokens[view.token.value] == " loan" and c.open_token() == 4
