"""Pages in a class, without a browser: a teacher's and students' ClassSessions on one store."""

from __future__ import annotations

from session_queue import Thread
from waiting import wait_until

from app.classroom import codes
from app.classroom.redis_store import RedisStore
from app.classroom.session import ClassSession, teacher_keys
from tools.harness import RedisServer


def page(store, keys=None):
    thread = Thread()
    session = ClassSession(
        store, student_id=codes.new_student_id(), teacher_keys=keys, deliver=thread.deliver
    )
    return session, thread


def settle(*threads, until, what):
    def done():
        for t in threads:
            t.run()
        return until()

    wait_until(done, what, timeout=10)


def test_the_teacher_paces_and_every_student_hears_it(make_store):
    store = make_store()
    code, key = store.create()
    teacher, t_thread = page(store, {code: key})
    assert teacher.join(code) and teacher.role == "teacher"
    students = [page(make_store()) for _ in range(3)]  # other replicas, on Redis
    for s, _ in students:
        assert s.join(code) and s.role == "student"
    teacher.teach_step(5)
    threads = [t for _, t in students]
    settle(*threads, until=lambda: all(s.step == 5 for s, _ in students), what="step 5 everywhere")
    teacher.set_locked(True)
    settle(*threads, until=lambda: all(s.locked for s, _ in students), what="the lock")
    late, late_thread = page(make_store())
    late.join(code)
    assert late.step == 5 and late.locked  # a late student lands on the class's step


def test_votes_reach_the_teacher_and_a_changed_mind_counts_once(make_store):
    store = make_store()
    code, key = store.create()
    teacher, t_thread = page(store, {code: key})
    teacher.join(code)
    teacher.teach_step(2)
    teacher.show_step(2)
    a, a_thread = page(make_store())
    b, b_thread = page(make_store())
    for s in (a, b):
        s.join(code)
        s.show_step(2)
    a.vote(2, 1)
    assert a.my_vote == 1  # shown as counted only after the store has it
    b.vote(2, 0)
    b.vote(2, 2)
    settle(
        t_thread,
        until=lambda: teacher.tally is not None and teacher.tally.answered == 2,
        what="two answers at the teacher",
    )
    assert teacher.tally.counts == {1: 1, 2: 1} and teacher.tally.joined == 2
    a.report_measured(2, True)
    teacher.reveal()
    settle(a_thread, until=lambda: a.tally is not None and a.tally.revealed, what="the reveal")
    assert a.tally.measured == 1 and a.tally.borne_out == 1


def test_a_student_cannot_pace_or_reveal_whatever_the_page_sends(store):
    code, key = store.create()
    student, _ = page(store, {code: "forged-key"})  # a cookie that is not the teacher's
    student.join(code)
    assert student.role == "student"
    student.teach_step(9)
    student.reveal()
    student.set_locked(True)
    assert student.nicknames() == [] and student.seats() == [] and student.devices() == []
    assert not student.remove_seat("x") and not student.answer_ask("x", True)
    student.set_open(False)
    assert store.info(code).open
    info = store.info(code)
    assert (info.step, info.locked, info.revealed) == (0, False, frozenset())
    assert "teacher" in student.problem


def test_a_bad_code_and_an_ended_class_are_named(store):
    s, thread = page(store)
    assert not s.join("nope") and "6 letters" in s.problem
    assert not s.join("AAAAAA") and "no class" in s.problem and s.code == ""
    code, key = store.create()
    teacher, _ = page(store, {code: key})
    teacher.join(code)
    s.join(code)
    teacher.end()
    settle(thread, until=lambda: s.code == "", what="the student to leave the ended class")
    assert "ended" in s.problem


def test_teacher_keys_come_from_the_cookies():
    keys = teacher_keys({"alab_teach_ACEFHJ": "k1", "alab_teach_bad!": "k2", "other": "x"})
    assert keys == {"ACEFHJ": "k1"}


def test_a_vote_made_during_an_outage_is_sent_when_redis_is_back(tmp_path):
    server = RedisServer(tmp_path / "r", appendonly=True).start()
    store = RedisStore(server.url, retry_s=0.1)
    try:
        assert store.wait_connected(10)
        code, key = store.create()
        s, thread = page(store)
        s.join(code)
        s.show_step(1)
        server.kill()
        settle(thread, until=lambda: not s.connected, what="the page to hear of the outage")
        s.vote(1, 2)
        assert s.my_vote is None and s.unsent == 1 and "lost" in s.problem
        server.restart()
        settle(thread, until=lambda: s.my_vote == 2, what="the vote sent once Redis is back")
        assert s.connected and s.problem == "" and store.tally(code, 1).answered == 1
    finally:
        store.close()
        server.stop()


def test_a_refresh_that_finds_nothing_new_wakes_no_watcher(make_store):
    store = make_store()
    code, key = store.create()
    teacher, _ = page(store, {code: key})
    teacher.join(code)
    student, _ = page(store)
    student.join(code)
    teacher.teach_step(2)
    student.vote(2, 1)
    teacher.show_step(2)
    teacher.refresh()
    woke = []
    teacher.param.watch(lambda *events: woke.extend(e.name for e in events), list(teacher.param))
    teacher.refresh()  # the same class, read again: a new but equal Tally
    assert woke == []
    student.vote(2, 0)  # a changed mind is news
    teacher.refresh()
    assert woke == ["tally"] and teacher.tally.counts == {0: 1}


def test_the_teacher_sees_who_is_on_the_step_and_students_ignore_what_they_cannot_see(
    make_store,
):
    store = make_store()
    code, key = store.create()
    teacher, t_thread = page(store, {code: key})
    teacher.join(code)
    teacher.teach_step(2)
    teacher.show_step(2)
    students = [page(make_store()) for _ in range(3)]
    for s, _ in students:
        s.join(code)
    for s, _ in students[:2]:
        s.show_step(2)  # what a following page does when it lands on the step
    settle(
        t_thread,
        until=lambda: teacher.tally is not None and teacher.tally.arrived == 2,
        what="two students on step 2 at the teacher",
    )
    a, a_thread = students[0]
    a_thread.run()  # what it had heard so far
    reads = []
    real_read = a._read
    a._read = lambda info: reads.append(info) or real_read(info)
    b, b_thread = students[1]
    b.vote(2, 1)  # before the reveal a student's page shows no counts: it reads nothing
    students[2][0].show_step(2)
    late, _ = page(make_store())
    late.join(code)  # nor does it show how many joined
    settle(t_thread, until=lambda: teacher.tally.arrived == 3, what="three on step 2")
    a_thread.run()
    assert reads == []
    teacher.reveal()
    settle(
        a_thread,
        until=lambda: a.tally is not None and a.tally.revealed,
        what="the reveal at a student",
    )
    assert reads  # after it, the counts are the page's to show
    b.vote(2, 0)
    settle(a_thread, until=lambda: a.tally.counts == {0: 1}, what="a changed vote, revealed")


def test_a_students_page_reads_only_its_own_vote_until_the_reveal(make_store, monkeypatch):
    # Before the reveal a student's page shows no counts, so its read after each vote is the
    # class and its own vote; reading the step's whole tally there made every voter in a class
    # of 200 parse every vote. After the reveal it reads the tally, as the teacher does.
    store = make_store()
    code, key = store.create()
    teacher, _ = page(store, {code: key})
    teacher.join(code)
    teacher.teach_step(2)
    other, _ = page(store)
    other.join(code)
    other.vote(2, 0)
    me, _ = page(store)
    me.join(code)
    me.show_step(2)
    tallies = []
    real = store.tally_and_vote
    monkeypatch.setattr(
        store, "tally_and_vote", lambda *a: tallies.append(a[2]) or real(*a), raising=True
    )
    me.vote(2, 1)
    assert me.my_vote == 1 and me.tally is None and tallies == []
    me.vote(2, 2)
    assert me.my_vote == 2 and tallies == []
    teacher.reveal()
    me.refresh()
    assert tallies.count(me.student_id) == 1
    assert me.tally.revealed and me.tally.counts == {0: 1, 2: 1}
    assert me.my_vote == 2
