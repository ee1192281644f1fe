"""One page's part in a class: joined as a student or as the teacher, kept up to date.

Panel-free: the page (app/views/class_panel.py) watches these parameters and calls these
methods; a test drives two of them against one store. Store events arrive on the store's
thread; `deliver` (the page's hand-over to its own session thread) runs the refresh there, so
every parameter change, and every page edit it causes, happens on the session's own document.
Many events in a burst (200 votes) cost one refresh: the next one is queued only when none is.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from urllib.parse import quote

import param

from app.classroom.store import (
    ClassError,
    ClassStore,
    Event,
    StoreUnavailable,
    Tally,
    UnknownClass,
    check_code,
)
from app.i18n.languages import SOURCE
from app.i18n.said import Said

# How a browser carries its part in a class: the teacher's key in an HttpOnly cookie per class
# (set by the routes below, app/server/class_routes.py), a student's anonymous id in another.
TEACHER_COOKIE_PREFIX = "alab_teach_"
NEW_ROUTE = "class/new"  # relative to the page, so a --prefix is kept
DEVICE_ROUTE = "class/device"
STUDENT_COOKIE = "alab_student"
LANG_ARGUMENT = "lang"  # as the page's address names its language (app/page/session_language.py)


def in_language(address: str, code: str) -> str:
    """`address` (a class route, a page) keeping the language `code` across its redirect; the
    source language needs no argument. The join link and QR never carry one: each student's
    page speaks the student's own language."""
    if not code or code == SOURCE:
        return address
    return f"{address}{'&' if '?' in address else '?'}{LANG_ARGUMENT}={quote(code)}"


LOST = Said("The class connection is lost; retrying. The lab keeps working on its own meanwhile.")


def told(exc: ClassError) -> Said:
    """A refusal of the store's as a sentence a page writes in its own language."""
    return Said(exc.template, **exc.values)


def teacher_keys(cookies: Mapping[str, str]) -> dict[str, str]:
    """Class code -> teacher key, from the browser's cookies (set by /class/new)."""
    keys = {}
    for name, value in cookies.items():
        if name.startswith(TEACHER_COOKIE_PREFIX):
            try:
                keys[check_code(name[len(TEACHER_COOKIE_PREFIX) :])] = value
            except ClassError:
                continue
    return keys


class ClassSession(param.Parameterized):
    code = param.String(default="", doc="the class joined, '' for none")
    role = param.Selector(default="", objects=["", "student", "teacher"])
    step = param.Integer(default=0, doc="the class's step (the teacher's), 0 before one")
    locked = param.Boolean(default=False, doc="students are kept on the class's step")
    follow = param.Boolean(default=True, doc="this student's lesson follows the teacher's")
    joined = param.Integer(default=0, doc="students active in the class lately")
    open = param.Boolean(default=True, doc="newcomers may join the class")
    asking = param.String(default="", doc="this device's pairing number while it asks to teach")
    approved = param.Boolean(default=False, doc="the teacher approved this device to teach")
    devices_changed = param.Integer(default=0, doc="bumped when the teacher's devices change")
    shown_step = param.Integer(default=0, doc="the step whose votes this page shows")
    tally = param.Parameter(default=None, doc="the shown step's Tally, or None")
    my_vote = param.Parameter(default=None, doc="my choice as the store holds it (counted)")
    connected = param.Boolean(default=True)
    problem = param.String(default="", doc="the last thing refused, in English words")
    problem_said = param.Parameter(
        default=None, doc="the same as a Said, written in each page's language where shown"
    )

    def __init__(
        self,
        store: ClassStore,
        *,
        student_id: str,
        teacher_keys: Mapping[str, str] | None = None,
        client: str = "",
        deliver: Callable[[Callable[[], None]], None] | None = None,
        **params,
    ):
        super().__init__(**params)
        self._store = store
        self.student_id = student_id
        self._keys = dict(teacher_keys or {})
        self._client = client
        self.deliver = deliver or (lambda work: work())
        self._subscription = None
        self._nickname = ""
        self._waiting_join = False  # the join failed for an outage: retry when it is back
        self._unsent: dict[tuple[str, int], object] = {}  # ("vote"|"measured", step) -> value
        self._arrival: int | None = None  # a step this student's page shows, not yet reported
        self._queued = False
        self._check_seat = False  # a seat was removed: is mine still there?
        self._check_devices = False  # a device was added, answered or revoked
        self._sending = False
        self._queue_lock = threading.Lock()

    def _tell(self, said: Said | None, **updates) -> None:
        """Set the problem (None clears it), in English and as a Said, with `updates` at once."""
        self.param.update(problem=str(said) if said else "", problem_said=said, **updates)

    @property
    def store(self) -> ClassStore:
        return self._store

    @property
    def key(self) -> str | None:
        return self._keys.get(self.code) if self.role == "teacher" else None

    @property
    def is_teacher(self) -> bool:
        return self.role == "teacher"

    # -- joining ----------------------------------------------------------------------------

    def join(self, code_text: str, nickname: str = "") -> bool:
        """Join the class a code names (as its teacher if this browser holds its key)."""
        try:
            code = check_code(code_text)
        except ClassError as exc:
            self._tell(told(exc))
            return False
        self._nickname = nickname
        if code != self.code:
            self.leave()
            self._subscription = self._store.subscribe(code, self._heard)
            self.code = code
        return self._join()

    def _join(self) -> bool:
        code = self.code
        try:
            key = self._keys.get(code)
            if key is not None and self._store.is_teacher(code, key):
                info, role = self._store.info(code), "teacher"
            else:
                info = self._store.join(code, self.student_id, self._nickname, self._client)
                role = "student"
        except StoreUnavailable:
            self._waiting_join = True
            self._tell(LOST, connected=False)
            return False
        except ClassError as exc:
            self._waiting_join = False
            self.leave()
            self._tell(told(exc))
            return False
        self._waiting_join = False
        self._tell(None, role=role, connected=True)
        self._read(info)
        return True

    def release(self) -> None:
        """The page closed: stop hearing the class, and change nothing the page would draw
        (its models are gone). The seat stays in the store for the next page of this browser."""
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        self.deliver = lambda work: None  # a wake-up already on its way finds nobody

    def leave(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        cleared = {
            "code": "",
            "role": "",
            "step": 0,
            "locked": False,
            "tally": None,
            "my_vote": None,
            "open": True,
            "asking": "",
            "approved": False,
        }
        self.param.update(cleared)

    # -- the teacher ------------------------------------------------------------------------

    def _as_teacher(self, act: Callable[[str], object]):
        if not self.is_teacher:
            self._tell(Said("Only the class's teacher can do that."))
            return None
        try:
            result = act(self.key)
        except StoreUnavailable:
            self._tell(LOST, connected=False)
            return None
        except ClassError as exc:
            self._tell(told(exc))
            return None
        self._tell(None)
        return result

    def teach_step(self, step: int) -> None:
        """The teacher's lesson moved: every following student moves with it."""
        if self.is_teacher and step and step != self.step:
            self._as_teacher(lambda key: self._store.set_step(self.code, key, step))
            self.refresh()

    def set_locked(self, locked: bool) -> None:
        self._as_teacher(lambda key: self._store.set_locked(self.code, key, locked))
        self.refresh()

    def reveal(self) -> None:
        if self.step:
            self._as_teacher(lambda key: self._store.reveal(self.code, key, self.step))
            self.refresh()

    def nicknames(self) -> list[str]:
        return self._as_teacher(lambda key: self._store.nicknames(self.code, key)) or []

    def set_open(self, open_: bool) -> None:
        self._as_teacher(lambda key: self._store.set_open(self.code, key, open_))
        self.refresh()

    def seats(self) -> list:
        return self._as_teacher(lambda key: self._store.seats(self.code, key)) or []

    def remove_seat(self, ref: str) -> bool:
        return bool(self._as_teacher(lambda key: self._store.remove_seat(self.code, key, ref)))

    def refusals(self) -> dict[str, int]:
        got = self._as_teacher(lambda key: self._store.refusals(self.code, key, self._client))
        return got or {}

    def devices(self) -> list:
        return self._as_teacher(lambda key: self._store.devices(self.code, key)) or []

    def revoke_device(self, ref: str) -> bool:
        return bool(self._as_teacher(lambda key: self._store.revoke_device(self.code, key, ref)))

    def asks(self) -> list:
        return self._as_teacher(lambda key: self._store.asks(self.code, key)) or []

    def answer_ask(self, ref: str, approve: bool) -> bool:
        return bool(
            self._as_teacher(lambda key: self._store.answer_ask(self.code, key, ref, approve))
        )

    def end(self) -> None:
        if self._as_teacher(lambda key: self._store.end(self.code, key) or True):
            self.leave()

    # -- the students -----------------------------------------------------------------------

    def ask_to_teach(self) -> str:
        """This (seated) device asks the class's teacher to let it teach: the pairing number
        to compare with the teacher's screen, '' if refused (see `problem`)."""
        if self.role != "student":
            return ""
        try:
            pairing = self._store.ask_to_teach(self.code, self.student_id)
        except StoreUnavailable:
            self._tell(LOST, connected=False)
            return ""
        except ClassError as exc:
            self._tell(told(exc))
            return ""
        self._tell(None, asking=pairing)
        return pairing

    def vote(self, step: int, choice: int | None) -> None:
        """Send my prediction for a step; `my_vote` shows it only once the store has it."""
        if self.role != "student" or choice is None or not step:
            return
        if isinstance(choice, bool) or not isinstance(choice, int):
            self._tell(Said("That is not one of the step's answers: {given}", given=repr(choice)))
            return
        self._unsent[("vote", step)] = choice
        self._send()

    def report_measured(self, step: int, borne_out: bool) -> None:
        if self.role != "student" or not step:
            return
        self._unsent[("measured", step)] = bool(borne_out)
        self._send()

    def _send(self) -> None:
        """Send what the store does not have yet. Not re-entrant: the in-process store
        announces a vote to this very page before `vote` returns."""
        if self._sending:
            return
        self._sending = True
        try:
            for (kind, step), value in list(self._unsent.items()):
                try:
                    if kind == "vote":
                        self._store.vote(self.code, self.student_id, step, value)
                    else:
                        self._store.measured(self.code, self.student_id, step, value)
                except StoreUnavailable:
                    self._tell(LOST, connected=False)
                    return  # kept: sent again when the connection is back
                except ClassError as exc:
                    self._tell(told(exc))
                else:
                    self._tell(None)
                if self._unsent.get((kind, step)) == value:  # unless changed meanwhile
                    del self._unsent[(kind, step)]
            if not self._send_arrival():
                return
        finally:
            self._sending = False
        self.refresh()

    def _send_arrival(self) -> bool:
        """Tell the store which step this page shows; False if the store is out of reach.
        Only the teacher's count reads it, so a refusal is never a problem on this page."""
        step = self._arrival
        if step is None:
            return True
        try:
            self._store.arrived(self.code, self.student_id, step)
        except StoreUnavailable:
            self._tell(LOST, connected=False)
            return False  # kept: sent again when the connection is back
        except ClassError:
            pass
        if self._arrival == step:
            self._arrival = None
        return True

    @property
    def unsent(self) -> int:
        return len(self._unsent)

    def show_step(self, step: int) -> None:
        """The page shows this step: read its votes (and my vote in it); a student's page
        reports it, for the teacher's count of who is on the step."""
        if step != self.shown_step:
            self.shown_step = step
            if self.role == "student" and step:
                self._arrival = step
                self._send()  # which reads the class afterwards
            else:
                self.refresh()

    # -- keeping up -------------------------------------------------------------------------

    def _heard(self, event: Event) -> None:
        """Any thread: queue one refresh on the session's thread unless one is queued."""
        if not self._can_change_my_page(event):
            return
        with self._queue_lock:
            if self._queued:
                return
            self._queued = True
        self.deliver(self._queued_refresh)

    def _can_change_my_page(self, event: Event) -> bool:
        """A student's page draws no counts before the reveal, no arrivals and no head count:
        those events are left alone, or each of N votes (or joins) would make N pages read the
        store."""
        if event.kind == "seat":
            self._check_seat = self.role == "student"
            return self._check_seat
        if event.kind == "device":
            self._check_devices = self.role == "teacher" or bool(self.asking)
            return self._check_devices
        if self.role != "student":
            return True
        if event.kind in ("arrived", "join"):
            return False
        if event.kind in ("vote", "measured"):
            tally = self.tally
            return tally is not None and tally.revealed and event.step == tally.step
        return True

    def _queued_refresh(self) -> None:
        with self._queue_lock:
            self._queued = False
        if self._waiting_join:
            self._join()
        elif self.code:
            if (self._unsent or self._arrival is not None) and self._store.connected:
                self._send()
            else:
                self.refresh()

    def refresh(self) -> None:
        """Read the class and the shown step's votes from the store (session thread)."""
        if not self.code or self._waiting_join:
            return
        try:
            if self._check_seat or self._check_devices:
                if not self._still_in_place():
                    return
            self._read(self._store.info(self.code))
        except UnknownClass:
            self.leave()
            self._tell(Said("This class has ended."))
        except StoreUnavailable:
            self._tell(LOST, connected=False)

    def _still_in_place(self) -> bool:
        """After a seat was removed or a device changed: is this page still what it was?"""
        seat, devices = self._check_seat, self._check_devices
        self._check_seat = self._check_devices = False
        if seat and self.role == "student" and not self._store.seated(self.code, self.student_id):
            self.leave()
            self._tell(Said("The teacher took this seat away from the class."))
            return False
        if devices and self.role == "teacher":
            if not self._store.is_teacher(self.code, self.key):
                self.leave()
                self._tell(
                    Said("This device no longer teaches the class (the teacher revoked it).")
                )
                return False
            self.devices_changed += 1
        elif devices and self.asking:
            pairing, state = self._store.ask_state(self.code, self.student_id)
            self.param.update(asking=pairing, approved=state == "yes")
        return True

    def _read(self, info) -> None:
        shown = self.shown_step or info.step
        tally: Tally | None = None
        mine = None
        if shown and self.role == "student" and shown not in info.revealed:
            # A student's page shows no counts before the reveal: read the one vote, not the
            # step's tally (every vote in a class of 200 made each voter's page read them all).
            mine = self._store.vote_of(self.code, self.student_id, shown)
        elif shown:
            student = self.student_id if self.role == "student" else None
            tally, mine = self._store.tally_and_vote(self.code, shown, student)
        updates = dict(
            step=info.step,
            locked=info.locked,
            joined=info.students,
            open=info.open,
            tally=tally,
            my_vote=mine,
        )
        if not self.connected:
            updates.update(connected=True, problem="", problem_said=None)
        # Only what changed: Param cannot compare a Tally, so an unchanged one would still
        # wake every watcher and redraw the class view for nothing.
        changed = {name: value for name, value in updates.items() if getattr(self, name) != value}
        if changed:
            self.param.update(**changed)
