"""Every private part of Bokeh that tools/ uses, in one place, one named function each.

The load tools drive real sessions with `bokeh.client` and the benchmarks time a document's
updates in-process; four private attributes do what no public API does. They are held to the
Bokeh release app/patches/ is checked against (`CHECKED_AGAINST`), and listed in
docs/patches.md ("In the tools"); tests/app/test_patch_pins.py fails when any other module of
tools/ uses a private name of another package, or when the pinned Bokeh no longer has these.
"""

from __future__ import annotations

# The private attributes used below (class.attribute, in Bokeh 3.9.2): the pin test checks that
# the installed Bokeh still sets each, and docs/patches.md lists them.
USED = (
    "bokeh.client.session.ClientSession._connection",
    "bokeh.client.connection.ClientConnection._socket",
    "bokeh.client.websocket.WebSocketClientConnectionWrapper._socket",
    "bokeh.client.session.ClientSession._loop_until_closed",
    "bokeh.document.callbacks.DocumentCallbackManager._held_events",
)


def client_websocket(session):
    """Tornado's WebSocketClientConnection under a `bokeh.client` ClientSession: the session's
    ClientConnection (`_connection`), its WebSocketClientConnectionWrapper (`_socket`), and
    the wrapped Tornado connection (`_socket`). Its `headers` are the upgrade's response
    headers (where a balancer sets its cookie); its `protocol` owns the TCP stream."""
    return session._connection._socket._socket


def send_without_delay(session):
    """Turn off Nagle's delay on a client session's websocket, as a browser's is: a change
    (three frames) otherwise waited ~40 ms for the server's delayed ACK. Returns the Tornado
    connection (client_websocket)."""
    websocket = client_websocket(session)
    websocket.protocol.set_nodelay(True)
    return websocket


def loop_until_closed(session) -> None:
    """Run the session's IO loop until the session closes: `bokeh.client` handles the server's
    messages only while it runs (`ClientSession._loop_until_closed`; Bokeh 3 has no public
    `loop_until_closed`)."""
    session._loop_until_closed()


def take_held_events(doc) -> list:
    """The change events a held document (`doc.hold()`) has collected, removed from it, so
    that `doc.unhold()` sends nothing: a benchmark times the update and sizes its message
    without a connection to send it to (`DocumentCallbackManager._held_events`)."""
    events = list(doc.callbacks._held_events)
    doc.callbacks._held_events = []
    return events
