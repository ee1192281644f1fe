"""Waiting in tests: for a condition or an event, never for a length of time.

A test that sleeps "long enough" is slow on a fast machine and flaky on a busy one. Wait for the
event that says the thing happened (a process's output, a Playwright `wait_for_function`, a
`threading.Event`); where nothing announces it, poll for it with `wait_until`, which returns
as soon as the condition holds and fails, naming what it waited for, once the deadline passes.
`wait_until` lives in tools/harness.py, which starts the suite's servers with it: it holds the
suite's one sleep between polls.

To show that something did NOT happen, do not wait and look: send a marker after it and wait
for the marker's answer (tests/browser/labpage.py's `server_round_trip`), then look.
"""

from __future__ import annotations

from tools.harness import wait_until

__all__ = ["wait_until"]
