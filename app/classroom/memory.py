"""The in-process class store: the default, for one `attention-lab` process and its sessions.

Everything sits in dicts behind one lock; callbacks run on the thread that made the change,
after the lock is released. A class with no write for `idle_s` is dropped on the next access.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from app.classroom.store import (
    ACTIVE_S,
    ENDED,
    IDLE_S,
    ClassInfo,
    ClassStore,
    Event,
    UnknownClass,
)


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
    seen: dict[str, float] = field(default_factory=dict)  # student -> last activity
    maps: dict[str, dict[str, str]] = field(default_factory=dict)  # part -> name -> value


class MemoryStore(ClassStore):
    name = "memory"

    def __init__(self, *, idle_s: float = IDLE_S, clock=time.monotonic):
        super().__init__()
        self._classes: dict[str, _Class] = {}
        self._hits: dict[str, tuple[float, int, int]] = {}  # key -> (start, count, window)
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
            raise UnknownClass(ENDED, code=code)
        return room

    def _hit(self, key: str, limit: int, window_s: int, peek: bool = False) -> bool:
        with self._lock:
            now = self._clock()
            if len(self._hits) > 10_000:  # forget finished windows, so the table stays small
                self._hits = {k: v for k, v in self._hits.items() if now - v[0] < v[2]}
            start, count, _ = self._hits.get(key, (now, 0, window_s))
            if now - start >= window_s:
                start, count = now, 0
            if count >= limit:
                return False
            if not peek:
                self._hits[key] = (start, count + 1, window_s)
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
            closed = room.maps.get("flags", {}).get("closed")
            return ClassInfo(
                code,
                room.step,
                room.locked,
                frozenset(room.revealed),
                self._active_in(room),
                open=not closed,
            )

    def _active_in(self, room: _Class) -> int:
        recent = self._clock() - ACTIVE_S
        return sum(1 for s in room.students if room.seen.get(s, -1e18) >= recent)

    def _teacher_digests(self, code: str) -> list[str]:
        with self._lock:
            room = self._get(code)
            return list(room.teachers) if room else []

    def _add_teacher(self, code: str, key_digest: str) -> None:
        with self._lock:
            self._room(code, touch=True).teachers.add(key_digest)

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
                self._active_in(room),
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
            room = self._room(code)
            recent = self._clock() - ACTIVE_S
            return sum(
                1
                for s, at in room.at.items()
                if at == step and room.seen.get(s, -1e18) >= recent and s in room.students
            )

    def _delete(self, code: str) -> None:
        with self._lock:
            self._classes.pop(code, None)

    def _now(self) -> float:
        return self._clock()

    def _count(self, key: str) -> int:
        with self._lock:
            start, count, window_s = self._hits.get(key, (0.0, 0, 0))
            return count if self._clock() - start < window_s else 0

    def _map_get(self, code: str, part: str, name: str) -> str | None:
        with self._lock:
            room = self._get(code)
            return room.maps.get(part, {}).get(name) if room else None

    def _map_set(self, code: str, part: str, name: str, value: str) -> None:
        with self._lock:
            self._room(code, touch=True).maps.setdefault(part, {})[name] = value

    def _map_del(self, code: str, part: str, name: str) -> bool:
        with self._lock:
            room = self._get(code)
            return room is not None and room.maps.get(part, {}).pop(name, None) is not None

    def _map_all(self, code: str, part: str) -> dict[str, str]:
        with self._lock:
            room = self._get(code)
            return dict(room.maps.get(part, {})) if room else {}

    def _remove_teacher(self, code: str, key_digest: str) -> None:
        with self._lock:
            self._room(code, touch=True).teachers.discard(key_digest)

    def _students(self, code: str) -> dict[str, str]:
        with self._lock:
            return dict(self._room(code).students)

    def _drop_student(self, code: str, student: str) -> None:
        with self._lock:
            room = self._room(code, touch=True)
            room.students.pop(student, None)
            room.at.pop(student, None)
            room.seen.pop(student, None)
            for table in (*room.votes.values(), *room.measured.values()):
                table.pop(student, None)

    def _saw(self, code: str, student: str) -> None:
        with self._lock:
            room = self._get(code)
            if room is not None and student in room.students:
                room.seen[student] = self._clock()

    def _seen_all(self, code: str) -> dict[str, float]:
        with self._lock:
            return dict(self._room(code).seen)

    def _active(self, code: str) -> int:
        with self._lock:
            return self._active_in(self._room(code))
