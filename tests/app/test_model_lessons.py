"""Each trained-head lesson, run on the shipped weights: its action is confirmed by the
measurement, and doing nothing is not."""

from __future__ import annotations

import pytest

from app.model_lessons import MODEL_LESSONS
from app.model_state import ModelState


@pytest.fixture(scope="module")
def m():
    return ModelState()


@pytest.mark.parametrize("step", MODEL_LESSONS, ids=lambda s: s.title)
def test_each_step_is_borne_out_by_the_model(m, step):
    before, after, sentence = step.run(m)
    assert step.confirms(before, after), sentence
    assert sentence and "nan" not in sentence.lower()
    assert 0 <= step.answer < len(step.choices)


@pytest.mark.parametrize(
    "step", [s for s in MODEL_LESSONS if s.act.__name__ != "<lambda>"], ids=lambda s: s.title
)
def test_without_the_action_the_measurement_does_not_confirm(m, step):
    before = step.start(m)
    assert not step.confirms(before, before)


def test_steps_leave_no_intervention_behind(m):
    MODEL_LESSONS[1].run(m)
    MODEL_LESSONS[0].start(m)
    assert m.extra == [] and m.ablated == [] and m.masked == []
