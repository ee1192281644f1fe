"""What only the Redis store has: expiry in Redis, the append-only file, an outage, the channel."""

from __future__ import annotations

import json

import pytest
import redis
from test_store import Heard, student
from waiting import wait_until

from app.classroom import store as rules
from app.classroom.redis_store import CHANNEL, PARTS, RedisStore
from app.classroom.store import StoreUnavailable
from tools.harness import RedisServer


def test_every_key_of_a_class_expires_after_twelve_idle_hours(redis_url):
    store = RedisStore(redis_url)
    try:
        code, key = store.create()
        me = student()
        store.join(code, me, nickname="Ana")
        store.vote(code, me, 2, 1)
        store.measured(code, me, 2, True)
        store.arrived(code, me, 2)
        store.reveal(code, key, 2)
        other = student()
        store.join(code, other)
        store.remove_seat(code, key, rules.seat_ref(other))
        store.ask_to_teach(code, me)
        store.set_open(code, key, False)
        client = redis.Redis.from_url(redis_url)
        for part in PARTS:
            ttl = client.ttl(f"alab:class:{code}:{part}")
            assert rules.IDLE_S - 60 < ttl <= rules.IDLE_S, (part, ttl)
        client.expire(f"alab:class:{code}:votes", 100)
        store.vote(code, me, 3, 0)  # a write renews every key's expiry
        assert client.ttl(f"alab:class:{code}:votes") > rules.IDLE_S - 60
        client.close()
    finally:
        store.close()


def test_a_class_survives_a_redis_restart_with_its_append_only_file(tmp_path):
    server = RedisServer(tmp_path / "aof", appendonly=True).start()
    store = RedisStore(server.url, retry_s=0.1)
    try:
        assert store.wait_connected(10)
        code, key = store.create()
        me = student()
        store.join(code, me, nickname="Ana")
        store.set_step(code, key, 4)
        store.vote(code, me, 4, 2)
        server.kill()  # no shutdown save: only the append-only file has the class
        server.restart()
        wait_until(lambda: store.connected, "the store to reconnect", timeout=20)
        assert store.info(code).step == 4
        assert store.tally(code, 4).counts == {2: 1}
        assert store.is_teacher(code, key) and store.nicknames(code, key) == ["Ana"]
    finally:
        store.close()
        server.stop()


def test_an_outage_is_announced_refused_by_name_and_recovered(tmp_path):
    server = RedisServer(tmp_path / "outage", appendonly=True).start()
    store = RedisStore(server.url, retry_s=0.1)
    try:
        assert store.wait_connected(10)
        code, key = store.create()
        me = student()
        store.join(code, me)
        heard = Heard()
        store.subscribe(code, heard)
        server.kill()
        heard.wait_for("connection", 0)
        assert not store.connected
        with pytest.raises(StoreUnavailable, match="class connection is lost"):
            store.vote(code, me, 1, 1)
        server.restart()
        heard.wait_for("connection", 1)
        store.vote(code, me, 1, 1)  # the page's retry, once the store is back
        assert store.tally(code, 1).answered == 1
        other = RedisStore(server.url)
        assert other.wait_connected(10)
        other.set_step(code, key, 2)  # another replica's change reaches this one again
        heard.wait_for("step", 2)
        other.close()
    finally:
        store.close()
        server.stop()


def test_the_channel_ignores_what_is_not_ours(redis_url):
    store = RedisStore(redis_url)
    try:
        # Subscribed to the channel before anything is sent on it (and before this test
        # listens: on a busy machine the listener's "connected" came after subscribe()).
        assert store.wait_connected(10)
        code, key = store.create()
        heard = Heard()
        store.subscribe(code, heard)
        client = redis.Redis.from_url(redis_url)
        for junk in ("not json", '{"c": 1}', "x" * 10_000, json.dumps({"c": code, "k": "step"})):
            client.publish(CHANNEL, junk)
        client.close()
        store.set_step(code, key, 3)
        heard.wait_for("step", 3)
        assert heard.kinds() == [("step", 3)]
    finally:
        store.close()


def test_a_clients_address_is_never_kept_only_its_digest(redis_url):
    store = RedisStore(redis_url)
    try:
        store.create(client="203.0.113.9")
        with pytest.raises(rules.UnknownClass):
            store.join("AAAAAA", student(), client="203.0.113.9")
        client = redis.Redis.from_url(redis_url, decode_responses=True)
        everything = " ".join(
            [*client.keys("*"), *(str(client.get(k)) for k in client.keys("alab:rate:*"))]
        )
        client.close()
        assert "203.0.113.9" not in everything and "alab:rate:join:" in everything
    finally:
        store.close()


def test_a_pages_refresh_reads_redis_twice(redis_url, monkeypatch):
    # A student's page reads the class after each of its votes: the class (one pipeline) and
    # the step's tally with its own vote (one pipeline). It was six round trips, each holding
    # the replica's loop while a class of 200 voted.
    store = RedisStore(redis_url)
    try:
        code, key = store.create()
        a = student()
        store.join(code, a)
        store.set_step(code, key, 2)
        store.vote(code, a, 2, 0)
        calls = []
        real = store._call
        monkeypatch.setattr(store, "_call", lambda work: calls.append(work) or real(work))
        store.info(code)
        assert store.tally_and_vote(code, 2, a)[1] == 0
        assert len(calls) == 2
    finally:
        store.close()
