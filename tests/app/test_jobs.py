"""The one latest-result job (app/state/jobs.py): the newest work wins, a stale result never
arrives, a failure is shown, work takes turns on a shared pool, settle() never hangs and a
closed page hears nothing more."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.state.jobs import HandOver, LatestJob, settle_all


@pytest.fixture
def pool():
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="test-jobs")
    yield pool
    pool.shutdown(wait=True, cancel_futures=True)


def held_job(pool, **kw):
    """A job whose hand-overs wait in a list, as on a page until its next tick."""
    held: list = []
    return LatestJob(pool.submit, held.append, **kw), held


def arrive(held: list) -> None:
    while held:
        held.pop(0)()


def test_the_newest_work_wins_and_work_waiting_for_an_older_request_never_runs(pool):
    job, held = held_job(pool)
    shown, ran, gate = [], [], threading.Event()

    def task(ticket, name, wait=False):
        if wait:
            assert gate.wait(60)
        ran.append(name)
        ticket.deliver(shown.append, name)

    job.submit(task, "first", True)
    job.submit(task, "second")  # waits behind the first, then is replaced
    job.submit(task, "third")
    gate.set()
    assert job.settle(60)
    arrive(held)
    assert ran == ["first", "third"] and shown == ["third"]


def test_work_already_queued_on_the_pool_does_nothing_once_stale(pool):
    busy, gate, ran = LatestJob(pool.submit), threading.Event(), []
    busy.submit(lambda ticket: gate.wait(60))  # another session holds the only worker
    job = LatestJob(pool.submit)
    job.submit(lambda ticket: ran.append("older"))  # handed to the pool, behind the other
    job.submit(lambda ticket: ran.append("newer"))
    gate.set()
    assert settle_all((busy, job), 60)
    assert ran == ["newer"]


def test_a_result_that_went_stale_on_its_way_is_dropped_on_the_sessions_thread(pool):
    job, held = held_job(pool)
    shown = []
    job.submit(lambda ticket: ticket.deliver(shown.append, "old"))
    assert job.settle(60) and len(held) == 1  # on its way to the page
    job.drop()  # the page showed something newer meanwhile
    arrive(held)
    assert shown == []


def test_a_long_task_sees_it_is_stale_between_its_steps(pool):
    job, held = held_job(pool)
    started, steps, go_on = threading.Event(), [], threading.Event()

    def long_task(ticket):
        for step in range(1000):
            if ticket.stale():
                return
            steps.append(step)
            started.set()
            assert go_on.wait(60)

    job.submit(long_task)
    assert started.wait(60)
    job.submit(lambda ticket: None)
    go_on.set()
    assert job.settle(60)
    assert steps == [0]  # it went stale during its first step and took no second


def test_a_failure_is_delivered_and_a_stale_one_is_not(pool):
    failures: list[str] = []
    job, held = held_job(pool, failed=failures.append)

    def boom(ticket):
        raise RuntimeError("the backend fell over")

    job.submit(boom)
    assert job.settle(60)
    arrive(held)
    assert failures == ["RuntimeError: the backend fell over"]
    job.submit(boom)
    assert job.settle(60)
    job.drop()
    arrive(held)
    assert failures == ["RuntimeError: the backend fell over"]


def test_settle_says_busy_until_the_work_ends_and_never_hangs(pool):
    job, held = held_job(pool)
    gate = threading.Event()
    job.submit(lambda ticket: gate.wait(60))
    assert not job.settle(0.0) and job.busy
    gate.set()
    assert job.settle(60) and not job.busy


def test_settle_returns_when_the_pool_refuses_the_work():
    def closed_pool(fn):
        raise RuntimeError("cannot schedule new futures after shutdown")

    job = LatestJob(closed_pool)
    job.submit(lambda ticket: None)
    assert job.settle(5)


def test_a_delivery_that_fails_without_a_page_is_shown_as_the_tasks_failure(pool):
    failures: list[str] = []
    job = LatestJob(pool.submit, failed=failures.append)  # delivered at once, on the worker

    def show(value):
        raise ValueError(f"cannot show {value}")

    job.submit(lambda ticket: ticket.deliver(show, 3))
    assert job.settle(60)
    assert failures == ["ValueError: cannot show 3"]


def test_the_next_step_of_a_job_waits_behind_other_sessions_work(pool):
    order, gate = [], threading.Event()
    alice, bob = LatestJob(pool.submit), LatestJob(pool.submit)

    def steps(ticket, left):
        order.append(f"alice {left}")
        if left == 3:
            assert gate.wait(60)
        if left > 1:
            ticket.then(steps, left - 1)

    alice.submit(steps, 3)
    bob.submit(lambda ticket: order.append("bob"))  # queued on the pool while Alice works
    gate.set()
    assert settle_all((alice, bob), 60)
    assert order == ["alice 3", "bob", "alice 2", "alice 1"]


def test_one_step_at_a_time_per_job_on_a_shared_pool():
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="test-jobs-2")
    try:
        job, other = LatestJob(pool.submit), LatestJob(pool.submit)
        gate, running = threading.Event(), threading.Semaphore(0)

        def blocked(ticket):
            running.release()
            assert gate.wait(60)

        job.submit(blocked)
        assert running.acquire(timeout=60)
        for _ in range(5):
            job.submit(blocked)  # a session changing its mind: one worker, not six
        ran = threading.Event()
        other.submit(lambda ticket: ran.set())
        assert ran.wait(60)  # the pool's other worker was still free for another session
        gate.set()
        assert settle_all((job, other), 60)
    finally:
        pool.shutdown(wait=True)


def test_a_closed_page_hears_nothing_more_and_asks_nothing_more(pool):
    job, held = held_job(pool)
    shown, ran, gate = [], [], threading.Event()

    def task(ticket, name):
        assert gate.wait(60)
        ran.append(name)
        ticket.deliver(shown.append, name)

    job.submit(task, "under way")
    job.stop()
    job.submit(task, "after the page closed")
    gate.set()
    assert job.settle(60)
    arrive(held)
    assert shown == [] and held == [] and "after the page closed" not in ran


def test_a_hand_over_runs_at_once_until_a_page_points_it_at_its_thread():
    handover, done = HandOver(), []
    handover(lambda: done.append("at once"))
    assert done == ["at once"] and not handover.served
    later: list = []
    handover.to = later.append
    handover(lambda: done.append("on the page"))
    assert handover.served and done == ["at once"] and len(later) == 1
