"""Log lines without whole session ids or tokens.

A lab's terminal is often the one on the projector, and Bokeh, Panel and the lab's own lines
name a session by its full id at INFO; a session id (or a token, which holds one) is enough
to attach to that page where sessions are not signed. Every log record of the process has any
run of 32 or more id characters cut to its first six.
"""

from __future__ import annotations

import logging
import re

_LONG_ID = re.compile(r"[A-Za-z0-9_\-]{32,}(?:\.[A-Za-z0-9_\-]+)*")
_installed = False


def shorten(text: str) -> str:
    return _LONG_ID.sub(lambda m: m.group(0)[:6] + "…", text)


def shorten_session_ids() -> None:
    """Install the record factory that shortens ids, once per process."""
    global _installed
    if _installed:
        return
    _installed = True
    make = logging.getLogRecordFactory()

    def factory(*args, **kwargs):
        record = make(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - leave a record that cannot format as it is
            return record
        short = shorten(message)
        if short != message:
            record.msg, record.args = short, ()
        return record

    logging.setLogRecordFactory(factory)
