"""The script `panel serve` runs: one lab page per browser session."""

import panel as pn

from app.page.lab_page import create_app
from app.patches import apply_all, chosen
from app.server.cli import log_patches, models_from_environment
from app.server.closed_pages import quiet_closed_page_writes
from app.server.reconnect import reload_after_long_disconnection
from app.server.replica import mark_page

# The process-wide patches: `attention-lab` applied them at start, so this does nothing there;
# under a bare `panel serve app/server/serve.py` the first page applies those that
# ATTENTION_LAB_PATCHES names (its websocket handler then stays Bokeh's own: the route table
# was built before any page), and the log names them.
if not chosen():
    apply_all()
    log_patches()
# The model files ATTENTION_LAB_MODELS lists, under a bare `panel serve` (what
# `attention-lab --print-command` prints); `attention-lab` listed its own before serving.
models_from_environment()
# A tab closed mid-update leaves writes nobody awaits: one debug line, not two tracebacks
# (app/server/closed_pages.py). Once per loop; later pages find it installed.
quiet_closed_page_writes()
doc = pn.state.curdoc
# Bokeh re-walks the whole model graph (~670 models) after every root and every JS link added
# to a live document; frozen, it walks once at the end. Measured: page build 1.3 s -> 0.7 s CPU.
with doc.models.freeze():
    create_app().servable(title="Attention Lab")
# After an outage long enough for the server to have dropped this session, rebuild the page
# from its URL (which holds the whole lab) instead of leaving it attached to nothing.
reload_after_long_disconnection(doc)
# Behind a balancer: count builds per replica, and reload a page that reconnected elsewhere.
mark_page(doc)
