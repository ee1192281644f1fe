"""The lessons in another language (issue 44): a step's words, its measured numbers and its
verdict come from the lessons catalogue, answers count by index whatever their text, and the
pointer finds the controls a step names by the labels the page shows in that language."""

from __future__ import annotations

import re

import panel as pn
import pytest

from app.i18n.translator import LRI, PDI, Translator
from app.lessons.lab_lessons import LESSONS, LESSONS_BY_SLUG, control_names
from app.lessons.model_lessons import MODEL_LESSONS
from app.page.step_follower import shown_name
from app.state.lab_state import LabState
from app.views.lesson_panel import LessonsView

SPANISH = Translator("es")
_BOLD = re.compile(r"\*\*(.+?)\*\*")


def _spanish_step(slug: str) -> LessonsView:
    lessons = LessonsView(LabState(), tr=SPANISH)
    lessons.open(LESSONS.index(LESSONS_BY_SLUG[slug]) + 1)
    return lessons


def test_a_spanish_step_shows_its_words_numbers_and_verdict_in_spanish():
    lessons = _spanish_step("temperature")
    assert "¿Qué cambia la temperatura?" in lessons.text.object
    assert "Baja la temperatura de 1 a 0,25" in lessons.question.object
    assert "**Temperatura τ**" in lessons.action.object
    assert list(lessons.choices.options) == [
        "Cambia el orden de las claves",
        "El mismo orden; el peso de la clave que gana sube hacia 1",
        "El mismo orden y los mismos pesos",
    ]
    lessons.choices.value = 1  # the right answer, by its index
    lessons.do_it.clicks += 1
    lessons.measure.clicks += 1
    result = lessons.result.object
    # The measured numbers with a decimal comma, the verdict and the takeaway in Spanish.
    assert result.startswith("**Medido:** temperatura 1 -&gt; 0,25; orden sin cambios")
    assert "Tu predicción era correcta. La medida lo confirma." in result
    assert "nunca reordena las claves" in result
    assert not re.search(r"\d\.\d", result), result  # no English decimal point left
    assert lessons.outcome == (lessons.lesson, 1, True, True)


def test_a_spanish_answer_shown_as_its_text_still_counts_as_its_index():
    # A browser's echo gives the radio its label back: the answer is found in Spanish.
    lessons = _spanish_step("temperature")
    assert lessons.choice_index("Cambia el orden de las claves") == 0
    assert lessons.choice_index("The order of the keys changes") is None  # not this page's text
    lessons.choices.value = "Cambia el orden de las claves"
    lessons.measure.clicks += 1
    assert lessons.prediction == 0
    assert "**Esta vez no:** la respuesta esperada era *El mismo orden;" in lessons.result.object


def test_the_english_step_is_unchanged():
    lessons = LessonsView(LabState())
    lessons.open(LESSONS.index(LESSONS_BY_SLUG["temperature"]) + 1)
    lessons.choices.value = 1
    lessons.do_it.clicks += 1
    lessons.measure.clicks += 1
    assert lessons.result.object.startswith(
        "**Measured:** temperature 1 -&gt; 0.25; ranking unchanged; entropy"
    )
    assert "Your prediction was right. The measurement bears it out." in lessons.result.object


@pytest.mark.parametrize("code", ["es", "zh-Hans", "ar"])
def test_a_translated_step_names_each_control_as_that_page_labels_it(code):
    """The bold names of a translated step are the labels its page shows (the pointer's), in
    every part: the hand-made lessons and the trained models' (parts 5-8)."""
    tr = Translator(code)
    for step in (*LESSONS, *MODEL_LESSONS):
        english = (step.setup, step.question, step.action, step.takeaway)
        shown = [
            m.group(1).replace(LRI, "").replace(PDI, "")
            for text in english
            for m in _BOLD.finditer(tr.gettext(text))
        ]
        wanted = [
            shown_name(name, tr).replace(LRI, "").replace(PDI, "") for name in control_names(step)
        ]
        assert shown == wanted, (code, step.title)


def _labels(root) -> set[str]:
    labels = set()
    for widget in root.select(pn.widgets.Widget):
        for attr in ("label", "name"):
            text = getattr(widget, attr, None)
            if isinstance(text, str) and text.strip():
                labels.add(text.strip())
    return labels


def test_the_pointer_finds_a_spanish_steps_controls_by_their_spanish_labels():
    from app.page.lab_page import create_app

    lab = create_app(language="es").lab
    lab.show_more_settings()
    labels = _labels(pn.Column(*lab.sidebar()))
    lab.lessons.open(LESSONS.index(LESSONS_BY_SLUG["temperature"]) + 1)
    assert lab.pointer.names == ["Temperatura τ"]
    for step in LESSONS:
        for name in control_names(step):
            if name in {"Why is it sharp?", "Load this step", "Run the audit"}:
                continue  # a tab and the lesson's own button, not the sidebar's
            spanish = shown_name(name, SPANISH)
            # As app/js/control_pointer.js matches: the label, or the label then its note.
            assert any(
                label == spanish or re.match(re.escape(spanish) + r"[\s:(]", label)
                for label in labels
            ), (step.slug, name, spanish)
