"""Every private part of Bokeh that tools/ uses, in one place, one named function each.

The load tools drive real sessions with `bokeh.client` and the benchmarks time a document's
updates in-process; four private attributes do what no public API does. They are held to the
Bokeh release app/patches/ is checked against (`CHECKED_AGAINST`), and listed in
docs/patches.md ("In the tools"); tests/app/test_patch_pins.py fails when any other module of
tools/ uses a private name of another package, or when the pinned Bokeh no longer has these.
"""

from __future__ import annotations

import threading

# The private attributes used below (class.attribute, in Bokeh 3.9.2): the pin test checks that
# the installed Bokeh still sets each, and docs/patches.md lists them.
USED = (
    "bokeh.client.session.ClientSession._connection",
    "bokeh.client.connection.ClientConnection._socket",
    "bokeh.client.websocket.WebSocketClientConnectionWrapper._socket",
    "bokeh.client.session.ClientSession._loop_until_closed",
    "bokeh.client.session.ClientSession._attach_document",
    "bokeh.client.connection.ClientConnection._protocol",
    "bokeh.client.connection.ClientConnection._send_message_wait_for_reply",
    "bokeh.document.document.Document._config",
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


def pull_document(session) -> None:
    """`session.pull()` with the document built in one walk of its models, not 1 + roots + 1.

    Bokeh's client pull (`Document.replace_with_json`) adds the reply's roots one by one to a
    document that is not frozen, so each root re-walks every model added before it, then
    moves them all to the session's document, which walks them again: 370 ms of CPU for the
    lab's page here, 40% of it the final move. A browser builds the page once; a simulated one
    that pays three times as much takes the server's cores from it (tools/classload.py opens
    200 at once on the same machine). Same messages to and from the server as `pull()`."""
    from bokeh.core.serialization import Deserializer, Serialized
    from bokeh.document import Document

    session.connect()
    session.check_connection_errors()
    connection = session._connection
    reply = connection._send_message_wait_for_reply(connection._protocol.create("PULL-DOC-REQ"))
    if reply is None:
        raise RuntimeError("Connection to server was lost")
    if reply.header["msgtype"] == "ERROR":
        raise RuntimeError("Failed to pull document: " + reply.content["text"])
    content = dict(reply.content["doc"], defs=[])  # as Document.from_json sets it
    found = Deserializer().deserialize(Serialized(content, reply.buffers))
    doc = Document()
    doc._config = found["config"]
    with doc.models.freeze():  # one walk, when the last root is in
        for root in found["roots"]:
            doc.add_root(root)
    doc.title = found["title"]
    session._attach_document(doc)


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


_cookie_header = threading.local()


def send_cookies_from_this_thread(cookies: dict[str, str]) -> None:
    """Every websocket this thread's Bokeh client opens from now on carries these cookies in
    its request, as a browser's does: the lab reads a teacher's key from that request, never
    from the session token (app/server/guard.py). Bokeh's `ClientConnection._connect_async`
    builds its request with the module's `HTTPRequest` and no headers; the module name is
    wrapped once per process, and it adds this thread's cookies (none: nothing)."""
    import bokeh.client.connection as connection

    if not getattr(connection.HTTPRequest, "adds_thread_cookies", False):
        base = connection.HTTPRequest

        def request(url, *args, **kwargs):
            header = getattr(_cookie_header, "value", "")
            if header:
                kwargs["headers"] = {**(kwargs.get("headers") or {}), "Cookie": header}
            return base(url, *args, **kwargs)

        request.adds_thread_cookies = True
        connection.HTTPRequest = request
    _cookie_header.value = "; ".join(f"{name}={value}" for name, value in cookies.items())
