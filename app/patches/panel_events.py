"""Widgets that answer a browser change at once, and clicks handled under the document lock.

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

from app.patches.replace import Replacement, guarded_replace

# sha256 (first 16 hex digits) of Panel 1.9.4's `Syncable._server_event`, as read: the
# replacement is that method with one branch changed (app/patches/replace.py).
CHECKED_SERVER_EVENT = "c9fc478dda3cc1ad"

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


def clicks_under_the_document_lock() -> bool:
    """Handle a browser event (a button's click) that arrives while a change from the same page
    is still pending under the session's document lock, as every other callback is; False if
    this Panel's method is not the source read (then nothing is changed).

    Panel 1.9.4's `Syncable._server_event` hands such an event to `state.execute(...,
    schedule=True)`, which runs a coroutine through param's `async_executor`: on the loop, but
    outside Bokeh's document lock. The click's handler then changes the document, Bokeh raises
    "_pending_writes should be non-None when we have a document lock", and the click is lost
    (measured: "On to step 3" pressed by keyboard right after the Tab that reached it, which
    the page answers with a change of its own; any click that follows a change from its page
    that closely is exposed alike). Bokeh's
    `add_next_tick_callback` runs the same coroutine under the lock."""
    from functools import partial

    from panel.io.state import state
    from panel.reactive import Syncable

    def _server_event(self, doc, event) -> None:
        if doc.session_context and (not state._unblocked(doc) or doc in state._change_callbacks):
            doc.add_next_tick_callback(partial(self._event_coroutine, doc, event))
        else:
            self._comm_event(doc, event)

    _server_event._lab_locked = True
    return guarded_replace(
        "clicks_under_the_lock",
        Replacement(Syncable, "_server_event", _server_event, CHECKED_SERVER_EVENT),
    )
