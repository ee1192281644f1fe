"""The lessons on the page, in-process: the controls they name exist under those labels, the step
travels in the address and comes back with its set-up, and a bad link warns once per problem."""

from __future__ import annotations

import html

import panel as pn
import param
import pytest

from app.lessons.lab_lessons import LESSONS, LESSONS_BY_SLUG, control_names
from app.page.urlsync import UrlSync
from app.state.lab_state import INPUTS, LabState
from app.views.lesson_panel import LessonsView


class FakeLocation(param.Parameterized):
    """The one part of `pn.state.location` the sync uses."""

    search = param.String(default="")


def _page_labels() -> set[str]:
    from app.page.lab_page import create_app

    lab = create_app().lab
    lab.show_more_settings()
    roots = [pn.Column(*lab.sidebar(), *lab.main_area())]
    for tab in ("Why is it sharp?", "Audit", "Share & export"):
        lab.open_tab(tab)  # each builds its view when first opened
    roots += [v.__panel__() for v in vars(lab).values() if isinstance(v, pn.viewable.Viewer)]
    labels = set()
    for root in roots:
        for widget in root.select(pn.widgets.Widget):
            for attr in ("label", "name"):
                text = getattr(widget, attr, None)
                if isinstance(text, str) and text.strip():
                    labels.add(text.strip())
    return labels


@pytest.fixture(scope="module")
def page_labels():
    return _page_labels()


def _names_a_control(name: str, labels: set[str]) -> bool:
    # Exactly a label, or a label without its bracketed note ("Temperature τ (log scale)").
    return any(name == label or name == label.split(" (")[0].strip() for label in labels)


@pytest.mark.parametrize("step", LESSONS, ids=lambda s: s.slug)
def test_every_control_a_lesson_names_is_on_the_page(step, page_labels):
    names = control_names(step)
    assert names  # every step names at least one control by its label
    for name in names:
        assert _names_a_control(name, page_labels), f"{step.slug}: no control labelled {name!r}"


def test_the_label_check_can_fail(page_labels):
    assert not _names_a_control("normalise q/k", page_labels)
    assert not _names_a_control("scale", page_labels)
    assert _names_a_control("Temperature τ", page_labels)


def test_every_action_names_a_control_or_a_drag():
    for step in LESSONS:
        assert "**" in step.action or "drag" in step.action, step.slug


# --------------------------------------------------------------- the step in the address


def _page(search: str):
    state = LabState()
    lessons = LessonsView(state)
    location = FakeLocation(search=search)
    told: list[str] = []
    sync = UrlSync(state, location, INPUTS, notify=told.append, lessons=lessons)
    return state, lessons, location, told, sync


def _settings_of(step) -> dict:
    lab = LabState()
    step.start(lab)
    return lab.settings()


@pytest.mark.parametrize("number", range(1, len(LESSONS) + 1))
def test_a_link_to_a_step_opens_it_with_its_set_up(number):
    state, lessons, location, told, _ = _page(f"?lesson={number}")
    step = LESSONS[number - 1]
    assert told == []
    assert lessons.lesson == number and f"**Step {number} of" in lessons.position.object
    assert state.settings() == _settings_of(step)
    assert lessons.ready and not lessons.measure.disabled
    assert location.search.startswith(f"?lesson={number}")
    # Reloading that address gives the same step and the same lab.
    state2, lessons2, location2, told2, _ = _page(location.search)
    assert told2 == [] and lessons2.lesson == number
    assert state2.settings() == state.settings() and location2.search == location.search


def test_a_link_with_the_students_own_settings_keeps_them_and_can_still_measure():
    step = LESSONS_BY_SLUG["dimension-unscaled"]
    number = LESSONS.index(step) + 1
    state, lessons, location, told, _ = _page(f"?lesson={number}&scale=false&d_k=512")
    assert told == [] and lessons.lesson == number
    assert state.d_k == 512 and state.scale is False  # the action already done, kept
    lessons._measure()
    assert "d_k 2 -> 512" in html.unescape(lessons.result.object)
    assert "The measurement bears it out." in lessons.result.object


def test_next_and_previous_load_the_step_and_update_the_address():
    state, lessons, location, told, _ = _page("?lesson=5")
    lessons.next.clicks += 1
    assert lessons.lesson == 6 and "**Step 6 of" in lessons.position.object
    assert state.settings() == _settings_of(LESSONS[5])
    assert location.search == "?lesson=6&d_k=512&scale=false"
    lessons.previous.clicks += 1
    assert lessons.lesson == 5 and state.settings() == _settings_of(LESSONS[4])
    assert location.search == "?lesson=5&scale=false"


def test_load_this_step_puts_the_step_in_the_address():
    state, lessons, location, told, _ = _page("")
    assert lessons.lesson == 0 and location.search == ""  # a plain link stays plain
    lessons.load.clicks += 1
    assert location.search == "?lesson=1&temperature=0.25"


@pytest.mark.parametrize("bad", ["99", "0", "two", "-3", ""])
def test_a_bad_step_warns_once_and_shows_step_one(bad):
    state, lessons, location, told, _ = _page(f"?lesson={bad}")
    assert len(told) == 1 and told[0].startswith("Link: lesson: ") and "showing step 1" in told[0]
    assert lessons.lesson == 1 and "**Step 1 of" in lessons.position.object
    assert state.settings() == _settings_of(LESSONS[0])


def test_each_bad_link_warning_is_shown_once_even_when_the_browser_echoes_the_address():
    bad = "?temperature=hot&d_k=99999&scenario=bank"
    state, lessons, location, told, _ = _page(bad)
    assert len(told) == 2 and "temperature" in told[0] and "d_k" in told[1]
    assert location.search == "?scenario=bank"
    # On connecting, the browser reports the address it was opened with (what Panel's
    # Location does): the page already read it and must not warn again.
    location.search = bad
    assert len(told) == 2
    assert location.search == "?scenario=bank" and state.scenario == "bank"


def test_measure_shows_the_before_output_as_a_ghost():
    drawn = []
    state = LabState()
    lessons = LessonsView(state, show_ghost=drawn.append)
    lessons.open(1)
    assert drawn == [None]  # a new step clears the last reveal
    before = state.snapshot.output
    lessons.do_it.clicks += 1
    lessons.measure.clicks += 1
    assert drawn[-1] == pytest.approx((before[0], before[1]))
    assert "The measurement bears it out." in lessons.result.object
    lessons.next.clicks += 1
    assert drawn[-1] is None


def test_the_lessons_view_works_without_a_ghost():
    lessons = LessonsView(LabState())
    lessons.open(1)
    lessons.do_it.clicks += 1
    lessons.measure.clicks += 1
    assert "**Measured:**" in lessons.result.object


def test_a_step_link_with_a_flag_that_is_not_a_setting_still_sets_the_step_up():
    state, lessons, location, told, _ = _page("?lesson=6&colour=blue")
    assert len(told) == 1 and "colour" in told[0]  # named once, the step still set up
    assert lessons.lesson == 6 and state.settings() == _settings_of(LESSONS[5])


def test_link_warnings_outside_a_server_are_shown_at_once(monkeypatch):
    from app.page import urlsync

    shown = []
    monkeypatch.setattr(urlsync, "notify", lambda kind, text: shown.append((kind, text)))
    UrlSync(LabState(), FakeLocation(search="?lesson=x"), INPUTS, lessons=LessonsView(LabState()))
    assert len(shown) == 1 and shown[0][0] == "warning" and "lesson" in shown[0][1]


def _served_lab():
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    from app.page.lab_page import create_app

    doc = Document()
    with set_curdoc(doc):
        page = create_app(LabState())
        page.server_doc(doc)
    return doc, page.lab


def _follow(doc, lab, number: int) -> list:
    """What a class follower's page sends for one step: the Bokeh property changes of
    `lessons.open`, combined per property as Panel's hold combines them."""
    from bokeh.document.events import DocumentPatchedEvent
    from panel.io.state import set_curdoc

    doc.hold("combine")
    with set_curdoc(doc):
        lab.lessons.open(number)
    events = list(doc.callbacks._held_events)
    doc.callbacks._held_events = []
    doc.unhold()
    return [e for e in events if isinstance(e, DocumentPatchedEvent)]


def _lesson_models(lab) -> set[str]:
    view = lab.lessons
    parts = (view.position, view.text, view.choices, view.action, view.result)
    parts += (view.do_it, view.measure, view.previous, view.next, view.load)
    return {model.id for part in parts for model, _ in part._models.values()}


def test_a_step_opened_again_sends_almost_nothing():
    """Only what changed goes to the page: the same step again changes no setting, no text and
    no button, so its message is (nearly) empty."""
    doc, lab = _served_lab()
    _follow(doc, lab, 3)
    again = _follow(doc, lab, 3)
    assert len(again) <= 2, [(type(e.model).__name__, getattr(e, "attr", "")) for e in again]
    assert not {e.model.id for e in again} & _lesson_models(lab)


def test_following_a_step_sends_each_lesson_property_at_most_once_and_the_buttons_not_at_all():
    doc, lab = _served_lab()
    _follow(doc, lab, 2)
    events = _follow(doc, lab, 3)
    keys = [(e.model.id, getattr(e, "attr", None)) for e in events]
    assert len(keys) == len(set(keys))  # one event per model and property
    view = lab.lessons
    buttons = {m.id for w in (view.do_it, view.measure) for m, _ in w._models.values()}
    assert not {e.model.id for e in events} & buttons  # loaded before, loaded now: unchanged
    result = {m.id for m, _ in view.result._models.values()}
    assert not {e.model.id for e in events} & result  # "Loaded..." again: not re-sent
    assert view.ready and not view.do_it.disabled and not view.measure.disabled


def test_a_followed_step_swaps_no_stylesheet_and_walks_no_page(monkeypatch):
    """Bokeh walks a page's whole model graph after each change that swaps models. The step's
    text panes swapped their stylesheets on their first update (the page's second step: drawn
    with `isolated=False`, updated with `isolated=True`); drawn as their updates draw them
    (app/patches/panel_design.py), the second and third steps walk nothing."""
    from bokeh.document.models import DocumentModelManager

    doc, lab = _served_lab()
    _follow(doc, lab, 1)
    walks = []
    bokeh_walk = DocumentModelManager.recompute

    def counted(self):
        walks.append(lab.lessons.lesson)
        bokeh_walk(self)

    monkeypatch.setattr(DocumentModelManager, "recompute", counted)
    _follow(doc, lab, 2)
    assert walks == []
    _follow(doc, lab, 3)
    assert walks == []


def _first_step(needs_more_settings: bool) -> int:
    from app.page.lab_page import MORE_SETTINGS_NAMES

    return next(
        number
        for number, step in enumerate(LESSONS, start=1)
        if bool(set(control_names(step)) & MORE_SETTINGS_NAMES) == needs_more_settings
    )


def test_a_step_behind_more_settings_builds_them_on_a_later_turn_then_points_at_them():
    # A page alone (or a teacher's): the step first, its settings on a later turn.
    from app.page.lab_page import create_app

    lab = create_app().lab
    later = []
    lab.follower.later = later.append
    number = _first_step(needs_more_settings=True)
    nonce = lab.pointer.nonce
    lab.lessons.open(number)
    assert lab.lessons.lesson == number and len(later) == 1
    assert not lab.more_settings.built and lab.pointer.nonce == nonce
    later.pop()()
    assert lab.more_settings.built and lab.more_settings.button.open
    assert lab.pointer.nonce == nonce + 1
    assert set(lab.pointer.names) == set(control_names(LESSONS[number - 1]))


def test_a_students_page_in_a_class_points_at_more_settings_and_builds_them_when_opened():
    # A class's Next opens the step on every student's page at once: building these controls
    # on each (85-110 ms of server CPU a page) held up a class of 200. The student opens them.
    from app.classroom import shared
    from app.page.lab_page import MORE_SETTINGS_BUTTON, create_app

    lab = create_app().lab
    later = []
    lab.follower.later = later.append
    code, _ = shared.current().create()
    assert lab.classroom.session.join(code) and lab.classroom.session.role == "student"
    number = _first_step(needs_more_settings=True)
    names = control_names(LESSONS[number - 1])
    lab.lessons.open(number)
    assert later == [] and not lab.more_settings.built
    assert lab.pointer.names == [MORE_SETTINGS_BUTTON, *names]
    lab.more_settings.button.open = True  # the student presses it
    assert lab.more_settings.built and set(lab.pointer.names) == set(names)


def test_settings_queued_for_a_step_already_left_are_not_built():
    from app.page.lab_page import create_app

    lab = create_app().lab
    later = []
    lab.follower.later = later.append
    lab.lessons.open(_first_step(needs_more_settings=True))
    plain = _first_step(needs_more_settings=False)
    lab.lessons.open(plain)  # the teacher pressed Next again before the first turn came
    nonce = lab.pointer.nonce
    later.pop()()
    assert not later and not lab.more_settings.built and lab.pointer.nonce == nonce
