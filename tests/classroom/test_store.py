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


def test_one_browsers_typos_never_lock_out_a_classmate_on_the_same_address(store):
    # A whole class shares the school's address: the wrong-code limit is per browser.
    code, _ = store.create()
    typist, classmate, seated = student(), student(), student()
    store.join(code, seated, client="10.0.0.7")
    for _ in range(rules.JOIN_FAILURES_PER_BROWSER):
        with pytest.raises(UnknownClass):
            store.join("AAAAAA", typist, client="10.0.0.7")
    with pytest.raises(RateLimited, match="from this browser"):
        store.join(code, typist, client="10.0.0.7")  # even the right code, for now
    assert store.join(code, classmate, client="10.0.0.7").students == 2
    assert store.join(code, seated, client="10.0.0.7").students == 2  # back, never refused


def test_a_script_dropping_its_cookie_meets_the_addresss_ceiling(store, monkeypatch):
    monkeypatch.setattr(rules, "JOIN_FAILURES_PER_ADDRESS", 25)
    code, _ = store.create()
    seated = student()
    store.join(code, seated, client="10.0.0.9")
    for _ in range(25):  # a fresh browser id per guess
        with pytest.raises(UnknownClass):
            store.join("AAAAAA", student(), client="10.0.0.9")
    with pytest.raises(RateLimited, match="from this network"):
        store.join(code, student(), client="10.0.0.9")
    assert store.join(code, seated, client="10.0.0.9")  # a seated student is never refused
    assert store.join(code, student(), client="10.0.0.10")  # another address is untouched


def test_class_starts_are_limited_per_browser_with_a_ceiling_per_address(store, monkeypatch):
    monkeypatch.setattr(rules, "CREATES_PER_BROWSER", 3)
    monkeypatch.setattr(rules, "CREATES_PER_ADDRESS", 6)
    eager = student()
    for _ in range(3):
        store.create(client="10.1.0.1", browser=eager)
    with pytest.raises(RateLimited, match="from this browser"):
        store.create(client="10.1.0.1", browser=eager)
    assert store.create(client="10.1.0.1", browser=student())  # the teacher next door
    for _ in range(2):
        store.create(client="10.1.0.1", browser=student())
    with pytest.raises(RateLimited, match="from this network"):
        store.create(client="10.1.0.1", browser=student())
    # Without the lab's cookie a client shares one bucket per address, and no browser's.
    assert store.create(client="10.1.0.2")


def test_the_teacher_sees_what_was_refused_and_why(store, monkeypatch):
    monkeypatch.setattr(rules, "NEW_SEATS_PER_ADDRESS", 2)
    code, key = store.create(client="10.2.0.1")
    for _ in range(3):
        with pytest.raises(UnknownClass):
            store.join("AAAAAA", student(), client="10.2.0.1")
    store.join(code, student(), client="10.2.0.1")
    store.join(code, student(), client="10.2.0.1")
    with pytest.raises(RateLimited, match="new seats"):
        store.join(code, student(), client="10.2.0.1")
    store.set_open(code, key, False)
    with pytest.raises(ClassError, match="closed to newcomers"):
        store.join(code, student(), client="10.2.0.3")
    refused = store.refusals(code, key, client="10.2.0.1")
    assert refused == {"wrong codes": 3, "closed": 1, "full": 0, "seats": 1}
    with pytest.raises(NotAllowed):
        store.refusals(code, "forged")


def test_a_closed_door_keeps_newcomers_out_and_lets_the_seated_back(store):
    code, key = store.create()
    seated = student()
    store.join(code, seated)
    store.set_open(code, key, False)
    assert not store.info(code).open
    with pytest.raises(ClassError, match="closed"):
        store.join(code, student())
    assert store.join(code, seated).students == 1
    store.set_open(code, key, True)
    assert store.join(code, student()).students == 2


def test_the_teacher_removes_a_seat_with_its_votes_and_it_cannot_rejoin(store):
    code, key = store.create()
    keep, junk = student(), student()
    store.join(code, keep, nickname="Ana")
    store.join(code, junk, nickname="spam")
    store.vote(code, keep, 1, 0)
    store.vote(code, junk, 1, 2)
    heard = Heard()
    store.subscribe(code, heard)
    seats = store.seats(code, key)
    assert [s.nickname for s in seats] == ["Ana", "spam"] and all(s.active for s in seats)
    assert all(keep not in s.ref and junk not in s.ref for s in seats)  # no id is shown
    assert store.remove_seat(code, key, rules.seat_ref(junk))
    heard.wait_for("seat")
    assert store.tally(code, 1).counts == {0: 1} and store.info(code).students == 1
    assert not store.seated(code, junk)
    with pytest.raises(NotAllowed, match="took this seat"):
        store.join(code, junk)
    with pytest.raises(NotAllowed, match="join the class first"):
        store.vote(code, junk, 1, 1)
    with pytest.raises(NotAllowed):
        store.remove_seat(code, "forged", rules.seat_ref(keep))


def test_joined_and_on_it_count_recently_active_seats(store, monkeypatch):
    code, key = store.create()
    idle, busy = student(), student()
    store.join(code, idle)
    store.join(code, busy)
    store.arrived(code, idle, 1)
    store.arrived(code, busy, 1)
    assert store.info(code).students == 2 and store.tally(code, 1).arrived == 2
    # Half an hour later only the page that did something since is counted.
    clock = store._now() + rules.ACTIVE_S + 5
    monkeypatch.setattr(type(store), "_now", lambda self: clock)
    later = getattr(store, "_clock", None)
    if later is not None:  # the in-process store reads its own clock
        monkeypatch.setattr(store, "_clock", lambda: clock)
    else:
        import time as time_module

        real = time_module.time
        monkeypatch.setattr(
            "app.classroom.redis_store.time.time", lambda: real() + rules.ACTIVE_S + 5
        )
    store.arrived(code, busy, 1)
    assert store.info(code).students == 1 and store.tally(code, 1).arrived == 1
    assert [s.active for s in store.seats(code, key)] == [True, False]


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


def test_a_second_device_teaches_once_the_teacher_approves_its_pairing_number(store):
    code, key = store.create()
    phone, stranger = student(), student()
    with pytest.raises(NotAllowed, match="join the class first"):
        store.ask_to_teach(code, phone)
    store.join(code, phone)
    store.join(code, stranger)
    heard = Heard()
    store.subscribe(code, heard)
    pairing = store.ask_to_teach(code, phone)
    assert len(pairing) == 4 and pairing.isdigit()
    assert store.ask_to_teach(code, phone) == pairing  # asking twice is one request
    heard.wait_for("device")
    (ask,) = store.asks(code, key)
    assert ask.pairing == pairing and phone not in ask.ref
    assert store.ask_state(code, phone) == (pairing, "ask")
    with pytest.raises(NotAllowed, match="not approved"):
        store.take_approval(code, phone)  # not before the teacher says yes
    with pytest.raises(NotAllowed):
        store.answer_ask(code, "forged", ask.ref, True)
    assert store.answer_ask(code, key, ask.ref, True)
    with pytest.raises(NotAllowed):
        store.take_approval(code, stranger)  # the approval is the asking browser's alone
    second = store.take_approval(code, phone)
    assert store.is_teacher(code, second) and second != key
    with pytest.raises(NotAllowed):
        store.take_approval(code, phone)  # spent
    devices = store.devices(code, key)
    assert [d.mine for d in devices] == [True, False] or [d.mine for d in devices] == [False, True]
    assert all(key not in d.ref and second not in d.ref for d in devices)
    # The teacher revokes the second device (never the one in hand).
    (mine,) = [d for d in devices if d.mine]
    with pytest.raises(NotAllowed, match="you are using"):
        store.revoke_device(code, key, mine.ref)
    (other,) = [d for d in devices if not d.mine]
    assert store.revoke_device(code, key, other.ref)
    assert not store.is_teacher(code, second) and store.is_teacher(code, key)


def test_a_refused_device_and_a_crowd_of_asking_devices(store):
    code, key = store.create()
    asking = [student() for _ in range(rules.MAX_ASKS + 1)]
    for s in asking:
        store.join(code, s)
    for s in asking[:-1]:
        store.ask_to_teach(code, s)
    with pytest.raises(RateLimited, match="too many devices"):
        store.ask_to_teach(code, asking[-1])
    first = store.asks(code, key)[0]
    assert store.answer_ask(code, key, first.ref, False)
    assert len(store.asks(code, key)) == rules.MAX_ASKS - 1
    assert store.ask_to_teach(code, asking[-1])  # room again


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
