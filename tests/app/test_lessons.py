"""Every lesson step loads, acts on the real state, and measures what its answer claims."""

import re

import pytest

from app.lessons import LESSONS, LESSONS_BY_SLUG, PARTS, LessonStep
from app.state import LabState
from engine.scenarios import SCENARIOS


def test_the_path_has_four_parts_in_order_and_about_ten_steps():
    assert 8 <= len(LESSONS) <= 12
    parts = [s.part for s in LESSONS]
    assert set(parts) == set(PARTS)
    assert sorted(parts, key=PARTS.index) == parts  # steps follow the parts' order
    assert len(LESSONS_BY_SLUG) == len(LESSONS)  # slugs are unique


@pytest.mark.parametrize("step", LESSONS, ids=lambda s: s.slug)
def test_step_is_well_formed(step: LessonStep):
    assert step.scenario in SCENARIOS
    assert 2 <= len(step.choices) <= 4 and 0 <= step.answer < len(step.choices)
    assert len(set(step.choices)) == len(step.choices)
    for text in (step.title, step.setup, step.question, step.action, step.takeaway):
        assert text.strip() and len(text) < 400
    assert step.is_right(step.answer) and not step.is_right((step.answer + 1) % len(step.choices))


@pytest.mark.parametrize("step", LESSONS, ids=lambda s: s.slug)
def test_step_measurement_on_the_real_state_confirms_the_answer(step: LessonStep):
    lab = LabState()
    lab.temperature = 7.0  # a previous student's fiddling: starting a step must reset it
    before = step.start(lab)
    assert lab.scenario == step.scenario and lab.error == ""
    for name, value in step.settings.items():
        assert getattr(lab, name) == value
    step.act(lab)
    after = lab.snapshot
    assert lab.error == "" and after is not before
    assert step.confirms(before, after)
    text = step.measure(before, after)
    assert re.search(r"\d", text)
    # Doing nothing must not confirm the claim: the check can fail.
    assert not step.confirms(before, before)


def test_run_returns_before_after_and_the_measurement():
    lab = LabState()
    before, after, text = LESSONS_BY_SLUG["swap-values"].run(lab)
    assert text.startswith("weights changed by at most 0.0000; output moved by")
    assert before.values[0].tolist() == after.values[1].tolist()


def test_temperature_step_reports_the_same_ranking():
    _, _, text = LESSONS_BY_SLUG["temperature"].run(LabState())
    assert text.startswith("ranking unchanged; entropy")


def test_a_step_that_cannot_start_says_so():
    step = LESSONS_BY_SLUG["swap-values"]
    broken = LessonStep(**{**vars(step), "settings": {"temperature": -1.0}})
    with pytest.raises(RuntimeError, match="could not start"):
        broken.start(LabState())
