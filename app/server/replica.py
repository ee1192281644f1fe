"""Which server process built a page, for a lab served by several replicas behind a balancer.

Behind a balancer a dropped page can reconnect to a different process than the one that built
it: its replica stopped, and the balancer sent the reconnecting page elsewhere. That process
has never seen the page's session, so Bokeh builds a fresh one there, and the page cannot adopt
it (measured in Chromium: "Failed to repull session"); the page looks alive but its plots no
longer answer. The reload in app/server/reconnect.py does not come either, because the balancer
answers at once. So once the connection is lost, the page asks `/replica` which process answers
now, and reloads from its URL (which holds the whole lab) as soon as it is another one. A
reconnect to the same process (a Wi-Fi blip) changes nothing; a replica restarted in place
is a new process, so its pages reload too.

Every build also logs one "page built by <process>" line, so a deployment (and
tests/server/test_balancer.py) can count the builds per replica: one per page when stickiness
works, two when a page's websocket reaches another replica than its page.
"""

from __future__ import annotations

import json
import logging
import uuid

from bokeh.models import CustomJS
from tornado.web import RequestHandler

from app import js

# One random id per server process; a replica restarted under the same name gets a new one.
# Random only: /replica is public, so it names no host, address or PID.
PROCESS_ID = uuid.uuid4().hex[:16]
ENDPOINT = "replica"
POLL_S = 2

log = logging.getLogger("attention_lab.replica")


class ReplicaHandler(RequestHandler):
    """GET /replica: {"process": PROCESS_ID}, never cached (a proxy must not answer for us)."""

    def get(self) -> None:
        self.set_header("Content-Type", "application/json")
        self.set_header("Cache-Control", "no-store")
        self.write(json.dumps({"process": PROCESS_ID}))


# Runs in the browser when the websocket is lost (relative URL, so a --prefix is honoured).
_RELOAD_IF_ANOTHER_PROCESS = js.source(
    "replica_watch.js", ENDPOINT=ENDPOINT, PROCESS_ID=PROCESS_ID, POLL_MS=POLL_S * 1000
)


def mark_page(doc) -> None:
    """Install the reload-on-another-process watch and log the build (once per session)."""
    doc.js_on_event("connection_lost", CustomJS(code=_RELOAD_IF_ANOTHER_PROCESS))
    context = getattr(doc, "session_context", None)
    # `panel serve --log-level` sets Bokeh's logger only; follow it.
    log.setLevel(logging.getLogger("bokeh").getEffectiveLevel())
    log.info("page built by %s (session %s)", PROCESS_ID, getattr(context, "id", None))
