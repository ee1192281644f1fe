"""Bring a page back to life after a long disconnection.

Bokeh reconnects a dropped websocket by itself (`pn.extension(reconnect=True)`). After a short
drop the server still holds the session and the page simply carries on. But the server discards
a session that has had no connection for its unused-session lifetime (15 s by default): after a
laptop sleeps through a lecture, Bokeh reconnects into a new session whose document the page
cannot adopt, and the page looks alive while its plots no longer answer. The lab keeps its
whole configuration in the URL, so the cure is a reload, which rebuilds the same lab from the
address bar.

So once the connection is lost, the page polls the liveness endpoint; when the server answers
again after an outage long enough that the session may be gone, it reloads. Shorter outages are
left to Bokeh, so a Wi-Fi blip does not reset the lesson on screen. (A server restarted faster
than that is the one case left to the user: reloading the same URL restores the same lab.)
"""

from __future__ import annotations

from bokeh.models import CustomJS

from app import js

# Below Bokeh's default unused-session lifetime (15 s), so no outage that can cost the session
# is left without a reload.
RELOAD_AFTER_S = 10
POLL_S = 2

_WATCH_AFTER_LOSS = js.source(
    "reconnect_watch.js", RELOAD_AFTER_MS=RELOAD_AFTER_S * 1000, POLL_MS=POLL_S * 1000
)


def reload_after_long_disconnection(doc) -> None:
    """Install the page callback on a session's Bokeh document (call once per session)."""
    doc.js_on_event("connection_lost", CustomJS(code=_WATCH_AFTER_LOSS))
