"""The script `panel serve` runs: one lab page per browser session."""

import panel as pn

from app.main import create_app
from app.reconnect import reload_after_long_disconnection

create_app().servable(title="Attention Lab")
# After an outage long enough for the server to have dropped this session, rebuild the page
# from its URL (which holds the whole lab) instead of leaving it attached to nothing.
reload_after_long_disconnection(pn.state.curdoc)
