"""A class on the page, in-process: a teacher's page and students' pages on one store, through
their real views and lesson steppers (the browser tests drive the same through Chromium)."""

from __future__ import annotations

import param
import pytest

from app.classroom import codes
from app.classroom.memory import MemoryStore
from app.classroom.session import ClassSession
from app.page.urlsync import UrlSync
from app.views.class_panel import ClassView, caption, vote_rows
from app.views.lesson_panel import ALL_LESSONS, LessonsView


class FakeLocation(param.Parameterized):
    search = param.String(default="")


class Page:
    """One browser's lessons and class view (the page's wiring, without the plots)."""

    def __init__(self, store, keys=None, deliver=None):
        from app.state.lab_state import LabState
        from app.state.sources import SourceSwitch

        self.state = LabState()
        self.lessons = LessonsView(self.state, sources=SourceSwitch(self.state))
        self.session = ClassSession(
            store, student_id=codes.new_student_id(), teacher_keys=keys or {}, deliver=deliver
        )
        self.view = ClassView(
            self.session, self.lessons, page_address=lambda: ("http://lab.school", "/app")
        )

    def votes(self) -> dict[str, int]:
        data = self.view.chart.source.data
        return dict(zip(data["choice"], data["count"], strict=True))


@pytest.fixture
def store():
    return MemoryStore()


@pytest.fixture
def room(store):
    code, key = store.create()
    teacher = Page(store, {code: key})
    assert teacher.view.join(code)
    students = [Page(store) for _ in range(3)]
    for s in students:
        assert s.view.join(code)
    return code, teacher, students


def test_the_teachers_steps_move_every_following_student(room):
    code, teacher, students = room
    teacher.lessons.open(4)
    assert [s.lessons.lesson for s in students] == [4, 4, 4]
    teacher.lessons.next.clicks += 1
    assert [s.lessons.lesson for s in students] == [5, 5, 5]
    assert all(s.lessons.ready for s in students)  # the step is set up, not only shown


def test_a_newer_next_supersedes_one_still_on_its_way(store):
    # A replica busy with the class hands each page its wake-up later; by then the teacher may
    # have pressed Next again. The page goes straight to the latest step, setting up no other.
    code, key = store.create()
    teacher = Page(store, {code: key})
    teacher.view.join(code)
    waiting = []
    slow = Page(store, deliver=waiting.append)
    slow.view.join(code)
    opened = []
    slow.lessons.param.watch(lambda e: opened.append(e.new), "lesson")
    for step in (2, 3, 4):
        teacher.lessons.open(step)
    assert opened == [] and waiting  # nothing reached the page yet
    while waiting:
        waiting.pop(0)()
    assert opened == [4] and slow.lessons.ready  # set up once, on the latest step


def test_the_teacher_sees_how_many_students_are_on_the_step(room):
    code, teacher, (a, b, c) = room
    teacher.lessons.open(4)
    status = teacher.view.parts.status.object
    assert "data-class-arrived='3'" in status and "3 of 3</b> are on it" in status
    a.view.parts.follow.value = False
    a.lessons.open(9)  # on a step of its own
    teacher.lessons.open(5)
    status = teacher.view.parts.status.object
    assert "data-class-arrived='2'" in status and "2 of 3</b> are on it" in status
    assert "data-class-arrived" not in a.view.parts.status.object  # the teacher's figure only


def test_a_student_who_stops_following_stays_and_comes_back_when_asked(room):
    code, teacher, (a, b, _) = room
    teacher.lessons.open(2)
    a.view.parts.follow.value = False
    a.lessons.open(7)
    teacher.lessons.open(3)
    assert a.lessons.lesson == 7 and b.lessons.lesson == 3
    a.view.parts.follow.value = True
    assert a.lessons.lesson == 3


def test_lock_keeps_students_on_the_step(room):
    code, teacher, (a, _, _) = room
    teacher.lessons.open(6)
    a.view.parts.follow.value = False
    teacher.view.teacher.lock.value = True
    assert a.lessons.pinned and a.lessons.next.disabled and a.lessons.previous.disabled
    assert a.view.parts.follow.value and a.view.parts.follow.disabled and a.lessons.lesson == 6
    teacher.view.teacher.lock.value = False
    assert not a.lessons.pinned and not a.lessons.next.disabled


def test_a_late_student_lands_on_the_current_step(store, room):
    code, teacher, _ = room
    teacher.lessons.open(9)
    late = Page(store)
    late.view.join(code)
    assert late.lessons.lesson == 9


def echo_labels(page) -> None:
    """What Panel 1.9.4 does to a late joiner's radio: a step opened in the page's onload (inside
    `pn.io.hold`) has its Bokeh change callback run after Panel's bookkeeping forgot it, so
    Panel takes its own `labels` update for one from the browser and sets the options to the
    answers' texts (issue #28's lost votes; seen in the served page's log)."""
    page.lessons.choices.options = list(page.lessons.step.choices)


def test_a_late_students_vote_counts_though_the_radio_came_back_as_its_labels(store, room):
    code, teacher, _ = room
    teacher.lessons.open(1)
    teacher.lessons.next.clicks += 1
    late = Page(store)
    location = FakeLocation(search=f"?class={code}")
    UrlSync(late.state, location, [], lessons=late.lessons, classroom=late.view)
    assert late.lessons.lesson == 2 and late.session.role == "student"
    echo_labels(late)
    step = ALL_LESSONS[1]
    late.lessons.choices.value = step.choices[step.answer]  # the browser sends the text now
    assert teacher.session.tally.counts == {step.answer: 1}
    assert late.session.my_vote == step.answer and late.lessons.prediction == step.answer
    assert 'data-vote-counted="1"' in late.view.parts.status.object
    late.lessons.choices.value = step.choices[0]  # a changed mind
    assert teacher.session.tally.counts == {0: 1} and teacher.session.tally.answered == 1


def test_a_rejoining_student_sees_the_vote_kept_and_a_changed_vote_counts_once(store, room):
    code, teacher, (a, _, _) = room
    teacher.lessons.open(3)
    step = ALL_LESSONS[2]
    a.lessons.choices.value = 0
    # The replica died: the same browser (its student cookie) opens the class link again.
    again = Page(store)
    again.session.student_id = a.session.student_id
    UrlSync(
        again.state,
        FakeLocation(search=f"?class={code}"),
        [],
        lessons=again.lessons,
        classroom=again.view,
    )
    assert again.lessons.lesson == 3 and again.lessons.prediction == 0  # shown as made
    echo_labels(again)
    assert again.lessons.prediction == 0
    again.lessons.choices.value = step.choices[1]
    assert teacher.session.tally.counts == {1: 1} and again.session.my_vote == 1


def test_a_vote_that_is_not_an_answer_is_refused_in_words(room):
    code, teacher, (a, _, _) = room
    teacher.lessons.open(1)
    a.session.vote(1, "not an answer")
    assert a.session.problem and a.session.unsent == 0
    assert teacher.session.tally.answered == 0


def test_predictions_reach_the_teachers_chart_without_the_answer_until_revealed(room):
    code, teacher, (a, b, c) = room
    teacher.lessons.open(1)
    step = ALL_LESSONS[0]
    a.lessons.choices.value = step.answer
    b.lessons.choices.value = step.answer
    c.lessons.choices.value = (step.answer + 1) % len(step.choices)
    c.lessons.choices.value = step.answer  # a changed mind replaces the vote
    assert teacher.votes()[step.choices[step.answer]] == 3
    assert teacher.session.tally.answered == 3
    assert not any(teacher.view.chart.source.data["correct"])  # no answer marked yet
    assert teacher.view.parts.chart_pane.visible and not a.view.parts.chart_pane.visible
    assert 'data-vote-counted="1"' in a.view.parts.status.object
    teacher.view.teacher.reveal_button.clicks += 1
    assert a.view.parts.chart_pane.visible and a.votes() == teacher.votes()
    data = a.view.chart.source.data
    assert data["correct"] == [i == step.answer for i in range(len(step.choices))]


def test_measuring_reports_whether_the_prediction_was_borne_out(room):
    code, teacher, (a, b, _) = room
    teacher.lessons.open(1)
    step = ALL_LESSONS[0]
    a.lessons.choices.value = step.answer
    b.lessons.choices.value = (step.answer + 1) % len(step.choices)
    for s in (a, b):
        s.lessons.do_it.clicks += 1
        s.lessons.measure.clicks += 1
    teacher.view.teacher.reveal_button.clicks += 1
    tally = a.session.tally
    assert (tally.measured, tally.borne_out) == (2, 1)
    assert 'data-borne-out="1"' in a.view.parts.outcome.object


def test_a_student_page_has_no_teachers_controls_and_the_store_refuses_its_forgeries(room):
    code, teacher, (a, _, _) = room
    assert not a.view.parts.teacher_row.visible and not a.view.parts.teacher_more.visible
    assert a.view.parts.teacher_row.objects == [] and not hasattr(a.view, "reveal_button")
    a.session.teach_step(12)  # what a forged message could at most make the page do
    a.session.reveal()
    a.session.set_locked(True)
    info = teacher.session.store.info(code)
    assert info.revealed == frozenset() and not info.locked and info.step == 0


def test_the_join_panel_shows_the_code_the_address_and_a_qr(room):
    code, teacher, _ = room
    shown = {}

    class Template:
        modal = []

        def open_modal(self):
            shown["open"] = True

    teacher.view.attach(Template(), None)
    teacher.view._loaded = True
    teacher.view.teacher.show_code.clicks += 1
    text = teacher.view.parts.join_panel.object
    assert shown == {"open": True}
    assert f'data-class-code="{code}"' in text and "lab.school/app" in text
    assert f"http://lab.school/app?class={code}" in text and "<svg" in text


class Link(param.Parameterized):
    navigate = param.String(default="")
    in_class = param.Boolean(default=False)


def test_a_second_device_asks_the_teachers_page_and_no_secret_is_ever_shown(store, room):
    code, teacher, _ = room
    phone = Page(store)
    phone.view.join(code)
    link = Link()
    phone.view._link = link
    phone.view.parts.ask_button.clicks += 1
    pairing = phone.session.asking
    assert len(pairing) == 4 and f"data-pairing='{pairing}'" in phone.view.parts.status.object
    # The teacher's page (the projected one) shows the request with the pairing number only.
    shown = "".join(row.objects[0].object for row in teacher.view.parts.asks_box.objects)
    assert teacher.view.parts.asks_box.visible and pairing in shown
    assert "data-class-asking='1'" in teacher.view.parts.status.object  # the status line says so
    assert phone.session.student_id not in shown and "once=" not in shown
    approve = teacher.view.parts.asks_box.objects[0].objects[1]
    approve.clicks += 1
    assert not teacher.view.parts.asks_box.visible
    # The phone's page goes to the class route, which spends the approval for its own cookie.
    assert phone.session.approved and link.navigate == f"class/device?code={code}"
    key = store.take_approval(code, phone.session.student_id)
    second = Page(store, {code: key})
    second.view.join(code)
    assert second.session.is_teacher


def test_the_teacher_revokes_a_device_and_removes_a_seat_and_both_pages_say_so(store, room):
    code, teacher, students = room
    phone = Page(store)
    phone.view.join(code)
    phone.session.ask_to_teach()
    (ask,) = store.asks(code, teacher.session.key)
    store.answer_ask(code, teacher.session.key, ask.ref, True)
    second = Page(store, {code: store.take_approval(code, phone.session.student_id)})
    second.view.join(code)
    # The card reads devices and seats when opened.
    teacher.view.parts.teacher_more.collapsed = False
    assert "(this one)" in teacher.view.teacher.device_list.object
    assert len(teacher.view.teacher.device_pick.options) == 1
    teacher.view.teacher.device_revoke.clicks += 1
    assert second.session.role == "" and "no longer teaches" in second.session.problem
    # A seat: the list names nicknames, never ids; removing one takes that page out.
    teacher.view.teacher.seat_reload.clicks += 1
    seats = teacher.view.teacher.seat_list.options
    assert len(seats) == 4 and all(s.session.student_id not in str(seats) for s in students)
    target = students[0]
    teacher.view.teacher.seat_list.value = store_ref(target)
    teacher.view.teacher.seat_remove.clicks += 1
    assert target.session.role == "" and "took this seat" in target.session.problem
    assert len(teacher.view.teacher.seat_list.options) == 3
    assert [s.session.role for s in students[1:]] == ["student", "student"]


def test_the_teacher_shuts_the_door_and_sees_the_refusals(store, room):
    code, teacher, students = room
    teacher.view.parts.teacher_more.collapsed = False
    teacher.view.teacher.door.value = False
    assert not store.info(code).open and not students[0].session.open
    late = Page(store)
    assert not late.view.join(code) and "closed to newcomers" in late.session.problem
    assert students[0].view.join(code)  # seated: back at once
    teacher.view._draw_more()
    assert 'data-refused-closed="1"' in teacher.view.teacher.refused.object


def test_a_locked_students_page_refuses_a_next_its_browser_should_not_have_sent(room):
    code, teacher, students = room
    teacher.lessons.open(3)
    teacher.view.teacher.lock.value = True
    student = students[0]
    assert student.lessons.pinned and student.lessons.next.disabled
    student.lessons.next.clicks += 1  # a crafted click on the disabled button
    student.lessons.previous.clicks += 1
    assert student.lessons.lesson == 3


def store_ref(page) -> str:
    from app.classroom.store import seat_ref

    return seat_ref(page.session.student_id)


def test_the_address_carries_the_class_and_a_link_joins_it(store):
    code, _ = store.create()
    page = Page(store)
    location = FakeLocation(search=f"?class={code.lower()}")
    UrlSync(page.state, location, [], lessons=page.lessons, classroom=page.view)
    assert page.session.code == code and page.session.role == "student"
    assert f"class={code}" in location.search


def test_a_link_with_a_wrong_code_says_so_and_the_page_stays_a_lab(store):
    page = Page(store)
    location = FakeLocation(search="?class=AAAAAA&temperature=0.5")
    UrlSync(page.state, location, ["temperature"], lessons=page.lessons, classroom=page.view)
    assert page.session.code == "" and "no class AAAAAA" in page.view.parts.problem.object
    assert page.view.parts.problem.visible and page.state.temperature == 0.5


def test_a_closed_page_releases_its_seat_without_touching_its_models(store, room):
    """Issue #28: Lab.session_ended ran ClassSession.leave, whose updates redrew the closed
    page (its ClassLink's ReactiveHTML `data` was gone: a traceback per closed tab). The page's
    release (app/page/lab_page.py) stops hearing the class and changes nothing; the seat and its
    vote stay in the store."""
    code, teacher, (a, _, _) = room
    teacher.lessons.open(2)
    a.lessons.choices.value = 1
    changed = []
    a.session.param.watch(lambda e: changed.append(e.name), list(a.session.param))
    a.session.release()
    assert changed == []
    teacher.lessons.next.clicks += 1  # the class goes on without the closed page
    assert a.session.step == 2 and a.lessons.lesson == 2
    assert store.vote_of(code, a.session.student_id, 2) == 1


def test_vote_rows_follow_the_lessons_choices_and_captions_wrap():
    step = ALL_LESSONS[2]
    rows = vote_rows(3, None, mark_answer=True)
    assert rows["choice"] == list(step.choices) and rows["count"] == [0] * len(step.choices)
    assert sum(rows["correct"]) == 1 and rows["correct"][step.answer]
    long = caption("word " * 40)
    assert long.count("\n") == 1 and long.endswith("…")
