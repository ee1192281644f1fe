"""Handing work from another thread (a torch worker, the causal map, the class store's
listener) to a page's own session, where every change to its document must happen.

Bokeh's `Document.add_next_tick_callback` is not safe to call from another thread after all:
while the session holds its document (Panel does, around much of its event handling) the
callback's announcement is appended to the hold's list, and an append that lands while the
session thread is releasing the hold is dropped, so the work never runs. Measured here: 12 of
20,000 such calls lost against a thread that holds and releases in a loop. A page that lost
its class store's wake-up never heard from its class again.

So a worker hands the work to the server's event loop with tornado's `add_callback` (safe from
any thread), and the loop adds the next-tick callback on its own thread, where holds happen.

One hand-over per turn of the loop, and what can wait after what cannot. A class's Next wakes
every follower at once: handed over together, their refreshes (30 to 110 ms each) ran back to
back in one turn, and meanwhile the loop read nothing from the network (with 67 students on a
replica the balancer's health check went unanswered for 5 s, and HAProxy took every replica out
of service; votes and the teacher's count of arrivals waited for the whole class). Queued, each
refresh has a turn of its own and the loop reads its sockets between them. Work a page only
tidies up later (`when_idle`: the settings a step shows, built after the step went out) waits
until nothing else is queued, so a Next overtakes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque

from panel.io.state import set_curdoc
from tornado.ioloop import IOLoop

log = logging.getLogger(__name__)


def on_session_thread(doc, loop: IOLoop | None = None, *, when_idle: bool = False):
    """A `deliver(work)` for this document: runs `work()` on its session's thread with the
    document locked and current, on a turn of the loop of its own (with `when_idle`, once no
    other hand-over is waiting). Make it on that thread (the page's build), or pass `loop`."""
    loop = loop or IOLoop.current()

    def deliver(work) -> None:
        def run() -> None:
            with set_curdoc(doc):
                work()

        def schedule() -> None:  # on the loop's thread
            try:
                doc.add_next_tick_callback(run)
            except Exception:  # noqa: BLE001 - the page closed while the worker ran
                log.debug("a background result outlived its page")

        try:
            loop.add_callback(_take_turn, loop, schedule, when_idle)
        except RuntimeError:  # the server's loop has closed: nobody is left to show it to
            log.debug("a background result outlived its server")

    return deliver


class _Queue:
    """Hand-overs waiting for their turn on one loop: the urgent first."""

    def __init__(self) -> None:
        self.urgent: deque = deque()
        self.idle: deque = deque()
        self.woken = asyncio.Event()  # set when an urgent one is queued: it ends a pause

    def __bool__(self) -> bool:
        return bool(self.urgent or self.idle)

    def pop(self):
        return (self.urgent or self.idle).popleft()


IDLE_PAUSE = 0.15  # seconds after each hand-over that can wait
# The loop's id -> its queue, while it has one. Touched on that loop's thread only.
_queues: dict[int, _Queue] = {}


def _take_turn(loop: IOLoop, schedule, when_idle: bool) -> None:
    """On the loop's thread: queue `schedule`, and start taking turns if nobody is."""
    queue = _queues.get(id(loop))
    if queue is None:
        queue = _queues[id(loop)] = _Queue()
        loop.add_callback(_turns, id(loop), queue)
    if when_idle:
        queue.idle.append(schedule)
    else:
        queue.urgent.append(schedule)
        queue.woken.set()


async def _turns(key: int, queue: _Queue) -> None:
    """Schedule one hand-over for the next turn, and let the loop take it (and read its
    sockets) before the next."""
    try:
        while queue:
            if queue.urgent:
                queue.pop()()
                await asyncio.sleep(0)
                continue
            queue.pop()()
            # After work that can wait, a pause of a few turns (ended by urgent work): a
            # click's way through the server (socket, Bokeh, Panel, the handler) takes several
            # turns, which would otherwise each wait for one more piece of it.
            queue.woken.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(queue.woken.wait(), IDLE_PAUSE)
    finally:
        _queues.pop(key, None)
