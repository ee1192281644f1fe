"""Seats that survive (issue #28): a student's seat (step, prediction, nickname) is bound to the
browser's student id, so a reload, a late join or a replica that died restores it, and every
vote a page shows as made is counted exactly once, whatever the order of join, Next, vote,
change, reload and lock.

A hypothesis state machine drives a teacher's and a few students' ClassSessions on each store
(on Redis, a real redis-server, with the teacher and each student page on replicas of their
own). A student page is modelled as the class view runs one: it follows the teacher's step
when its events are delivered (or when it joins), and shows as made the store's vote for the
step it shows (`my_vote`). A reload is a new ClassSession with the same student id, on any
replica. Events reach a page only when a rule delivers them, so votes, joins and reloads also
happen on pages that have not yet heard of the teacher's last Next. After every rule, once the
teacher's page has been delivered its events, its tally equals the students' last votes.
"""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from session_queue import Thread
from waiting import wait_until

from app.classroom import codes
from app.classroom.session import ClassSession

STUDENTS = 3
STEPS = 4
CHOICES = 3
_examples = itertools.count()


class StudentPage:
    def __init__(self, store, student_id: str, code: str, nickname: str):
        self.thread = Thread()
        self.session = ClassSession(store, student_id=student_id, deliver=self.thread.deliver)
        assert self.session.join(code, nickname), self.session.problem
        self.follow()

    def follow(self) -> None:
        """The class view's part: the page opens the class's step and shows its votes."""
        s = self.session
        if s.step and s.shown_step != s.step:
            s.show_step(s.step)

    def deliver(self) -> None:
        self.thread.run()
        self.follow()

    @property
    def shown(self) -> int:
        return self.session.shown_step

    def close(self) -> None:
        self.session.leave()  # the page's release (Lab.session_ended)


class Seats(RuleBasedStateMachine):
    stores: list = []  # the teacher's replica first, then the students' (set per store kind)

    @initialize()
    def start_class(self):
        store = self.stores[0]
        self.code, key = store.create(client=f"example-{next(_examples)}")
        self.thread = Thread()
        self.teacher = ClassSession(
            store,
            student_id=codes.new_student_id(),
            teacher_keys={self.code: key},
            deliver=self.thread.deliver,
        )
        assert self.teacher.join(self.code) and self.teacher.is_teacher
        self.ids = [codes.new_student_id() for _ in range(STUDENTS)]
        self.nicknames = [f"student {i}" for i in range(STUDENTS)]
        self.pages: dict[int, StudentPage] = {}
        self.joined: set[int] = set()
        self.votes: dict[int, dict[int, int]] = {i: {} for i in range(STUDENTS)}  # step -> choice
        self.step = 0
        self.locked = False

    def teardown(self):
        for page in getattr(self, "pages", {}).values():
            page.close()
        if hasattr(self, "teacher"):
            self.teacher.leave()

    # -- the teacher ---------------------------------------------------------------------

    @rule(step=st.integers(1, STEPS))
    def next_step(self, step):
        self.teacher.teach_step(step)
        self.teacher.show_step(step)
        self.step = step

    @rule(locked=st.booleans())
    def lock(self, locked):
        self.teacher.set_locked(locked)
        self.locked = locked

    # -- the students ----------------------------------------------------------------------

    @rule(student=st.integers(0, STUDENTS - 1), replica=st.integers(0, 1))
    def join_or_reload(self, student, replica):
        """A first join, a reload, or the class link opened again after a replica died: the
        same browser, so the same student id, on whichever replica the balancer picks."""
        old = self.pages.pop(student, None)
        if old is not None:
            old.close()
        store = self.stores[1 + replica % (len(self.stores) - 1)]
        # The nickname is typed once; a reload or a link opened again joins without one.
        nickname = "" if student in self.joined else self.nicknames[student]
        self.pages[student] = StudentPage(store, self.ids[student], self.code, nickname)
        self.joined.add(student)

    @precondition(lambda self: self.pages)
    @rule(data=st.data(), choice=st.integers(0, CHOICES - 1))
    def vote(self, data, choice):
        """The student picks (or changes) a prediction on the step the page shows."""
        student = data.draw(st.sampled_from(sorted(self.pages)))
        page = self.pages[student]
        if not page.shown:
            return  # no class step yet: the page offers no class vote
        page.session.vote(page.shown, choice)
        self.votes[student][page.shown] = choice

    @precondition(lambda self: self.pages)
    @rule(data=st.data(), choice=st.integers(0, CHOICES - 1))
    def change_vote(self, data, choice):
        """A changed mind (a second rule, so votes come as often as the rest)."""
        self.vote(data, choice)

    @precondition(lambda self: self.pages)
    @rule(data=st.data())
    def deliver_to_student(self, data):
        self.pages[data.draw(st.sampled_from(sorted(self.pages)))].deliver()

    # -- what must hold ------------------------------------------------------------------

    def expected(self, step: int) -> dict[int, int]:
        return dict(Counter(v[step] for v in self.votes.values() if step in v))

    @invariant()
    def every_shown_vote_counts_once(self):
        if not hasattr(self, "teacher"):
            return
        # Stored: each step's votes are the students' last choices, once each.
        for step in range(1, STEPS + 1):
            tally = self.teacher.store.tally(self.code, step)
            assert tally.counts == self.expected(step), (step, tally)
            assert tally.answered == sum(step in v for v in self.votes.values())
        # Shown to the teacher, once its page has been handed its events.
        if self.step:

            def heard():
                self.thread.run()
                tally = self.teacher.tally
                return tally is not None and tally.counts == self.expected(self.step)

            wait_until(heard, f"the teacher's chart to count step {self.step}'s votes", 10)
            assert self.teacher.locked == self.locked
        # Each student page shows as made the store's vote for its step: the last one chosen.
        for student, page in self.pages.items():
            shown = page.shown
            want = self.votes[student].get(shown) if shown else None
            assert page.session.my_vote == want, (student, shown, page.session.my_vote, want)
            assert page.session.unsent == 0 and page.session.problem == ""
        # The seat's nickname, typed once, is kept through reloads; one seat per browser.
        names = sorted(self.nicknames[i] for i in self.joined)
        assert self.teacher.nicknames() == names
        assert self.teacher.store.info(self.code).students == len(self.joined)


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_every_vote_a_page_shows_as_made_is_counted_once(kind, request):
    if kind == "memory":
        from app.classroom.memory import MemoryStore

        one = MemoryStore()
        stores = [one, one, one]
    else:
        from app.classroom.redis_store import RedisStore

        url = request.getfixturevalue("redis_url")
        stores = [RedisStore(url) for _ in range(3)]  # the teacher's replica and two more
        for store in stores:
            assert store.wait_connected(10), "the Redis store never connected"
    machine = type(f"Seats_{kind}", (Seats,), {"stores": stores})
    try:
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=60 if kind == "memory" else 20,
                stateful_step_count=25,
                deadline=None,
                suppress_health_check=[HealthCheck.too_slow],
                database=None,
            ),
        )
    finally:
        if kind == "redis":
            for store in stores:
                store.close()
