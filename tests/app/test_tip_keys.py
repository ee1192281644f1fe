"""The planes' tips by keyboard, server side (app/views/tip_keys.py): a press moves the tip from
where it is now by the steps it adds, presses the browser sent as one change are not lost, and
each tip reads its place."""

from __future__ import annotations

import pytest

from app.state.lab_state import LabState
from app.views.tip_keys import ANGLE_STEP, KEY_STEP, TipKeys, apply_move, tip_rows


def test_the_step_sums_move_a_key_once_each_even_when_presses_arrive_together():
    state, seen = LabState(), {}
    apply_move(state, "key:0:1:0", seen)  # one press right
    assert list(state.keys[0]) == pytest.approx([1.0 + KEY_STEP, 0.0])
    apply_move(state, "key:0:3:5", seen)  # two more right and a Shift+Up, sent as one
    assert list(state.keys[0]) == pytest.approx([1.0 + 3 * KEY_STEP, 5 * KEY_STEP])
    apply_move(state, "key:0:3:5", seen)  # the same sums again: nothing new
    assert list(state.keys[0]) == pytest.approx([1.0 + 3 * KEY_STEP, 5 * KEY_STEP])
    assert list(state.keys[1]) == [0.8, 0.6]


def test_the_query_turns_from_its_angle_now_and_wraps():
    state, seen = LabState(), {}
    state.angle = 175.0
    apply_move(state, "query:0:2:0", seen)
    assert state.angle == pytest.approx(175.0 + 2 * ANGLE_STEP - 360.0)


@pytest.mark.parametrize("bad", ["", "key:x:1:0", "key:9:1:0", "nonsense"])
def test_a_move_the_page_did_not_send_changes_nothing(bad):
    state = LabState()
    before = state.snapshot
    apply_move(state, bad, {})
    assert state.snapshot is before and state.error == ""


def test_each_tip_reads_its_place_and_follows_the_state():
    state = LabState()
    tips = TipKeys(state)
    tips.update()
    rows = tip_rows(state)
    assert [r["label"] for r in rows] == ["Query q", "Key A", "Key B", "Key C"]
    assert rows[2]["text"] == "x 0.80, y 0.60" and rows[0]["text"] == "angle 0 degrees"
    before = tips.encoded_tips
    tips.move = "key:1:-2:0"
    assert tip_rows(state)[2]["text"] == "x 0.60, y 0.60"
    tips.update()
    assert tips.encoded_tips != before
