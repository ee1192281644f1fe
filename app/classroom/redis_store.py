"""The Redis class store: a class shared by every replica behind a balancer.

Each class is a dozen keys under `alab:class:CODE:` (PARTS: meta, teachers, students, votes,
seat activity, devices asking to teach, ...), all given a fresh 12-hour expiry by every write,
so an idle class leaves with its data. A change is
published on one channel; each replica's listener thread hands it to that replica's own
subscribers, which pass it on to their sessions. A vote is written (and acknowledged by Redis)
before `vote` returns, so a page that says "counted" means it.

Redis down: every call raises StoreUnavailable, subscribers get a "connection" event, and the
listener retries once a second; when it is back, subscribers get "connection" again and
catch up by reading.
"""

from __future__ import annotations

import json
import threading
import time

import redis

from app.classroom.store import (
    ACTIVE_S,
    ENDED,
    IDLE_S,
    ClassInfo,
    ClassStore,
    Event,
    StoreUnavailable,
    UnknownClass,
    log,
)
from app.i18n.markers import N_

CHANNEL = "alab:events"
PARTS = (
    "meta",
    "teachers",
    "students",
    "revealed",
    "votes",
    "measured",
    "at",
    "seen",  # a sorted set: student -> the time of their last activity
    "extra",  # the small maps (devices, asks, removed seats, flags), field "part:name"
)
MAX_MESSAGE = 256  # bytes; anything longer on the channel is not ours


def _on_step(at: dict[str, str], step: int, active) -> int:
    """How many active seats the class's `at` hash places on `step`."""
    return sum(1 for student, value in at.items() if value == str(step) and student in active)


def _key(code: str, part: str) -> str:
    return f"alab:class:{code}:{part}"


class RedisStore(ClassStore):
    name = "redis"

    def __init__(self, url: str, *, idle_s: float = IDLE_S, retry_s: float = 1.0):
        super().__init__()
        self.url = url
        self._idle_s = max(1, int(idle_s))
        self._retry_s = retry_s
        self._redis = redis.Redis.from_url(
            url, decode_responses=True, socket_timeout=3, socket_connect_timeout=2
        )
        self._connected = False
        self._state_lock = threading.Lock()
        self._stop = threading.Event()
        self._pubsub = None
        self._listener = threading.Thread(
            target=self._listen, name="class-store-listener", daemon=True
        )
        self._listener.start()

    # -- connection -------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._connected

    def wait_connected(self, timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        while not self._connected and time.monotonic() < deadline:
            time.sleep(0.02)
        return self._connected

    def _set_connected(self, up: bool) -> None:
        with self._state_lock:
            changed, self._connected = self._connected != up, up
        if changed:
            log.warning("class store %s", "connected" if up else "lost its Redis; retrying")
            self._dispatch(Event("", "connection", int(up)))

    def _call(self, work):
        try:
            return work(self._redis)
        except redis.RedisError as exc:
            self._set_connected(False)
            raise StoreUnavailable(
                N_("the class connection is lost (its store cannot be reached); retrying")
            ) from exc

    def _listen(self) -> None:
        while not self._stop.is_set():
            pubsub = None
            try:
                pubsub = self._pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
                pubsub.subscribe(CHANNEL)
                self._set_connected(True)
                while not self._stop.is_set():
                    message = pubsub.get_message(timeout=0.5)
                    if message is not None:
                        self._receive(message.get("data"))
                    elif not self._connected:  # a call failed; the channel still answers
                        self._redis.ping()
                        self._set_connected(True)
            except Exception as exc:  # noqa: BLE001 - the listener must outlive any one message
                if self._stop.is_set():
                    break  # close() pulled the socket from under a read: nothing went wrong
                if isinstance(exc, redis.RedisError):
                    self._set_connected(False)
                else:
                    log.exception("class store listener")
                self._stop.wait(self._retry_s)
            finally:
                if pubsub is not None:
                    try:
                        pubsub.close()
                    except Exception:  # noqa: BLE001
                        pass

    def _receive(self, data) -> None:
        if not isinstance(data, str) or len(data) > MAX_MESSAGE:
            return
        try:
            message = json.loads(data)
            event = Event(str(message["c"]), str(message["k"]), int(message["s"]))
        except (ValueError, KeyError, TypeError):
            return
        if event.code:
            self._dispatch(event)

    def _publish(self, event: Event) -> None:
        data = json.dumps({"c": event.code, "k": event.kind, "s": event.step})
        self._call(lambda r: r.publish(CHANNEL, data))

    def close(self) -> None:
        self._stop.set()
        pubsub = self._pubsub
        if pubsub is not None:
            try:  # wakes a listener blocked on the socket
                pubsub.connection and pubsub.connection.disconnect()
            except Exception:  # noqa: BLE001 - it is closing anyway
                pass
        self._listener.join(timeout=3)
        self._redis.close()

    # -- keeping and fetching ---------------------------------------------------------------

    def _touch(self, pipe, code: str) -> None:
        for part in PARTS:
            pipe.expire(_key(code, part), self._idle_s)

    def _write(self, code: str, *commands) -> list:
        """Run commands in one MULTI transaction with the class's expiry renewed."""

        def work(r):
            pipe = r.pipeline(transaction=True)
            for command in commands:
                command(pipe)
            self._touch(pipe, code)
            return pipe.execute()

        return self._call(work)

    def _hit(self, key: str, limit: int, window_s: int, peek: bool = False) -> bool:
        name = f"alab:rate:{key}"
        if peek:
            count = self._call(lambda r: r.get(name))
            return int(count or 0) < limit

        def work(r):
            pipe = r.pipeline(transaction=True)
            pipe.set(name, 0, ex=window_s, nx=True)
            pipe.incr(name)
            return pipe.execute()[1]

        return self._call(work) <= limit

    def _create(self, code: str, key_digest: str) -> bool:
        meta = _key(code, "meta")
        if not self._call(lambda r: r.hsetnx(meta, "created", int(time.time()))):
            return False
        self._write(
            code,
            lambda p: p.hset(meta, mapping={"step": 0, "locked": 0}),
            lambda p: p.sadd(_key(code, "teachers"), key_digest),
        )
        return True

    def _exists(self, code: str) -> bool:
        return bool(self._call(lambda r: r.exists(_key(code, "meta"))))

    def _info(self, code: str) -> ClassInfo:
        def work(r):
            pipe = r.pipeline(transaction=False)
            pipe.hmget(_key(code, "meta"), "step", "locked", "created")
            pipe.smembers(_key(code, "revealed"))
            pipe.zcount(_key(code, "seen"), time.time() - ACTIVE_S, "+inf")
            pipe.hget(_key(code, "extra"), "flags:closed")
            return pipe.execute()

        (step, locked, created), revealed, students, closed = self._call(work)
        if created is None:
            raise UnknownClass(ENDED, code=code)
        return ClassInfo(
            code,
            int(step or 0),
            locked == "1",
            frozenset(int(s) for s in revealed),
            students,
            open=closed is None,
        )

    def _teacher_digests(self, code: str) -> list[str]:
        return list(self._call(lambda r: r.smembers(_key(code, "teachers"))))

    def _add_teacher(self, code: str, key_digest: str) -> None:
        self._write(code, lambda p: p.sadd(_key(code, "teachers"), key_digest))

    def _set(self, code: str, *, step: int | None, locked: bool | None) -> None:
        fields = {}
        if step is not None:
            fields["step"] = step
        if locked is not None:
            fields["locked"] = int(locked)
        if fields:
            self._write(code, lambda p: p.hset(_key(code, "meta"), mapping=fields))

    def _reveal(self, code: str, step: int) -> None:
        self._write(code, lambda p: p.sadd(_key(code, "revealed"), step))

    def _add_student(self, code: str, student: str, nickname: str, limit: int) -> bool | None:
        students = _key(code, "students")
        new = self._write(code, lambda p: p.hsetnx(students, student, nickname))[0]
        if not new:
            if nickname:
                self._write(code, lambda p: p.hset(students, student, nickname))
            return False
        if self._call(lambda r: r.hlen(students)) > limit:
            self._call(lambda r: r.hdel(students, student))
            return None
        return True

    def _has_student(self, code: str, student: str) -> bool:
        return bool(self._call(lambda r: r.hexists(_key(code, "students"), student)))

    def _nicknames(self, code: str) -> list[str]:
        return list(self._call(lambda r: r.hvals(_key(code, "students"))))

    def _vote(self, code: str, step: int, student: str, choice: int) -> None:
        self._write(code, lambda p: p.hset(_key(code, "votes"), f"{step}:{student}", choice))

    def _measured(self, code: str, step: int, student: str, borne_out: bool) -> None:
        self._write(
            code, lambda p: p.hset(_key(code, "measured"), f"{step}:{student}", int(borne_out))
        )

    def _tally(self, code: str, step: int):
        def work(r):
            pipe = r.pipeline(transaction=False)
            pipe.zcount(_key(code, "seen"), time.time() - ACTIVE_S, "+inf")
            pipe.hgetall(_key(code, "votes"))
            pipe.hgetall(_key(code, "measured"))
            return pipe.execute()

        joined, votes, measured = self._call(work)
        return (joined, *self._of_step(step, votes, measured))

    @staticmethod
    def _of_step(step: int, votes: dict, measured: dict) -> tuple[dict, dict]:
        """The step's votes and measurements, by student, from the class's hashes."""
        prefix = f"{step}:"
        return (
            {k[len(prefix) :]: int(v) for k, v in votes.items() if k.startswith(prefix)},
            {k[len(prefix) :]: v == "1" for k, v in measured.items() if k.startswith(prefix)},
        )

    def _vote_of(self, code: str, step: int, student: str) -> int | None:
        choice = self._call(lambda r: r.hget(_key(code, "votes"), f"{step}:{student}"))
        return None if choice is None else int(choice)

    def _step_view(self, code: str, step: int):
        def work(r):
            pipe = r.pipeline(transaction=False)
            pipe.hget(_key(code, "meta"), "created")
            pipe.sismember(_key(code, "revealed"), step)
            pipe.hgetall(_key(code, "at"))
            pipe.zrangebyscore(_key(code, "seen"), time.time() - ACTIVE_S, "+inf")
            pipe.hgetall(_key(code, "votes"))
            pipe.hgetall(_key(code, "measured"))
            return pipe.execute()

        created, revealed, at, active, votes, measured = self._call(work)
        if created is None:
            raise UnknownClass(ENDED, code=code)
        active = set(active)
        return (
            len(active),
            *self._of_step(step, votes, measured),
            bool(revealed),
            _on_step(at, step, active),
        )

    def _arrive(self, code: str, student: str, step: int) -> None:
        self._write(code, lambda p: p.hset(_key(code, "at"), student, step))

    def _arrived_on(self, code: str, step: int) -> int:
        def work(r):
            pipe = r.pipeline(transaction=False)
            pipe.hgetall(_key(code, "at"))
            pipe.zrangebyscore(_key(code, "seen"), time.time() - ACTIVE_S, "+inf")
            return pipe.execute()

        at, active = self._call(work)
        return _on_step(at, step, set(active))

    def _delete(self, code: str) -> None:
        self._call(lambda r: r.delete(*(_key(code, part) for part in PARTS)))

    def _now(self) -> float:
        return time.time()

    def _count(self, key: str) -> int:
        return int(self._call(lambda r: r.get(f"alab:rate:{key}")) or 0)

    # The class's small maps (teachers' device labels, devices asking, removed seats, the door)
    # share one hash, so that every write renews one key's expiry for them, not four.

    def _map_get(self, code: str, part: str, name: str) -> str | None:
        return self._call(lambda r: r.hget(_key(code, "extra"), f"{part}:{name}"))

    def _map_set(self, code: str, part: str, name: str, value: str) -> None:
        self._write(code, lambda p: p.hset(_key(code, "extra"), f"{part}:{name}", value))

    def _map_del(self, code: str, part: str, name: str) -> bool:
        # HDEL answers how many fields it removed: of two callers racing, one gets the 1.
        return self._call(lambda r: r.hdel(_key(code, "extra"), f"{part}:{name}")) == 1

    def _map_all(self, code: str, part: str) -> dict[str, str]:
        prefix = f"{part}:"
        every = self._call(lambda r: r.hgetall(_key(code, "extra")))
        return {k[len(prefix) :]: v for k, v in every.items() if k.startswith(prefix)}

    def _remove_teacher(self, code: str, key_digest: str) -> None:
        self._write(code, lambda p: p.srem(_key(code, "teachers"), key_digest))

    def _students(self, code: str) -> dict[str, str]:
        return dict(self._call(lambda r: r.hgetall(_key(code, "students"))))

    def _drop_student(self, code: str, student: str) -> None:
        def fields(r):
            pipe = r.pipeline(transaction=False)
            pipe.hkeys(_key(code, "votes"))
            pipe.hkeys(_key(code, "measured"))
            return pipe.execute()

        votes, measured = self._call(fields)
        mine = [f for f in votes if f.partition(":")[2] == student]
        measured_mine = [f for f in measured if f.partition(":")[2] == student]
        commands = [
            lambda p: p.hdel(_key(code, "students"), student),
            lambda p: p.hdel(_key(code, "at"), student),
            lambda p: p.zrem(_key(code, "seen"), student),
        ]
        if mine:
            commands.append(lambda p: p.hdel(_key(code, "votes"), *mine))
        if measured_mine:
            commands.append(lambda p: p.hdel(_key(code, "measured"), *measured_mine))
        self._write(code, *commands)

    def _saw(self, code: str, student: str) -> None:
        # Beside a write that renewed the class's expiry (the join, the vote, the arrival):
        # one round trip, with the key's own expiry for a class whose first seat this is.
        def work(r):
            pipe = r.pipeline(transaction=False)
            pipe.zadd(_key(code, "seen"), {student: time.time()})
            pipe.expire(_key(code, "seen"), self._idle_s)
            return pipe.execute()

        self._call(work)

    def _seen_all(self, code: str) -> dict[str, float]:
        pairs = self._call(lambda r: r.zrange(_key(code, "seen"), 0, -1, withscores=True))
        return dict(pairs)

    def _active(self, code: str) -> int:
        return int(
            self._call(lambda r: r.zcount(_key(code, "seen"), time.time() - ACTIVE_S, "+inf"))
        )
