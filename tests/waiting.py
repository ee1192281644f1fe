"""Waiting in tests: for a condition or an event, never for a length of time.

A test that sleeps "long enough" is slow on a fast machine and flaky on a busy one. Wait for the
event that says the thing happened (a process's output, a Playwright `wait_for_function`, a
`threading.Event`); where nothing announces it, poll for it with `wait_until`, which returns
as soon as the condition holds and fails, naming what it waited for, once the deadline passes.
This module holds the suite's one sleep between polls.

To show that something did NOT happen, do not wait and look: send a marker after it and wait
for the marker's answer (tests/browser/labpage.py's `server_round_trip`), then look.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    predicate: Callable[[], T],
    what: str,
    timeout: float = 30.0,
    *,
    interval: float = 0.05,
    pause: Callable[[float], object] = time.sleep,
) -> T:
    """Call `predicate` until it returns something truthy, and return that.

    `what` names the condition in the failure; `timeout` is a deadline, not a wait: a condition
    that holds at once returns at once. `pause(seconds)` runs between calls; a Playwright page
    passes its own (`lambda s: page.wait_for_timeout(s * 1000)`) so that the page's events keep
    being delivered while the test polls."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        pause(interval)
