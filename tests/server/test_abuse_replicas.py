"""A hostile room against two replicas behind the shipped HAProxy, sharing a Redis that wants
a password (issue #45): the attacks of tests/server/test_abuse.py that a balancer and a shared
store change. Every client here comes from one address, as a school's class does, and reaches
the replicas through the balancer only."""

from __future__ import annotations

import secrets

import pytest
import redis
from test_abuse import Browser, assert_key_in_no_token_or_page

from app.classroom import store as rules
from tools.harness import ReplicaRoom, haproxy_binary

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def guarded_room(tmp_path_factory):
    if haproxy_binary() is None:
        pytest.skip("HAProxy is not installed (apt-get install haproxy)")
    room = ReplicaRoom(
        tmp_path_factory.mktemp("abuse-replicas"),
        ("r1", "r2"),
        redis=True,
        redis_password=secrets.token_urlsafe(24),
    )
    room.start()
    yield room
    room.stop()


def test_redis_answers_the_replicas_and_nobody_without_the_password(guarded_room):
    teacher = Browser(guarded_room.base)
    teacher.open_lab()
    code = teacher.start_class()
    stranger = redis.Redis(port=guarded_room.redis.port, socket_connect_timeout=2)
    with pytest.raises(redis.AuthenticationError):
        stranger.sadd(f"alab:class:{code}:teachers", "made-up")  # the one-SADD takeover
    stranger.close()
    owner = redis.Redis.from_url(guarded_room.redis.url)
    assert owner.exists(f"alab:class:{code}:meta")  # the class lives there, behind it
    owner.close()


def test_a_spoofed_address_through_the_balancer_changes_nothing(guarded_room):
    # The balancer sets X-Real-IP from the connection, and the replicas believe only it: a new
    # forged address per request is still this one address's cookie-less bucket, counted in
    # the shared store whichever replica answers.
    client = Browser(guarded_room.base)
    statuses = []
    for n in range(rules.CREATES_PER_BROWSER + 2):
        forged = f"10.7.{n}.1"
        headers = {"X-Real-IP": forged, "X-Forwarded-For": forged, "Forwarded": f"for={forged}"}
        statuses.append(client.request("/class/new", method="POST", headers=headers)[0])
        client.jar.clear()  # no cookie: neither the lab's nor the balancer's
    assert statuses[: rules.CREATES_PER_BROWSER] == [303] * rules.CREATES_PER_BROWSER
    assert statuses[rules.CREATES_PER_BROWSER :] == [429, 429]


def test_one_browsers_class_starts_stop_nobody_else_on_the_address(guarded_room):
    eager = Browser(guarded_room.base)
    eager.open_lab()
    statuses = [
        eager.request("/class/new", method="POST")[0] for _ in range(rules.CREATES_PER_BROWSER + 1)
    ]
    assert statuses[-1] == 429 and statuses.count(303) == rules.CREATES_PER_BROWSER
    teacher = Browser(guarded_room.base)
    teacher.open_lab()
    assert teacher.start_class()


def test_the_teachers_key_is_in_no_token_through_the_balancer(guarded_room):
    teacher = Browser(guarded_room.base)
    teacher.open_lab()
    assert_key_in_no_token_or_page(teacher, teacher.start_class())
    assert teacher.request("/app/autoload.js?bokeh-autoload-element=x")[0] == 404
