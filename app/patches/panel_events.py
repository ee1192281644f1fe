"""Widgets that answer a browser change at once.

Panel waits 50 ms after a widget's first change from the browser before handling it (its
`_debounce`), which adds 50 ms to every update a student sees. Waiting buys nothing on a busy
class server: changes that arrive while the server works merge anyway, because Panel keeps one
pending change set per widget and schedules it once. So the lab's controls are handled on the
next turn of the server's loop instead.

The same widgets stay off Panel's busy counter: it is one per process, the page shows no busy
indicator, and keeping it cost every change two rounds of watcher bookkeeping.
"""

from __future__ import annotations

import panel as pn

# Panel's per-class knobs (Syncable._debounce, Reactive._busy__ignore) set per instance.
_NO_WAIT_MS = 0
_QUIET_EVENTS = ("value", "value_throttled", "value_input")


def respond_at_once(*widgets: pn.widgets.Widget) -> None:
    for widget in widgets:
        # A composite (an editable slider) talks to the browser through its parts.
        for part in widget.select(pn.widgets.Widget):
            part._debounce = _NO_WAIT_MS
            part._busy__ignore = [*part._busy__ignore, *_QUIET_EVENTS]


def widgets_of(obj) -> list[pn.widgets.Widget]:
    """The widgets an object holds as attributes (a view's controls)."""
    return [value for value in vars(obj).values() if isinstance(value, pn.widgets.Widget)]
