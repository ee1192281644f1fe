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
"""

from __future__ import annotations

import logging

from panel.io.state import set_curdoc
from tornado.ioloop import IOLoop

log = logging.getLogger(__name__)


def on_session_thread(doc, loop: IOLoop | None = None):
    """A `deliver(work)` for this document: runs `work()` on its session's thread with the
    document locked and current. Make it on that thread (the page's build), or pass `loop`."""
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
            loop.add_callback(schedule)
        except RuntimeError:  # the server's loop has closed: nobody is left to show it to
            log.debug("a background result outlived its server")

    return deliver
