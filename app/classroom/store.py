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
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from app.classroom import codes

# A class nobody has touched for this long is deleted with everything in it.
IDLE_S = 12 * 3600
# Join attempts with a code that names no class, per client, per window.
JOIN_FAILURES_PER_WINDOW = 10
JOIN_WINDOW_S = 600
# Classes one client may start per hour.
CREATES_PER_HOUR = 20
# Votes and results one student may send per minute (a changed mind included).
MESSAGES_PER_MINUTE = 60
# Steps one student's page may report it shows, per minute (a class steps far slower).
ARRIVALS_PER_MINUTE = 120
MAX_STUDENTS = 500
MAX_STEP = 99
MAX_CHOICES = 8
MAX_NICKNAME = 24
# How long a link that adds the teacher's second device stays usable.
DEVICE_LINK_S = 600

log = logging.getLogger("attention_lab.classroom")


class ClassError(ValueError):
    """A request the store refuses; the message names why, in words for the page."""


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
    students: int


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
    student's page now shows `step`), "ended", or "connection" (the store lost or regained its
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
    """A client's address as a rate limit's key: a digest, so no address is kept."""
    return codes.digest(str(client))[:24]


def check_step(step) -> int:
    if isinstance(step, bool) or not isinstance(step, int) or not 1 <= step <= MAX_STEP:
        raise ClassError(f"step must be a whole number from 1 to {MAX_STEP}, not {step!r}")
    return step


def check_choice(choice) -> int:
    if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < MAX_CHOICES:
        raise ClassError(f"a choice must be a number from 0 to {MAX_CHOICES - 1}, not {choice!r}")
    return choice


def check_student(student) -> str:
    if not codes.is_student_id(student):
        raise ClassError("that is not a student id this lab hands out")
    return student


def clean_nickname(nickname) -> str:
    """Printable text, at most MAX_NICKNAME characters; anything else is refused."""
    if nickname is None:
        return ""
    if not isinstance(nickname, str):
        raise ClassError("a nickname must be text")
    text = " ".join(nickname.split())
    if len(text) > MAX_NICKNAME:
        raise ClassError(f"a nickname has at most {MAX_NICKNAME} characters")
    if any(not c.isprintable() for c in text):
        raise ClassError("a nickname must be printable text")
    return text


def check_code(code) -> str:
    normal = codes.normalize(code) if isinstance(code, str) else None
    if normal is None:
        raise UnknownClass(
            f"a class code is {codes.LENGTH} letters and digits, such as {codes.ALPHABET[:6]}"
        )
    return normal


class ClassStore:
    """The rules; subclasses implement the underscored keep-and-fetch methods."""

    name = "store"

    def __init__(self) -> None:
        self._subscribers: dict[str, list[Subscription]] = {}
        self._sub_lock = threading.Lock()

    # -- the teacher ------------------------------------------------------------------------

    def create(self, client: str = "") -> tuple[str, str]:
        """A new class: (its code, the teacher's key). The key's digest is all that is kept."""
        if not self._hit(f"create:{_who(client)}", CREATES_PER_HOUR, 3600):
            raise RateLimited("too many classes started from here in the last hour")
        key = codes.new_secret()
        for _ in range(20):
            code = codes.new_code()
            if self._create(code, codes.digest(key)):
                return code, key
        raise ClassError("could not find a free class code; try again")

    def is_teacher(self, code: str, key: str | None) -> bool:
        try:
            code = check_code(code)
        except ClassError:
            return False
        return codes.same(key, self._teacher_digests(code))

    def _require_teacher(self, code: str, key: str | None) -> str:
        code = check_code(code)
        if not self._exists(code):
            raise UnknownClass(f"there is no class {code} (it may have ended)")
        if not codes.same(key, self._teacher_digests(code)):
            raise NotAllowed("only the class's teacher can do that")
        return code

    def set_step(self, code: str, key: str | None, step: int, *, locked: bool | None = None):
        code = self._require_teacher(code, key)
        self._set(code, step=check_step(step), locked=locked)
        self._publish(Event(code, "step", step))

    def set_locked(self, code: str, key: str | None, locked: bool) -> None:
        code = self._require_teacher(code, key)
        self._set(code, step=None, locked=bool(locked))
        self._publish(Event(code, "step", self._info(code).step))

    def reveal(self, code: str, key: str | None, step: int) -> None:
        code = self._require_teacher(code, key)
        self._reveal(code, check_step(step))
        self._publish(Event(code, "reveal", step))

    def nicknames(self, code: str, key: str | None) -> list[str]:
        code = self._require_teacher(code, key)
        return sorted(n for n in self._nicknames(code) if n)

    def device_link(self, code: str, key: str | None) -> str:
        """A one-time secret that makes another browser a teacher of this class."""
        code = self._require_teacher(code, key)
        once = codes.new_secret()
        self._put_once(code, codes.digest(once), DEVICE_LINK_S)
        return once

    def redeem(self, code: str, once: str, client: str = "") -> str:
        """Spend a one-time link: a new teacher key for this device (the link works once)."""
        code = check_code(code)
        if not isinstance(once, str) or not 0 < len(once) <= 64:
            raise NotAllowed("that link is not a teacher's link")
        if not self._hit(
            f"join:{_who(client)}", JOIN_FAILURES_PER_WINDOW, JOIN_WINDOW_S, peek=True
        ):
            raise RateLimited("too many wrong codes from here; wait ten minutes")
        if not self._take_once(code, codes.digest(once)):
            self._hit(f"join:{_who(client)}", JOIN_FAILURES_PER_WINDOW, JOIN_WINDOW_S)
            raise NotAllowed("that link was used already or has expired")
        key = codes.new_secret()
        self._add_teacher(code, codes.digest(key))
        return key

    def end(self, code: str, key: str | None) -> None:
        """Delete the class with every vote and nickname in it."""
        code = self._require_teacher(code, key)
        self._delete(code)
        self._publish(Event(code, "ended"))

    # -- the students -----------------------------------------------------------------------

    def join(self, code: str, student: str, nickname: str | None = "", client: str = ""):
        """Add (or welcome back) a student; their votes stay theirs across reloads."""
        check_student(student)
        nickname = clean_nickname(nickname)
        if not self._hit(
            f"join:{_who(client)}", JOIN_FAILURES_PER_WINDOW, JOIN_WINDOW_S, peek=True
        ):
            raise RateLimited("too many wrong codes from here; wait ten minutes and try again")
        try:
            code = check_code(code)
            if not self._exists(code):
                raise UnknownClass(f"there is no class {code}: check the code on the board")
        except UnknownClass:
            self._hit(f"join:{_who(client)}", JOIN_FAILURES_PER_WINDOW, JOIN_WINDOW_S)
            raise
        new = self._add_student(code, student, nickname, MAX_STUDENTS)
        if new is None:
            raise ClassError(f"class {code} is full ({MAX_STUDENTS} students)")
        if new:
            self._publish(Event(code, "join"))
        return self._info(code)

    def _require_student(self, code: str, student: str) -> str:
        code = check_code(code)
        check_student(student)
        if not self._has_student(code, student):
            raise NotAllowed("join the class first")
        if not self._hit(f"msg:{code}:{student}", MESSAGES_PER_MINUTE, 60):
            raise RateLimited("too many answers in a minute; wait a moment")
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
            raise NotAllowed("join the class first")
        if not self._hit(f"at:{code}:{student}", ARRIVALS_PER_MINUTE, 60):
            return False
        self._arrive(code, student, step)
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
        """(joined, votes, measured, the step revealed, students on it) for `tally_and_vote`;
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
