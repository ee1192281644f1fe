"""Work handed to a page from other threads arrives, all of it, while the page's session holds
and releases its document as Panel does around its event handling.

Bokeh's own `add_next_tick_callback`, called from another thread, drops a callback now and
then in exactly this situation (app/page/session_thread.py); this lost a class store wake-up
and left a teacher's chart stale for good. The loop here is a real tornado IOLoop on its own
thread standing in for the server's, and the count is of what reaches the document's change
callbacks, which is how a Bokeh server session learns that a callback is due. The loss itself
is a race (12 of 20,000 calls in one run here); what prevents it is that the document is touched on the
session's thread only, and that is what the test checks every time.
"""

from __future__ import annotations

import threading

from bokeh.document import Document
from bokeh.document.events import SessionCallbackAdded
from tornado.ioloop import IOLoop

from app.page.session_thread import on_session_thread
from tests.waiting import wait_until

WORKERS, EACH = 2, 10_000


def _loop_on_a_thread() -> tuple[IOLoop, threading.Thread]:
    started = threading.Event()
    box: dict[str, IOLoop] = {}

    def run_loop() -> None:
        box["loop"] = IOLoop()
        started.set()
        box["loop"].start()

    thread = threading.Thread(target=run_loop, daemon=True)
    thread.start()
    assert started.wait(10)
    return box["loop"], thread


def test_nothing_handed_over_from_other_threads_is_lost_while_the_session_holds():
    loop, loop_thread = _loop_on_a_thread()
    doc = Document()
    arrived = []
    doc.callbacks.on_change(
        lambda event: (
            arrived.append(threading.current_thread())
            if isinstance(event, SessionCallbackAdded)
            else None
        )
    )
    holding = threading.Event()
    holding.set()

    def hold_and_release() -> None:  # the session thread, busy with its own events
        if holding.is_set():
            doc.hold("combine")
            doc.unhold()
            loop.add_callback(hold_and_release)

    loop.add_callback(hold_and_release)
    deliver = on_session_thread(doc, loop)
    workers = [
        threading.Thread(target=lambda: [deliver(lambda: None) for _ in range(EACH)])
        for _ in range(WORKERS)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    # One hand-over per turn of the loop: they arrive over many turns.
    wait_until(lambda: len(arrived) >= WORKERS * EACH, "every hand-over to arrive", 60)
    holding.clear()
    loop.add_callback(loop.stop)
    loop_thread.join(10)
    assert len(arrived) == WORKERS * EACH
    # Every one was added on the session's thread, where holds begin and end: none can fall
    # between a hold's release and its list being cleared.
    assert {thread.name for thread in arrived} == {loop_thread.name}


class _ServedDocument:
    """What a served document does with a next-tick callback: the loop runs it next turn."""

    def __init__(self, loop: IOLoop):
        self.loop = loop

    def add_next_tick_callback(self, callback) -> None:
        self.loop.add_callback(callback)


def test_each_hand_over_has_a_turn_of_the_loop_and_what_can_wait_goes_last():
    # A class's Next wakes every follower at once: the loop must still get to its other work
    # (a health check, a vote, a click) between two followers' refreshes, not after them all;
    # and a page's tidying up (when_idle) waits behind every refresh handed over before it ran.
    loop, loop_thread = _loop_on_a_thread()
    order: list[str] = []
    done = threading.Event()
    doc = _ServedDocument(loop)
    deliver, when_idle = on_session_thread(doc, loop), on_session_thread(doc, loop, when_idle=True)

    def work(name: str, then=None):
        def run() -> None:
            order.append(name)
            if then is not None:
                then()

        return run

    other = lambda: loop.add_callback(order.append, "other work")  # noqa: E731 - due next turn
    gate = threading.Event()
    loop.add_callback(gate.wait, 10)  # the loop busy while everything is handed over
    when_idle(work("tidy up", then=done.set))  # handed over first, runs last
    deliver(work("follower 0", then=other))
    for k in range(1, 4):  # handed over together, from another thread, as the store does
        deliver(work(f"follower {k}"))
    gate.set()
    assert done.wait(10)
    loop.add_callback(loop.stop)
    loop_thread.join(10)
    assert order == [
        "follower 0",
        "other work",
        "follower 1",
        "follower 2",
        "follower 3",
        "tidy up",
    ], order


def test_urgent_work_ends_the_pause_after_work_that_can_wait(monkeypatch):
    from app.page import session_thread

    monkeypatch.setattr(session_thread, "IDLE_PAUSE", 60.0)  # a pause nobody would wait out
    loop, loop_thread = _loop_on_a_thread()
    doc = _ServedDocument(loop)
    tidied, refreshed = threading.Event(), threading.Event()
    on_session_thread(doc, loop, when_idle=True)(tidied.set)
    assert tidied.wait(10)
    on_session_thread(doc, loop)(refreshed.set)  # handed over during the pause
    assert refreshed.wait(10)
    loop.add_callback(loop.stop)
    loop_thread.join(10)
