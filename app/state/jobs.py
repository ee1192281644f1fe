"""One session's slow work off its thread, the latest result winning. No Panel import.

A page's slow work (a torch snapshot, a model's runs, a causal map, the receipt's checks) runs on
a worker, and what it finds comes back to the session's own thread, where every change to the
page must happen. One idea, one mechanism:

- `LatestJob.submit(task, *args)` starts new work and makes every older piece of this job's work
  stale; `drop()` makes it stale without new work (the session shows something newer);
  `stop()` does so for good (the page closed: nothing more runs or arrives).
- The task runs as `task(ticket, *args)` wherever the job's `run_on` puts it (a process-wide
  pool, or the maps' turns): the job decides what is stale and what is delivered, the pool where
  and when work runs, so the pools stay bounded and shared by every session.
- A long task polls `ticket.stale()` between two steps (layers, batches) and gives up.
- `ticket.deliver(fn, *args)` hands `fn(*args)` (a result, or progress) to the session's thread
  through the job's one `deliver` callable; it is dropped there if the ticket went stale
  meanwhile, so a stale result is never shown. The check runs on the session's thread, where
  `submit` and `drop` are called, so no newer work can slip in between the check and `fn`.
- `ticket.then(task, *args)` queues the next step of the same work behind every other session's
  work on the same pool (a receipt advances a batch at a time, in turn with the others).
- A task that raises has its failure delivered through `failed(message)` (unless stale), so a
  failure is shown, never lost.
- `settle(timeout)` waits until none of the job's work is queued or running (tests, notebooks).

One step at a time per job: work submitted while a step runs waits in the job (only the newest
is kept), so a session that changes its mind ten times holds one worker, not ten.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable

log = logging.getLogger(__name__)

Deliver = Callable[[Callable[[], None]], None]


def at_once(work: Callable[[], None]) -> None:
    """The hand-over without a page: the work runs on the worker, at once."""
    work()


class HandOver:
    """How one session's results reach its thread, shared by every job of the session.

    `to` is the page's hand-over (`app/page/session_thread.py`); None (a notebook, a test)
    runs delivered work at once on the worker. Calling the object delivers."""

    def __init__(self, to: Deliver | None = None):
        self.to = to

    @property
    def served(self) -> bool:
        """True once a page hands results to its session's thread."""
        return self.to is not None

    def __call__(self, work: Callable[[], None]) -> None:
        (self.to or at_once)(work)


class Ticket:
    """One piece of a job's work: stale once newer work was submitted or the job dropped it."""

    def __init__(self, job: LatestJob, number: int):
        self._job, self._number = job, number

    def stale(self) -> bool:
        return self._number != self._job.newest

    def deliver(self, fn: Callable, *args, **kwargs) -> None:
        """Hand `fn(*args, **kwargs)` to the session's thread, unless stale when it arrives."""
        if self.stale():
            return  # no hand-over for a page that will drop it (or has closed)
        self._job.deliver(functools.partial(self._arrive, fn, args, kwargs))

    def _arrive(self, fn: Callable, args: tuple, kwargs: dict) -> None:
        if not self.stale():
            fn(*args, **kwargs)

    def then(self, task: Callable, *args) -> None:
        """Queue `task(self, *args)`, the next step of this work, behind others' work."""
        self._job.enqueue(self, task, args)


class LatestJob:
    """One session's background work of one kind: the newest submitted wins.

    `run_on(fn)` schedules `fn()` on a worker (`pool.submit`, or the maps' turns); `deliver`
    hands work to the session's thread; `failed(message)`, delivered, says why a task raised."""

    def __init__(
        self,
        run_on: Callable[[Callable[[], None]], object],
        deliver: Deliver = at_once,
        failed: Callable[[str], None] | None = None,
    ):
        self.deliver = deliver
        self._run_on = run_on
        self._failed = failed
        self._lock = threading.Condition()
        self.newest = 0  # the number of the newest work; a ticket of any other is stale
        self._queue: deque = deque()  # (ticket, task, args) waiting for the step at work
        self._running = False  # a step is at work or handed to the worker
        self._stopped = False

    def submit(self, task: Callable, *args) -> Ticket:
        """Start `task(ticket, *args)`; every older piece of work is stale from now on."""
        with self._lock:
            if not self._stopped:
                self.newest += 1
            ticket = Ticket(self, self.newest if not self._stopped else -1)
        self.enqueue(ticket, task, args)
        return ticket

    def drop(self) -> None:
        """Make the work submitted so far stale (the session shows something newer)."""
        with self._lock:
            self.newest += 1

    def stop(self) -> None:
        """The page closed: drop the work, refuse new work, deliver nothing more."""
        with self._lock:
            self._stopped = True
            self.newest += 1

    @property
    def busy(self) -> bool:
        """True while a step runs or waits."""
        return self._running

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until no step is running or waiting; True if idle. A hand-over to a page's
        thread may still be on its way."""
        with self._lock:
            return self._lock.wait_for(lambda: not self._running, timeout)

    def enqueue(self, ticket: Ticket, task: Callable, args: tuple) -> None:
        """Run `task(ticket, *args)` once no other step of this job is at work."""
        with self._lock:
            if ticket.stale():
                return
            self._queue = deque(step for step in self._queue if not step[0].stale())
            self._queue.append((ticket, task, args))
            if self._running:
                return  # it starts when the step at work ends
            self._running = True
        self._launch()

    def _launch(self) -> None:
        """Hand the next waiting step to the worker, or say the job is idle."""
        with self._lock:
            while self._queue and self._queue[0][0].stale():
                self._queue.popleft()
            if not self._queue:
                self._running = False
                self._lock.notify_all()
                return
            step = self._queue.popleft()
        try:
            self._run_on(functools.partial(self._run, *step))
        except Exception:  # noqa: BLE001 - a pool that shut down (the server stopping)
            log.exception("a background job could not be scheduled")
            with self._lock:
                self._queue.clear()
                self._running = False
                self._lock.notify_all()

    def _run(self, ticket: Ticket, task: Callable, args: tuple) -> None:
        try:
            if not ticket.stale():  # work queued for an older request does nothing
                task(ticket, *args)
        except Exception as exc:  # noqa: BLE001 - the page stays up and says what failed
            self._fail(ticket, exc)
        finally:
            self._launch()  # the next step goes behind whatever waits on the pool

    def _fail(self, ticket: Ticket, exc: Exception) -> None:
        if ticket.stale():
            return  # stale work gives up by raising (a cancelled map): nobody waits for it
        if self._failed is None:
            log.error("a background task failed", exc_info=exc)
            return
        try:
            ticket.deliver(self._failed, f"{type(exc).__name__}: {exc}")
        except Exception:  # noqa: BLE001 - delivered at once (no page), it failed again
            log.exception("a background task's failure could not be shown")


def settle_all(jobs: tuple[LatestJob, ...], timeout: float | None = None) -> bool:
    """Wait until none of `jobs` has work queued or running, `timeout` in all; True if idle."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        for job in jobs:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not job.settle(left):
                return False
        if not any(job.busy for job in jobs):  # none was given work while another settled
            return True


class HandsOver:
    """A state whose jobs deliver through `handover` (shared with its model's by default);
    setting `deliver` gives the state a hand-over of its own (a test's list, a notebook)."""

    handover: HandOver

    @property
    def deliver(self) -> Deliver:
        return self.handover

    @deliver.setter
    def deliver(self, to: Deliver) -> None:
        self.handover = HandOver(to)

    def hand_over(self, work) -> None:
        self.handover(work)  # read when work arrives: `deliver` may be set after the job starts
