"""Nothing answers a step's question before Measure, in Chromium (issue 40): what the browser
holds for step 12 (where a trained head looks, with nothing to do) is neutral until Measure;
in a class, a student who measured still sees no number until the teacher's Reveal. The
in-process sweep of all 29 steps is tests/app/test_held_answers.py."""

from __future__ import annotations

import pytest

from app.views.lesson_panel import ALL_LESSONS, WAITING_FOR_REVEAL

from .labpage import HELD_HEADLINE, press
from .test_class_browser import start_class, wait_for_step

pytestmark = pytest.mark.browser

TITLE = "name => Bokeh.documents[0].get_model_by_name(name).title.text"
SUMMARY = """() => {
  const m = [...Bokeh.documents[0]._all_models.values()].find(
    m => typeof m.encoded_text === 'string');
  return decodeURIComponent(m.encoded_text);
}"""


def _weights(lab) -> list:
    return lab.data("weights")["weight"]


def test_a_trained_heads_step_shows_where_it_looks_only_after_measure(open_lab):
    lab = open_lab("?lesson=12", more_settings=False)
    lab.wait_until(lambda: lab.shows("Loaded. Predict"), "step 12 to load", 60)
    assert lab.page.evaluate(HELD_HEADLINE)  # "Predict first: ..."
    assert _weights(lab) == [] and lab.data("geometry")["x1"] == []
    assert lab.data("prediction")["probability"] == []
    assert "predict first" in lab.page.evaluate(TITLE, "prediction_plot")
    assert not lab.shows("gets over 99.9%") and not lab.shows("Do it for me")
    press(lab.page.get_by_role("button", name="Measure"))
    lab.wait_until(lambda: _weights(lab), "the weights after Measure")
    assert lab.page.evaluate(HELD_HEADLINE) is None
    assert "5000 @3 gets over 99.9% of the weight" in lab.page.evaluate(SUMMARY)
    assert lab.page.evaluate(TITLE, "prediction_plot").startswith("Answer: 5000")
    lab.page.get_by_role("button", name="◀ Previous").click()  # another step holds again
    lab.wait_until(lambda: lab.shows("Step 11 of"), "step 11")
    lab.wait_until(lambda: lab.page.evaluate(HELD_HEADLINE), "step 11 held")


def test_a_student_who_measured_sees_the_numbers_only_at_the_reveal(open_lab):
    teacher, code = start_class(open_lab)
    student = open_lab(f"?class={code}", more_settings=False)
    teacher.page.get_by_role("button", name="Load this step").click()
    teacher.page.get_by_role("button", name="Next ▶").click()
    wait_for_step(student, 2)
    step = ALL_LESSONS[1]
    page = student.page
    student.wait_until(lambda: student.shows("Loaded. Predict"), "step 2 loaded")
    page.get_by_text(step.choices[step.answer], exact=True).click()
    press(page.get_by_role("button", name="Do it for me"))
    press(page.get_by_role("button", name="Measure"))
    student.wait_until(lambda: student.shows(WAITING_FOR_REVEAL), "counted, not shown")
    student.server_round_trip()
    assert _weights(student) == [] and student.page.evaluate(HELD_HEADLINE)
    assert not student.shows("Measured:")
    teacher.page.get_by_role("button", name="Reveal to the class").click()
    student.wait_until(lambda: _weights(student), "the weights at the reveal")
    assert "C gets" in student.page.evaluate(SUMMARY)
    assert student.shows("Your prediction was right.")
