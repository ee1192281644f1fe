"""Both class stores behind one fixture: every store test runs on each (a real redis-server)."""

from __future__ import annotations

import pytest

from app.classroom.memory import MemoryStore
from app.classroom.redis_store import RedisStore
from tools.harness import RedisServer


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server):
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.flushdb()  # each test starts from an empty database
    client.close()
    return redis_server.url


@pytest.fixture(params=["memory", "redis"])
def make_store(request):
    """A factory of stores of one kind; on Redis, each is another replica's view of one db."""
    made = []

    def make(**options):
        if request.param == "memory":
            store = made[0] if made and not options else MemoryStore(**options)
        else:
            store = RedisStore(request.getfixturevalue("redis_url"), **options)
            assert store.wait_connected(10), "the Redis store never connected"
        if store not in made:
            made.append(store)
        return store

    yield make
    for store in made:
        store.close()


@pytest.fixture
def store(make_store):
    return make_store()
