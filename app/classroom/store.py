"""The class store: one interface, an in-process implementation and a Redis one.

Every rule lives here, once: who may pace or reveal (the holder of a teacher key, checked
against its digest), what a well-formed message is, how fast a client may try codes or vote.
The implementations only keep and fetch (app/classroom/memory.py, redis_store.py), so the same
tests hold both to the same behaviour (tests/classroom/).

A change (a step set, a vote, a reveal) is published as an `Event` to every subscriber of the
class, on every replica for the Redis store. A subscriber's callback runs on whichever thread
the store delivers on: a page must hand it to its own session (app/views/class_panel.py).
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from app.classroom import codes
from app.i18n.markers import N_
from app.i18n.said import Said
from engine.messages import Problem

# A class nobody has touched for this long is deleted with everything in it.
IDLE_S = 12 * 3600
# A school's class reaches the lab from one NAT address, so every limit on wrong codes and new
# classes is kept per browser (its student id, an HttpOnly cookie of the lab's own) with a
# ceiling per address sized for a whole school: one student's typos never reach a classmate,
# and a script that drops its cookies still meets the address's ceiling. At 300 guesses per
# ten minutes an address tries 0.0007% of the 64 million codes a day.
JOIN_FAILURES_PER_BROWSER = 10
JOIN_FAILURES_PER_ADDRESS = 300
JOIN_WINDOW_S = 600
# Classes one browser, and one address, may start per hour.
CREATES_PER_BROWSER = 20
CREATES_PER_ADDRESS = 200
# New seats one address may take in one class per window: a room of 200 joins in a few minutes;
# a script that mints a seat per request is stopped well before it fills the class.
NEW_SEATS_PER_ADDRESS = 250
NEW_SEATS_WINDOW_S = 600
# A seat counts as "joined" (and "on it") while its page has done something this recently:
# joined, voted, measured or opened a step (every Next makes a following page report).
ACTIVE_S = 20 * 60
# Seats kept per class at most (active or not): the store's memory stays bounded.
MAX_SEATS = 1000
# Devices that may ask to teach a class at once, and how long an answer waits.
MAX_ASKS = 5
# What a class's refused joins are counted by, for its teacher.
REFUSAL_REASONS = ("closed", "full", "seats")
# Votes and results one student may send per minute (a changed mind included).
MESSAGES_PER_MINUTE = 60
# Steps one student's page may report it shows, per minute (a class steps far slower).
ARRIVALS_PER_MINUTE = 120
MAX_STUDENTS = 500
MAX_STEP = 99
MAX_CHOICES = 8
MAX_NICKNAME = 24
# How long a device's request to teach waits for the teacher, and its approval for the device.
DEVICE_ASK_S = 600

log = logging.getLogger("attention_lab.classroom")

# Words the store says more than once, translated where a page shows them (app/i18n/).
ENDED = N_("there is no class {code} (it may have ended)")
FULL = N_("class {code} is full ({most} students)")
# A teacher's device, as the teacher's More card lists it. The store keeps a device's pairing
# number ('' for the device that started the class), never its label: each teacher's page
# writes the label in its own language.
STARTED_DEVICE = N_("The device that started it")
# TRANSLATORS: a device the teacher approved; {pairing} is the four-digit number it showed.
ASKED_DEVICE = N_("A device that asked ({pairing})")
ANY_DEVICE = N_("A teacher's device")


class ClassError(Problem):
    """A request the store refuses; the message names why, in words for the page. A `Problem`
    (a ValueError): its English template and values are translated where a page shows it."""


class UnknownClass(ClassError):
    pass


class NotAllowed(ClassError):
    pass


class RateLimited(ClassError):
    pass


class StoreUnavailable(ClassError):
    """The store cannot be reached now (Redis down); the page keeps working as a single lab."""


@dataclass(frozen=True)
class ClassInfo:
    code: str
    step: int  # 1-based lesson step, 0 before the teacher opens one
    locked: bool
    revealed: frozenset[int]
    students: int  # seats active within ACTIVE_S
    open: bool = True  # newcomers may join


@dataclass(frozen=True)
class Seat:
    """A seat as the teacher sees it: `ref` names it without its student id (a credential)."""

    ref: str
    nickname: str
    active: bool


@dataclass(frozen=True)
class Device:
    """A teacher's device: `ref` names it without its key; `mine` is the device asking."""

    ref: str
    label: Said  # in the teacher's language where shown: `label.text(tr)`
    mine: bool


@dataclass(frozen=True)
class Ask:
    """A device asking to teach: the teacher compares `pairing` with the device's screen."""

    ref: str
    pairing: str


@dataclass(frozen=True)
class Tally:
    """A step's votes. `counts` maps a choice's index to its votes; `borne_out` counts the
    students whose measurement bore their prediction out, of `measured` who measured."""

    step: int
    joined: int
    answered: int
    counts: dict[int, int] = field(default_factory=dict)
    measured: int = 0
    borne_out: int = 0
    revealed: bool = False
    arrived: int = 0  # students whose page shows this step now


@dataclass(frozen=True)
class Event:
    """What changed: kind is "step", "vote", "measured", "reveal", "join", "arrived" (a
    student's page now shows `step`), "seat" (the teacher removed one), "device" (a device
    asked to teach, was answered, added or revoked), "ended", or "connection" (the store lost or regained its
    backend; `step` is 1 when connected)."""

    code: str
    kind: str
    step: int = 0


Callback = Callable[[Event], None]


class Subscription:
    def __init__(self, store: ClassStore, code: str, callback: Callback):
        self._store, self.code, self.callback = store, code, callback

    def close(self) -> None:
        self._store._unsubscribe(self)


def _who(client: str) -> str:
    """A client's address (or browser id) as a rate limit's key: a digest, so none is kept."""
    return codes.digest(str(client)[:200])[:24]


def _browser(browser: str, client: str) -> str:
    """A browser's limit key: its id, or (a client that keeps no cookie) its address's
    cookie-less bucket, which no browser with the lab's cookie shares."""
    if codes.is_student_id(browser):
        return "b:" + _who(browser)
    return "nb:" + _who(client)


def seat_ref(student: str) -> str:
    return codes.digest("seat:" + student)[:12]


def device_ref(key_digest: str) -> str:
    return codes.digest("device:" + key_digest)[:12]


def device_label(pairing: str | None) -> Said:
    """A teacher's device in words, from what the store keeps of it (its pairing number)."""
    if pairing == "":
        return Said(STARTED_DEVICE)
    return (
        Said(ASKED_DEVICE, pairing=pairing) if pairing and pairing.isdigit() else Said(ANY_DEVICE)
    )


def check_step(step) -> int:
    if isinstance(step, bool) or not isinstance(step, int) or not 1 <= step <= MAX_STEP:
        raise ClassError(
            N_("step must be a whole number from 1 to {most}, not {given}"),
            most=MAX_STEP,
            given=repr(step),
        )
    return step


def check_choice(choice) -> int:
    if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < MAX_CHOICES:
        raise ClassError(
            N_("a choice must be a number from 0 to {most}, not {given}"),
            most=MAX_CHOICES - 1,
            given=repr(choice),
        )
    return choice


def check_student(student) -> str:
    if not codes.is_student_id(student):
        raise ClassError(N_("that is not a student id this lab hands out"))
    return student


def clean_nickname(nickname) -> str:
    """Printable text, at most MAX_NICKNAME characters; anything else is refused."""
    if nickname is None:
        return ""
    if not isinstance(nickname, str):
        raise ClassError(N_("a nickname must be text"))
    text = " ".join(nickname.split())
    if len(text) > MAX_NICKNAME:
        raise ClassError(N_("a nickname has at most {most} characters"), most=MAX_NICKNAME)
    if any(not c.isprintable() for c in text):
        raise ClassError(N_("a nickname must be printable text"))
    return text


def check_code(code) -> str:
    normal = codes.normalize(code) if isinstance(code, str) else None
    if normal is None:
        raise UnknownClass(
            N_("a class code is {length} letters and digits, such as {example}"),
            length=codes.LENGTH,
            example=codes.ALPHABET[:6],
        )
    return normal


class ClassStore:
    """The rules; subclasses implement the underscored keep-and-fetch methods."""

    name = "store"

    def __init__(self) -> None:
        self._subscribers: dict[str, list[Subscription]] = {}
        self._sub_lock = threading.Lock()

    # -- the teacher ------------------------------------------------------------------------

    def create(self, client: str = "", browser: str = "") -> tuple[str, str]:
        """A new class: (its code, the teacher's key). The key's digest is all that is kept."""
        mine, address = f"create:{_browser(browser, client)}", f"create:a:{_who(client)}"
        if not self._hit(mine, CREATES_PER_BROWSER, 3600, peek=True):
            raise RateLimited(N_("too many classes started from this browser in the last hour"))
        if not self._hit(address, CREATES_PER_ADDRESS, 3600):
            raise RateLimited(N_("too many classes started from this network in the last hour"))
        self._hit(mine, CREATES_PER_BROWSER, 3600)
        key = codes.new_secret()
        for _ in range(20):
            code = codes.new_code()
            if self._create(code, codes.digest(key)):
                self._map_set(code, "devices", codes.digest(key), "")
                return code, key
        raise ClassError(N_("could not find a free class code; try again"))

    def is_teacher(self, code: str, key: str | None) -> bool:
        try:
            code = check_code(code)
        except ClassError:
            return False
        return codes.same(key, self._teacher_digests(code))

    def _require_teacher(self, code: str, key: str | None) -> str:
        code = check_code(code)
        if not self._exists(code):
            raise UnknownClass(ENDED, code=code)
        if not codes.same(key, self._teacher_digests(code)):
            raise NotAllowed(N_("only the class's teacher can do that"))
        return code

    def set_step(self, code: str, key: str | None, step: int, *, locked: bool | None = None):
        code = self._require_teacher(code, key)
        self._set(code, step=check_step(step), locked=locked)
        self._publish(Event(code, "step", step))

    def set_locked(self, code: str, key: str | None, locked: bool) -> None:
        code = self._require_teacher(code, key)
        self._set(code, step=None, locked=bool(locked))
        self._publish(Event(code, "step", self._info(code).step))

    def set_open(self, code: str, key: str | None, open_: bool) -> None:
        """Let newcomers join, or not (seated students always come back)."""
        code = self._require_teacher(code, key)
        if open_:
            self._map_del(code, "flags", "closed")
        else:
            self._map_set(code, "flags", "closed", "1")
        self._publish(Event(code, "step", self._info(code).step))

    def reveal(self, code: str, key: str | None, step: int) -> None:
        code = self._require_teacher(code, key)
        self._reveal(code, check_step(step))
        self._publish(Event(code, "reveal", step))

    def nicknames(self, code: str, key: str | None) -> list[str]:
        code = self._require_teacher(code, key)
        return sorted(n for n in self._nicknames(code) if n)

    def seats(self, code: str, key: str | None) -> list[Seat]:
        """Every seat, active ones first, each named by nickname (or none) and a reference."""
        code = self._require_teacher(code, key)
        recent = self._now() - ACTIVE_S
        seen = self._seen_all(code)
        seats = [
            Seat(seat_ref(student), nickname, seen.get(student, 0) >= recent)
            for student, nickname in self._students(code).items()
        ]
        return sorted(seats, key=lambda s: (not s.active, s.nickname == "", s.nickname, s.ref))

    def remove_seat(self, code: str, key: str | None, ref: str) -> bool:
        """Take a seat away with its votes; that browser cannot join this class again."""
        code = self._require_teacher(code, key)
        for student in self._students(code):
            if seat_ref(student) == ref:
                self._drop_student(code, student)
                self._map_set(code, "removed", student, "1")
                self._publish(Event(code, "seat"))
                return True
        return False

    def refusals(self, code: str, key: str | None, client: str = "") -> dict[str, int]:
        """What was refused lately, by reason: wrong codes from the teacher's own network in
        the last ten minutes, and this class's refused joins in the last hour."""
        code = self._require_teacher(code, key)
        counts = {"wrong codes": self._count(f"join:a:{_who(client)}")}
        for reason in REFUSAL_REASONS:
            counts[reason] = self._count(f"refused:{code}:{reason}")
        return counts

    def _refused(self, code: str, reason: str) -> None:
        self._hit(f"refused:{code}:{reason}", 1 << 30, 3600)

    # -- the teacher's devices ----------------------------------------------------------------

    def devices(self, code: str, key: str | None) -> list[Device]:
        code = self._require_teacher(code, key)
        labels = self._map_all(code, "devices")
        mine = codes.digest(key)
        return [
            Device(device_ref(d), device_label(labels.get(d)), d == mine)
            for d in sorted(self._teacher_digests(code), key=lambda d: labels.get(d, ""))
        ]

    def revoke_device(self, code: str, key: str | None, ref: str) -> bool:
        """Another of the teacher's devices stops teaching (not the one asking)."""
        code = self._require_teacher(code, key)
        mine = codes.digest(key)
        for d in self._teacher_digests(code):
            if device_ref(d) == ref:
                if d == mine:
                    raise NotAllowed(N_("this is the device you are using; revoke it from another"))
                self._remove_teacher(code, d)
                self._map_del(code, "devices", d)
                self._publish(Event(code, "device"))
                return True
        return False

    def ask_to_teach(self, code: str, student: str) -> str:
        """A seated device asks to teach: a four-digit pairing number, shown on that device
        and beside the request on the teacher's screen, so the teacher approves the right one.
        No secret is ever shown: the approval is bound to the asking browser's own id."""
        code = self._require_seat(code, student)
        now = self._now()
        asks = self._live_asks(code, now)
        if student in asks:
            return asks[student][0]
        if len(asks) >= MAX_ASKS:
            raise RateLimited(N_("too many devices are asking to teach this class; try again soon"))
        pairing = f"{secrets.randbelow(10_000):04d}"
        self._map_set(code, "asks", student, f"{pairing}:{int(now + DEVICE_ASK_S)}:ask")
        self._publish(Event(code, "device"))
        return pairing

    def ask_state(self, code: str, student: str) -> tuple[str, str]:
        """(pairing, "ask" or "yes") for this device's request, ("", "") for none."""
        code, student = check_code(code), check_student(student)
        ask = self._live_asks(code, self._now()).get(student)
        return (ask[0], ask[1]) if ask else ("", "")

    def asks(self, code: str, key: str | None) -> list[Ask]:
        code = self._require_teacher(code, key)
        live = self._live_asks(code, self._now())
        return [Ask(seat_ref(s), p) for s, (p, state) in sorted(live.items()) if state == "ask"]

    def answer_ask(self, code: str, key: str | None, ref: str, approve: bool) -> bool:
        code = self._require_teacher(code, key)
        for student, (pairing, state) in self._live_asks(code, self._now()).items():
            if seat_ref(student) == ref and state == "ask":
                if approve:
                    expires = int(self._now() + DEVICE_ASK_S)
                    self._map_set(code, "asks", student, f"{pairing}:{expires}:yes")
                else:
                    self._map_del(code, "asks", student)
                self._publish(Event(code, "device"))
                return True
        return False

    def take_approval(self, code: str, student: str) -> str:
        """The approved device's own request (/class/device): a teacher key, once."""
        code, student = check_code(code), check_student(student)
        ask = self._live_asks(code, self._now()).get(student)
        if ask is None or ask[1] != "yes" or not self._map_del(code, "asks", student):
            raise NotAllowed(N_("the class's teacher has not approved this device (or it expired)"))
        key = codes.new_secret()
        self._add_teacher(code, codes.digest(key))
        self._map_set(code, "devices", codes.digest(key), ask[0])
        self._publish(Event(code, "device"))
        return key

    def _live_asks(self, code: str, now: float) -> dict[str, tuple[str, str]]:
        live = {}
        for student, value in self._map_all(code, "asks").items():
            pairing, _, rest = value.partition(":")
            expires, _, state = rest.partition(":")
            if expires.isdigit() and int(expires) > now:
                live[student] = (pairing, state)
        return live

    def end(self, code: str, key: str | None) -> None:
        """Delete the class with every vote and nickname in it."""
        code = self._require_teacher(code, key)
        self._delete(code)
        self._publish(Event(code, "ended"))

    # -- the students -----------------------------------------------------------------------

    def join(self, code: str, student: str, nickname: str | None = "", client: str = ""):
        """Add (or welcome back) a student; their votes stay theirs across reloads. A seated
        student is never refused; a newcomer meets the wrong-code limits of their browser and
        their network, the class's door and its seat limits."""
        check_student(student)
        nickname = clean_nickname(nickname)
        mine, address = f"join:{_browser(student, client)}", f"join:a:{_who(client)}"
        try:
            code = check_code(code)
            if self._has_student(code, student):
                self._add_student(code, student, nickname, MAX_SEATS)
                self._saw(code, student)
                return self._info(code)
            if not self._hit(mine, JOIN_FAILURES_PER_BROWSER, JOIN_WINDOW_S, peek=True):
                raise RateLimited(N_("too many wrong codes from this browser; wait ten minutes"))
            if not self._hit(address, JOIN_FAILURES_PER_ADDRESS, JOIN_WINDOW_S, peek=True):
                raise RateLimited(N_("too many wrong codes from this network; wait ten minutes"))
            if not self._exists(code):
                raise UnknownClass(
                    N_("there is no class {code}: check the code on the board"), code=code
                )
        except UnknownClass:
            self._hit(mine, JOIN_FAILURES_PER_BROWSER, JOIN_WINDOW_S)
            self._hit(address, JOIN_FAILURES_PER_ADDRESS, JOIN_WINDOW_S)
            raise
        if self._map_get(code, "removed", student):
            raise NotAllowed(N_("the teacher took this seat away; ask them if that was a mistake"))
        info = self._info(code)
        if not info.open:
            self._refused(code, "closed")
            raise ClassError(
                N_("class {code} is closed to newcomers; ask the teacher to open it"), code=code
            )
        if info.students >= MAX_STUDENTS:
            self._refused(code, "full")
            raise ClassError(FULL, code=code, most=MAX_STUDENTS)
        if not self._hit(f"seat:{code}:{_who(client)}", NEW_SEATS_PER_ADDRESS, NEW_SEATS_WINDOW_S):
            self._refused(code, "seats")
            raise RateLimited(
                N_("too many new seats from this network just now; wait a few minutes")
            )
        new = self._add_student(code, student, nickname, MAX_SEATS)
        if new is None:
            self._refused(code, "full")
            raise ClassError(FULL, code=code, most=MAX_STUDENTS)
        self._saw(code, student)
        if new:
            self._publish(Event(code, "join"))
        return self._info(code)

    def seated(self, code: str, student: str) -> bool:
        return self._has_student(check_code(code), check_student(student))

    def _require_seat(self, code: str, student: str) -> str:
        code = check_code(code)
        check_student(student)
        if not self._has_student(code, student):
            raise NotAllowed(N_("join the class first"))
        return code

    def _require_student(self, code: str, student: str) -> str:
        code = self._require_seat(code, student)
        if not self._hit(f"msg:{code}:{student}", MESSAGES_PER_MINUTE, 60):
            raise RateLimited(N_("too many answers in a minute; wait a moment"))
        self._saw(code, student)
        return code

    def vote(self, code: str, student: str, step: int, choice: int) -> None:
        """One vote per student per step: a changed choice replaces the old one."""
        step, choice = check_step(step), check_choice(choice)
        code = self._require_student(code, student)
        self._vote(code, step, student, choice)
        self._publish(Event(code, "vote", step))

    def measured(self, code: str, student: str, step: int, borne_out: bool) -> None:
        """A student measured the step: did the result bear their prediction out?"""
        step = check_step(step)
        code = self._require_student(code, student)
        self._measured(code, step, student, bool(borne_out))
        self._publish(Event(code, "measured", step))

    def arrived(self, code: str, student: str, step: int) -> bool:
        """The student's page shows `step` now, so the teacher can see how many are on theirs.
        A page flicking through steps faster than the limit is not counted for a while (its
        next report after that counts); returns whether this one was."""
        step, code = check_step(step), check_code(code)
        check_student(student)
        if not self._has_student(code, student):
            raise NotAllowed(N_("join the class first"))
        if not self._hit(f"at:{code}:{student}", ARRIVALS_PER_MINUTE, 60):
            return False
        self._arrive(code, student, step)
        self._saw(code, student)
        self._publish(Event(code, "arrived", step))
        return True

    # -- anyone in the class ----------------------------------------------------------------

    def info(self, code: str) -> ClassInfo:
        # Both stores' `_info` raise UnknownClass for a class that is not there: one read.
        return self._info(check_code(code))

    def tally(self, code: str, step: int) -> Tally:
        return self.tally_and_vote(code, step, None)[0]

    def tally_and_vote(self, code: str, step: int, student: str | None) -> tuple[Tally, int | None]:
        """A step's votes and one student's stored choice in it (None: no student, or no vote),
        from one read of the store: a page's refresh after each vote made six round trips to
        Redis, each holding its replica's loop while a class of 200 voted."""
        code, step = check_code(code), check_step(step)
        joined, votes, measured, revealed, arrived = self._step_view(code, step)
        counts: dict[int, int] = {}
        for choice in votes.values():
            counts[choice] = counts.get(choice, 0) + 1
        borne = sum(1 for ok in measured.values() if ok)
        return Tally(
            step=step,
            joined=joined,
            answered=len(votes),
            counts=counts,
            measured=len(measured),
            borne_out=borne,
            revealed=revealed,
            arrived=arrived,
        ), (votes.get(student) if student else None)

    def vote_of(self, code: str, student: str, step: int) -> int | None:
        """This student's stored choice for a step (what their page shows as counted): one
        field, not the step's tally, which a student's page has no use for before the reveal."""
        code, step = check_code(code), check_step(step)
        return self._vote_of(code, step, check_student(student))

    # -- subscriptions ----------------------------------------------------------------------

    def subscribe(self, code: str, callback: Callback) -> Subscription:
        sub = Subscription(self, check_code(code), callback)
        with self._sub_lock:
            self._subscribers.setdefault(sub.code, []).append(sub)
        return sub

    def _unsubscribe(self, sub: Subscription) -> None:
        with self._sub_lock:
            subs = self._subscribers.get(sub.code, [])
            if sub in subs:
                subs.remove(sub)
            if not subs:
                self._subscribers.pop(sub.code, None)

    def _dispatch(self, event: Event) -> None:
        """Run this process's callbacks for the event's class (or every class's, for a
        "connection" event with no code)."""
        with self._sub_lock:
            if event.code:
                subs = list(self._subscribers.get(event.code, []))
            else:
                subs = [s for group in self._subscribers.values() for s in group]
        for sub in subs:
            try:
                sub.callback(event if event.code else Event(sub.code, event.kind, event.step))
            except Exception:  # noqa: BLE001 - one page's failure must not silence the others
                log.exception("a class subscriber failed")

    @property
    def connected(self) -> bool:
        return True

    def close(self) -> None:
        pass

    # -- what an implementation provides ---------------------------------------------------

    def _hit(self, key: str, limit: int, window_s: int, peek: bool = False) -> bool:
        """Count one attempt under `key` (or only look, with peek); False once over `limit`."""
        raise NotImplementedError

    def _publish(self, event: Event) -> None:
        raise NotImplementedError

    def _create(self, code: str, key_digest: str) -> bool:
        raise NotImplementedError

    def _exists(self, code: str) -> bool:
        raise NotImplementedError

    def _info(self, code: str) -> ClassInfo:
        raise NotImplementedError

    def _teacher_digests(self, code: str) -> list[str]:
        raise NotImplementedError

    def _add_teacher(self, code: str, key_digest: str) -> None:
        raise NotImplementedError

    def _put_once(self, code: str, once_digest: str, ttl_s: int) -> None:
        raise NotImplementedError

    def _take_once(self, code: str, once_digest: str) -> bool:
        raise NotImplementedError

    def _set(self, code: str, *, step: int | None, locked: bool | None) -> None:
        raise NotImplementedError

    def _reveal(self, code: str, step: int) -> None:
        raise NotImplementedError

    def _add_student(self, code: str, student: str, nickname: str, limit: int) -> bool | None:
        """True if new, False if back, None if the class is full."""
        raise NotImplementedError

    def _has_student(self, code: str, student: str) -> bool:
        raise NotImplementedError

    def _nicknames(self, code: str) -> list[str]:
        raise NotImplementedError

    def _vote(self, code: str, step: int, student: str, choice: int) -> None:
        raise NotImplementedError

    def _measured(self, code: str, step: int, student: str, borne_out: bool) -> None:
        raise NotImplementedError

    def _tally(self, code: str, step: int) -> tuple[int, dict[str, int], dict[str, bool]]:
        raise NotImplementedError

    def _vote_of(self, code: str, step: int, student: str) -> int | None:
        """One student's stored choice; from `_tally` unless a store reads just the one."""
        return self._tally(code, step)[1].get(student)

    def _step_view(self, code: str, step: int):
        """(active seats, votes, measured, the step revealed, active students on it) for
        `tally_and_vote`;
        raises UnknownClass. From the other hooks; a store that reads it all at once
        overrides it."""
        joined, votes, measured = self._tally(code, step)
        revealed = step in self._info(code).revealed
        return joined, votes, measured, revealed, self._arrived_on(code, step)

    def _arrive(self, code: str, student: str, step: int) -> None:
        raise NotImplementedError

    def _arrived_on(self, code: str, step: int) -> int:
        raise NotImplementedError

    def _delete(self, code: str) -> None:
        raise NotImplementedError

    def _now(self) -> float:
        """The clock seat activity and requests are stamped with."""
        raise NotImplementedError

    def _count(self, key: str) -> int:
        """How many attempts `_hit` has counted under `key` in its current window."""
        raise NotImplementedError

    def _map_get(self, code: str, part: str, name: str) -> str | None:
        raise NotImplementedError

    def _map_set(self, code: str, part: str, name: str, value: str) -> None:
        raise NotImplementedError

    def _map_del(self, code: str, part: str, name: str) -> bool:
        """Remove one entry; True only for the caller that removed it."""
        raise NotImplementedError

    def _map_all(self, code: str, part: str) -> dict[str, str]:
        raise NotImplementedError

    def _remove_teacher(self, code: str, key_digest: str) -> None:
        raise NotImplementedError

    def _students(self, code: str) -> dict[str, str]:
        """Student id -> nickname, every seat."""
        raise NotImplementedError

    def _drop_student(self, code: str, student: str) -> None:
        """Remove a seat with its votes, measurements, step and activity."""
        raise NotImplementedError

    def _saw(self, code: str, student: str) -> None:
        """The seat did something now."""
        raise NotImplementedError

    def _seen_all(self, code: str) -> dict[str, float]:
        raise NotImplementedError

    def _active(self, code: str) -> int:
        """Seats active within ACTIVE_S."""
        raise NotImplementedError
