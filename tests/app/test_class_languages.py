"""A class in many languages (issue 44, point 7): each page speaks its own language while the
teacher paces everyone, votes count by answer whatever language they were shown in, and the
teacher's chart names the answers in the teacher's language."""

from __future__ import annotations

import pytest
from babel.messages.catalog import Catalog

from app.classroom import codes
from app.classroom.memory import MemoryStore
from app.classroom.session import ClassSession, in_language
from app.i18n import catalogues
from app.i18n.languages import LANGUAGES
from app.i18n.translator import Translator
from app.views.class_panel import ClassView
from app.views.lesson_panel import ALL_LESSONS, LessonsView

STEP = 2  # a lab step with three answers


class Page:
    """One browser's lessons and class view, in one language."""

    def __init__(self, store, tr: Translator, keys=None):
        from app.state.lab_state import LabState
        from app.state.sources import SourceSwitch

        state = LabState()
        self.lessons = LessonsView(state, sources=SourceSwitch(state), tr=tr)
        self.session = ClassSession(
            store, student_id=codes.new_student_id(), teacher_keys=keys or {}
        )
        self.view = ClassView(
            self.session, self.lessons, page_address=lambda: ("http://lab.school", "/app"), tr=tr
        )

    def choose(self, index: int) -> None:
        """Press the answer `index` as this page's radio shows it, in its language."""
        options = self.lessons.choices.options
        self.lessons.choices.value = options[list(options)[index]] if options else index


def teachers_translator() -> Translator:
    """A teacher's language whose catalogue names the step's answers its own way, so the
    chart can only show these words if it asks the teacher's translator."""
    made = Catalog(locale="es", domain="class")
    for n, choice in enumerate(ALL_LESSONS[STEP - 1].choices):
        made.add(choice, f"respuesta {n} del docente")
    compiled = catalogues.compile_catalogue(made)
    compiled.add_fallback(catalogues.translations(LANGUAGES["es"]))  # the rest in Spanish
    return Translator("es", catalogue=compiled)


@pytest.fixture
def mixed_class():
    store = MemoryStore()
    code, key = store.create()
    teacher = Page(store, teachers_translator(), {code: key})
    assert teacher.view.join(code)
    spanish, arabic = Page(store, Translator("es")), Page(store, Translator("ar"))
    for page in (spanish, arabic):
        assert page.view.join(code)
    teacher.lessons.open(STEP)
    return store, code, teacher, spanish, arabic


def test_a_spanish_and_an_arabic_vote_for_one_answer_count_together(mixed_class):
    store, code, teacher, spanish, arabic = mixed_class
    assert spanish.lessons.lesson == arabic.lessons.lesson == STEP
    answer = ALL_LESSONS[STEP - 1].answer
    spanish.choose(answer)
    arabic.choose(answer)
    tally = store.tally(code, STEP)
    assert tally.counts == {answer: 2} and tally.answered == 2  # by index, never by text
    data = teacher.view.chart.source.data
    assert data["count"][answer] == 2 and sum(data["count"]) == 2
    # The teacher's chart writes every answer in the teacher's language.
    assert data["choice"] == [f"respuesta {n} del docente" for n in range(len(data["choice"]))]


def test_each_page_says_the_class_in_its_own_language(mixed_class):
    store, code, teacher, spanish, arabic = mixed_class
    assert "Das la clase" in teacher.view.parts.status.object
    assert "En la clase" in spanish.view.parts.status.object
    assert "في الصف" in arabic.view.parts.status.object
    assert teacher.view.chart.figure.title.text == f"Las predicciones de la clase, paso {STEP}"
    # The votes in words too, the answers named as the teacher's chart names them.
    words = teacher.view.chart.text.pane.object
    assert (
        "Las predicciones de la clase, en palabras" in words and "respuesta 0 del docente" in words
    )
    teacher.view.teacher.reveal_button.clicks += 1
    assert "La respuesta correcta está marcada." in teacher.view.parts.outcome.object
    assert "الإجابة الصحيحة" in arabic.view.parts.outcome.object


def test_a_refusal_is_written_in_the_pages_language_and_kept_in_english():
    store = MemoryStore()
    page = Page(store, Translator("es"))
    assert not page.view.join("AAAAAA")
    assert page.session.problem == "there is no class AAAAAA: check the code on the board"
    shown = page.view.parts.problem.object
    assert "no existe la clase AAAAAA: revisa el código en la pizarra" in shown


def test_the_teachers_route_keeps_a_language_and_the_join_link_carries_none():
    assert in_language("class/new", "es") == "class/new?lang=es"
    assert in_language("class/device?code=ACEF47", "zh-Hans") == (
        "class/device?code=ACEF47&lang=zh-Hans"
    )
    assert in_language("class/new", "en") == "class/new"
