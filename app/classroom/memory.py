"""The in-process class store: the default, for one `attention-lab` process and its sessions.

Everything sits in dicts behind one lock; callbacks run on the thread that made the change,
after the lock is released. A class with no write for `idle_s` is dropped on the next access.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from app.classroom.store import IDLE_S, ClassInfo, ClassStore, Event, UnknownClass


@dataclass
class _Class:
    teachers: set[str]
    touched: float
    step: int = 0
    locked: bool = False
    revealed: set[int] = field(default_factory=set)
    students: dict[str, str] = field(default_factory=dict)  # id -> nickname ("" if none)
    votes: dict[int, dict[str, int]] = field(default_factory=dict)
    measured: dict[int, dict[str, bool]] = field(default_factory=dict)
    at: dict[str, int] = field(default_factory=dict)  # student -> the step their page shows
    once: dict[str, float] = field(default_factory=dict)  # link digest -> expiry time


class MemoryStore(ClassStore):
    name = "memory"

    def __init__(self, *, idle_s: float = IDLE_S, clock=time.monotonic):
        super().__init__()
        self._classes: dict[str, _Class] = {}
        self._hits: dict[str, tuple[float, int]] = {}
        self._lock = threading.RLock()
        self._idle_s, self._clock = idle_s, clock

    def _get(self, code: str, touch: bool = False) -> _Class | None:
        now = self._clock()
        room = self._classes.get(code)
        if room is not None and now - room.touched > self._idle_s:
            del self._classes[code]
            return None
        if room is not None and touch:
            room.touched = now
        return room

    def _room(self, code: str, touch: bool = False) -> _Class:
        room = self._get(code, touch)
        if room is None:
            raise UnknownClass(f"there is no class {code} (it may have ended)")
        return room

    def _hit(self, key: str, limit: int, window_s: int, peek: bool = False) -> bool:
        with self._lock:
            now = self._clock()
            if len(self._hits) > 10_000:  # forget finished windows, so the table stays small
                self._hits = {k: v for k, v in self._hits.items() if now - v[0] < 3600}
            start, count = self._hits.get(key, (now, 0))
            if now - start >= window_s:
                start, count = now, 0
            if count >= limit:
                return False
            if not peek:
                self._hits[key] = (start, count + 1)
            return True

    def _publish(self, event: Event) -> None:
        self._dispatch(event)

    def _create(self, code: str, key_digest: str) -> bool:
        with self._lock:
            if self._get(code, touch=False) is not None:
                return False
            self._classes[code] = _Class(teachers={key_digest}, touched=self._clock())
            return True

    def _exists(self, code: str) -> bool:
        with self._lock:
            return self._get(code) is not None

    def _info(self, code: str) -> ClassInfo:
        with self._lock:
            room = self._room(code)
            return ClassInfo(
                code, room.step, room.locked, frozenset(room.revealed), len(room.students)
            )

    def _teacher_digests(self, code: str) -> list[str]:
        with self._lock:
            room = self._get(code)
            return list(room.teachers) if room else []

    def _add_teacher(self, code: str, key_digest: str) -> None:
        with self._lock:
            self._room(code, touch=True).teachers.add(key_digest)

    def _put_once(self, code: str, once_digest: str, ttl_s: int) -> None:
        with self._lock:
            self._room(code, touch=True).once[once_digest] = self._clock() + ttl_s

    def _take_once(self, code: str, once_digest: str) -> bool:
        with self._lock:
            room = self._get(code)
            expires = room.once.pop(once_digest, None) if room else None
            return expires is not None and self._clock() < expires

    def _set(self, code: str, *, step: int | None, locked: bool | None) -> None:
        with self._lock:
            room = self._room(code, touch=True)
            if step is not None:
                room.step = step
            if locked is not None:
                room.locked = locked

    def _reveal(self, code: str, step: int) -> None:
        with self._lock:
            self._room(code, touch=True).revealed.add(step)

    def _add_student(self, code: str, student: str, nickname: str, limit: int) -> bool | None:
        with self._lock:
            room = self._room(code, touch=True)
            if student in room.students:
                if nickname:
                    room.students[student] = nickname
                return False
            if len(room.students) >= limit:
                return None
            room.students[student] = nickname
            return True

    def _has_student(self, code: str, student: str) -> bool:
        with self._lock:
            room = self._get(code)
            return room is not None and student in room.students

    def _nicknames(self, code: str) -> list[str]:
        with self._lock:
            return list(self._room(code).students.values())

    def _vote(self, code: str, step: int, student: str, choice: int) -> None:
        with self._lock:
            self._room(code, touch=True).votes.setdefault(step, {})[student] = choice

    def _measured(self, code: str, step: int, student: str, borne_out: bool) -> None:
        with self._lock:
            self._room(code, touch=True).measured.setdefault(step, {})[student] = borne_out

    def _tally(self, code: str, step: int):
        with self._lock:
            room = self._room(code)
            return (
                len(room.students),
                dict(room.votes.get(step, {})),
                dict(room.measured.get(step, {})),
            )

    def _vote_of(self, code: str, step: int, student: str) -> int | None:
        with self._lock:
            return self._room(code).votes.get(step, {}).get(student)

    def _arrive(self, code: str, student: str, step: int) -> None:
        with self._lock:
            self._room(code, touch=True).at[student] = step

    def _arrived_on(self, code: str, step: int) -> int:
        with self._lock:
            return sum(1 for at in self._room(code).at.values() if at == step)

    def _delete(self, code: str) -> None:
        with self._lock:
            self._classes.pop(code, None)
