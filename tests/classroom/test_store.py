"""The class store's rules, held to the same tests on the in-process and the Redis store."""

from __future__ import annotations

import threading

import pytest
from waiting import wait_until

from app.classroom import codes
from app.classroom import store as rules
from app.classroom.shared import open_store
from app.classroom.store import ClassError, NotAllowed, RateLimited, UnknownClass


def student() -> str:
    return codes.new_student_id()


class Heard:
    """A subscriber that records its events (from whichever thread the store delivers on)."""

    def __init__(self):
        self.events, self._lock = [], threading.Lock()

    def __call__(self, event):
        with self._lock:
            self.events.append(event)

    def kinds(self):
        with self._lock:
            return [(e.kind, e.step) for e in self.events]

    def wait_for(self, kind, step=None):
        return wait_until(
            lambda: any(k == kind and (step is None or s == step) for k, s in self.kinds()),
            f"a {kind!r} event (heard {self.kinds()})",
            timeout=10,
        )


def test_a_new_class_has_a_legible_code_and_a_teacher_key(store):
    code, key = store.create()
    assert len(code) == codes.LENGTH and set(code) <= set(codes.ALPHABET)
    assert not set(code) & set("0O1IL2Z5S8BGUVDQ")
    assert store.is_teacher(code, key)
    assert not store.is_teacher(code, "not-the-key") and not store.is_teacher(code, None)
    info = store.info(code)
    assert (info.step, info.locked, info.students, info.revealed) == (0, False, 0, frozenset())


def test_codes_are_read_as_a_person_types_them(store):
    code, _ = store.create()
    typed = f" {code[:3].lower()}-{code[3:]} "
    info = store.join(typed, student())
    assert info.code == code and info.students == 1


def test_joining_a_class_that_does_not_exist_says_so(store):
    with pytest.raises(UnknownClass, match="no class"):
        store.join("AAAAAA", student())
    with pytest.raises(UnknownClass, match="6 letters and digits"):
        store.join("hello!", student())


def test_guessing_codes_is_cut_off_per_client_and_only_for_that_client(store):
    code, _ = store.create()
    for _ in range(rules.JOIN_FAILURES_PER_WINDOW):
        with pytest.raises(UnknownClass):
            store.join("AAAAAA", student(), client="10.0.0.7")
    with pytest.raises(RateLimited, match="too many wrong codes"):
        store.join(code, student(), client="10.0.0.7")  # even the right code, for now
    assert store.join(code, student(), client="10.0.0.8").students == 1


def test_a_student_who_comes_back_is_the_same_student(store):
    code, _ = store.create()
    me = student()
    store.join(code, me)
    store.join(code, me)
    assert store.info(code).students == 1
    store.vote(code, me, 3, 1)
    store.join(code, me)  # a reload after a replica died
    store.vote(code, me, 3, 1)
    assert store.tally(code, 3).answered == 1


def test_one_vote_per_student_per_step_and_a_changed_mind_replaces_it(store):
    code, _ = store.create()
    a, b, c = student(), student(), student()
    for s in (a, b, c):
        store.join(code, s)
    store.vote(code, a, 2, 0)
    store.vote(code, b, 2, 0)
    store.vote(code, c, 2, 1)
    store.vote(code, b, 2, 2)  # b changes their mind
    store.vote(code, a, 3, 1)  # another step is another vote
    tally = store.tally(code, 2)
    assert (tally.joined, tally.answered, tally.counts) == (3, 3, {0: 1, 1: 1, 2: 1})
    assert store.tally(code, 3).counts == {1: 1}
    assert store.vote_of(code, b, 2) == 2 and store.vote_of(code, c, 3) is None


def test_results_count_who_measured_and_whose_prediction_held(store):
    code, _ = store.create()
    a, b = student(), student()
    store.join(code, a)
    store.join(code, b)
    store.measured(code, a, 4, True)
    store.measured(code, b, 4, False)
    store.measured(code, b, 4, True)  # measured again after another try
    tally = store.tally(code, 4)
    assert (tally.measured, tally.borne_out) == (2, 2)


def test_only_the_teacher_paces_reveals_or_reads_nicknames(store):
    code, key = store.create()
    me = student()
    store.join(code, me, nickname="  Ana   B ")
    store.join(code, student())
    for forged in (None, "", me, "x" * 500, codes.new_secret()):
        with pytest.raises(NotAllowed):
            store.set_step(code, forged, 5)
        with pytest.raises(NotAllowed):
            store.reveal(code, forged, 5)
        with pytest.raises(NotAllowed):
            store.nicknames(code, forged)
        with pytest.raises(NotAllowed):
            store.end(code, forged)
    assert store.info(code).step == 0
    store.set_step(code, key, 5, locked=True)
    store.reveal(code, key, 5)
    info = store.info(code)
    assert (info.step, info.locked, info.revealed) == (5, True, frozenset({5}))
    assert store.tally(code, 5).revealed
    assert store.nicknames(code, key) == ["Ana B"]
    store.set_locked(code, key, False)
    assert not store.info(code).locked


def test_a_teachers_key_for_one_class_is_nothing_in_another(store):
    one, key_one = store.create()
    two, _ = store.create()
    with pytest.raises(NotAllowed):
        store.set_step(two, key_one, 2)
    assert store.is_teacher(one, key_one)


def test_malformed_messages_are_refused_by_name(store):
    code, _ = store.create()
    me = student()
    store.join(code, me)
    with pytest.raises(ClassError, match="step must be"):
        store.vote(code, me, 0, 1)
    with pytest.raises(ClassError, match="step must be"):
        store.vote(code, me, "3", 1)
    with pytest.raises(ClassError, match="choice must be"):
        store.vote(code, me, 3, rules.MAX_CHOICES)
    with pytest.raises(ClassError, match="choice must be"):
        store.vote(code, me, 3, True)
    with pytest.raises(ClassError, match="student id"):
        store.vote(code, "me", 3, 1)
    with pytest.raises(NotAllowed, match="join the class first"):
        store.vote(code, student(), 3, 1)
    with pytest.raises(ClassError, match="at most"):
        store.join(code, student(), nickname="n" * (rules.MAX_NICKNAME + 1))
    with pytest.raises(ClassError, match="printable"):
        store.join(code, student(), nickname="a\x1b[2Jb")
    assert store.tally(code, 3).answered == 0


def test_a_student_sending_too_fast_is_slowed(store):
    code, _ = store.create()
    me = student()
    store.join(code, me)
    for i in range(rules.MESSAGES_PER_MINUTE):
        store.vote(code, me, 1, i % 2)
    with pytest.raises(RateLimited):
        store.vote(code, me, 1, 0)
    assert store.tally(code, 1).answered == 1


def test_a_second_device_joins_with_a_link_that_works_once(store):
    code, key = store.create()
    once = store.device_link(code, key)
    second = store.redeem(code, once)
    assert store.is_teacher(code, second) and second != key
    with pytest.raises(NotAllowed, match="used already"):
        store.redeem(code, once)
    with pytest.raises(NotAllowed):
        store.device_link(code, "forged")


def test_ending_a_class_deletes_it_with_its_nicknames(store):
    code, key = store.create()
    store.join(code, student(), nickname="Ana")
    store.end(code, key)
    with pytest.raises(UnknownClass):
        store.info(code)
    with pytest.raises(UnknownClass):
        store.nicknames(code, key)


def test_every_replica_hears_every_change(make_store):
    here, there = make_store(), make_store()  # two replicas on one Redis (one store in memory)
    code, key = here.create()
    heard = Heard()
    there.subscribe(code, heard)
    me = student()
    here.join(code, me)
    here.set_step(code, key, 7)
    here.vote(code, me, 7, 2)
    here.reveal(code, key, 7)
    heard.wait_for("reveal", 7)
    assert heard.kinds() == [("join", 0), ("step", 7), ("vote", 7), ("reveal", 7)]
    assert there.tally(code, 7).counts == {2: 1}


def test_a_closed_subscription_hears_nothing_more(store):
    code, key = store.create()
    heard, marker = Heard(), Heard()
    sub = store.subscribe(code, heard)
    store.subscribe(code, marker)
    store.set_step(code, key, 1)
    heard.wait_for("step", 1)
    sub.close()
    store.set_step(code, key, 2)
    marker.wait_for("step", 2)  # the change has been delivered by now
    assert heard.kinds() == [("step", 1)]


def test_a_class_of_200_voting_at_once_counts_200(make_store):
    stores = [make_store() for _ in range(3)]
    code, key = stores[0].create()
    store_of = {}
    students = [student() for _ in range(200)]
    for i, s in enumerate(students):
        store_of[s] = stores[i % 3]
        store_of[s].join(code, s)
    stores[0].set_step(code, key, 9)

    def vote(chunk):
        for s in chunk:
            store_of[s].vote(code, s, 9, hash(s) % 3)

    threads = [threading.Thread(target=vote, args=(students[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    tally = stores[1].tally(code, 9)
    assert (tally.joined, tally.answered, sum(tally.counts.values())) == (200, 200, 200)


def test_an_idle_class_expires_with_its_data(make_store):
    short = make_store(idle_s=1)
    code, key = short.create()
    short.join(code, student(), nickname="Ana")
    wait_until(lambda: not short.is_teacher(code, key), "the idle class to expire", timeout=10)
    with pytest.raises(UnknownClass):
        short.info(code)


def test_open_store_names_a_url_it_cannot_use():
    assert open_store("").name == "memory" and open_store("memory").name == "memory"
    with pytest.raises(ValueError, match="redis://host:port/db"):
        open_store("postgres://somewhere")


def test_the_teacher_counts_the_students_whose_page_shows_the_step(make_store):
    store = make_store()
    code, key = store.create()
    heard = Heard()
    store.subscribe(code, heard)
    a, b, c = student(), student(), student()
    for s in (a, b, c):
        store.join(code, s)
    store.set_step(code, key, 3)
    assert store.tally(code, 3).arrived == 0
    assert store.arrived(code, a, 3) and store.arrived(code, b, 3)
    heard.wait_for("arrived", 3)
    other = make_store()  # another replica on Redis
    assert other.tally(code, 3).arrived == 2
    store.arrived(code, b, 4)  # moved on: counted on 4, no longer on 3
    assert (other.tally(code, 3).arrived, other.tally(code, 4).arrived) == (1, 1)
    with pytest.raises(NotAllowed):
        store.arrived(code, student(), 3)  # not in the class
    with pytest.raises(ClassError):
        store.arrived(code, a, 0)


def test_a_page_flicking_through_steps_is_not_counted_beyond_the_limit(store):
    code, _ = store.create()
    me = student()
    store.join(code, me)
    sent = [store.arrived(code, me, 1 + i % 20) for i in range(rules.ARRIVALS_PER_MINUTE + 5)]
    assert sent.count(True) == rules.ARRIVALS_PER_MINUTE and not any(sent[-5:])
    store.vote(code, me, 2, 1)  # votes have their own allowance
    assert store.vote_of(code, me, 2) == 1


def test_a_steps_tally_and_a_students_vote_come_from_one_read(store):
    code, key = store.create()
    a, b = student(), student()
    store.join(code, a)
    store.join(code, b)
    store.set_step(code, key, 2)
    store.vote(code, a, 2, 1)
    store.measured(code, a, 2, True)
    store.arrived(code, a, 2)
    store.reveal(code, key, 2)
    tally, mine = store.tally_and_vote(code, 2, a)
    assert tally == store.tally(code, 2) and mine == store.vote_of(code, a, 2) == 1
    assert (tally.revealed, tally.arrived, tally.borne_out) == (True, 1, 1)
    assert store.tally_and_vote(code, 2, b)[1] is None  # b has not voted
    assert store.tally_and_vote(code, 3, None) == (store.tally(code, 3), None)
    store.end(code, key)
    with pytest.raises(UnknownClass):
        store.tally_and_vote(code, 2, a)
    with pytest.raises(UnknownClass):
        store.info(code)
