"""A closed page's unawaited websocket writes make one debug line, not two tracebacks."""

from __future__ import annotations

import asyncio
import gc
import logging
from concurrent.futures import ThreadPoolExecutor

from tornado.websocket import WebSocketClosedError

from app.server.closed_pages import quiet_closed_page_writes


def in_a_fresh_thread(test):
    """Run `test` in a thread of its own: the pytest worker's thread may hold Playwright's
    running loop (the browser tests' session Chromium), where no other loop can run."""

    def run(*args, **kwargs):
        with ThreadPoolExecutor(1) as pool:
            return pool.submit(test, *args, **kwargs).result()

    run.__name__, run.__doc__ = test.__name__, test.__doc__
    return run


def _leave_unretrieved(loop, make_error) -> None:
    async def fail():
        raise make_error()

    task = loop.create_task(fail())
    loop.run_until_complete(asyncio.wait([task]))  # done, its exception not retrieved
    assert task.done()
    del task
    gc.collect()  # the task's __del__ reports its exception to the loop's handler


def test_closed_page_writes_are_quiet_and_every_other_error_is_still_logged(caplog):
    in_a_fresh_thread(_quiet_and_logged)(caplog)


def _quiet_and_logged(caplog):
    loop = asyncio.new_event_loop()
    try:
        assert quiet_closed_page_writes(loop) and quiet_closed_page_writes(loop)  # once
        with caplog.at_level(logging.DEBUG):
            _leave_unretrieved(loop, WebSocketClosedError)
            quiet = [r for r in caplog.records if r.levelno >= logging.WARNING]
            assert quiet == []
            assert any("page that had closed" in r.getMessage() for r in caplog.records)
            _leave_unretrieved(loop, lambda: ZeroDivisionError("a real bug"))
        errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1 and "never retrieved" in errors[0].getMessage()
        assert isinstance(errors[0].exc_info[1], ZeroDivisionError)
    finally:
        loop.close()


def test_without_a_running_loop_nothing_is_installed():
    assert in_a_fresh_thread(quiet_closed_page_writes)() is False
