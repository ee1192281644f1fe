"""A ColumnDataSource's columns replaced, some of them, with the change carrying its own values.

Bokeh's `source.data.update(columns)` sends only those columns, but its event holds their names
alone (`ColumnDataChangedEvent(cols=...)`, no `data`): the values are read from the source when
the event is serialized. Inside a document hold (`pn.io.hold`: the page's every redraw) that is
when the hold ends, so a later change of the same source's row count in the same hold (a view
drawn twice, or drawn then concealed: app/views/covered.py) sends those columns at the new length
to a browser whose other columns still have the old one. BokehJS then throws "Size mismatch"
(seen in CI on steps 19 and 21); the next event mends the source, but the page has logged an
error. Here the event holds the values as they were set, so what it sends agrees with the
columns the browser holds at that point of the message, whatever follows.
"""

from __future__ import annotations

from bokeh.document.events import ColumnDataChangedEvent


def replace_columns(source, columns: dict) -> None:
    """`source.data.update(columns)`, as Bokeh does it (Python callbacks, validation), except
    that its event carries these `columns`' values instead of reading them later."""
    data = source.data
    old = data._saved_copy()
    dict.update(data, columns)
    sent = dict(columns)
    for owner, descriptor in data._owners:
        hint = ColumnDataChangedEvent(owner.document, owner, "data", data=sent, cols=list(columns))
        descriptor._notify_mutated(owner, old, hint=hint)
