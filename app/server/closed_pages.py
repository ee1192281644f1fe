"""A calm server log when pages close mid-update.

Panel writes a page's update as several websocket frames, each a future awaited in turn by a
task (`panel.io.document._run_write_futures`). When a tab closes while an update is on its way,
Bokeh discards the session and cancels that task, so the frames still queued fail with
`WebSocketClosedError` and nobody awaits them: asyncio then logs "Task exception was never
retrieved" and two tracebacks per closed tab, which a teacher watching the terminal of a class
of 200 reads as a crash. Nothing is lost (the page is gone), so `quiet_closed_page_writes`
installs an exception handler on the server's loop that turns exactly those into one debug
line and hands every other unhandled exception to the handler that was there before.
"""

from __future__ import annotations

import asyncio
import logging

from tornado.iostream import StreamClosedError
from tornado.websocket import WebSocketClosedError

log = logging.getLogger(__name__)
CLOSED = (WebSocketClosedError, StreamClosedError)


def is_closed_page_write(context: dict) -> bool:
    """Is this loop error a write to a websocket that had closed, which nobody awaited?"""
    return isinstance(context.get("exception"), CLOSED) and "never retrieved" in str(
        context.get("message", "")
    )


def quiet_closed_page_writes(loop: asyncio.AbstractEventLoop | None = None) -> bool:
    """Install the handler on `loop` (default: the running one), once; True if it is in."""
    if loop is None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
    previous = loop.get_exception_handler()
    if getattr(previous, "lab_quiet", False):
        return True

    def handler(loop, context):
        if is_closed_page_write(context):
            log.debug("an update for a page that had closed was dropped")
        elif previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    handler.lab_quiet = True
    loop.set_exception_handler(handler)
    return True
