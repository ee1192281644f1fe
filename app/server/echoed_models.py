"""A calm server log when a page sends back a model the server sent it.

BokehJS marks every model that arrives in a server's patch as new (`Document._new_models`,
filled by `_apply_json_patch` and by the recompute after it) and forgets that mark only when it
next sends a patch of its own. If that next patch refers to such a model (a click on a button
the server has just built, such as a lesson part or a class panel's button made on demand), the
model goes back in full instead of as a reference. Bokeh's server finds the id it already
holds, keeps its own instance, ignores the copy and warns "BokehUserWarning: reference already
known" (bokeh/core/serialization.py, `_decode_object_ref`; a warning since bokeh#12915 because
"those situations are usually recoverable"). Nothing is lost or changed, and the page cannot
avoid it, so this one message is filtered out of the server's log; every other Bokeh warning
still shows (docs/patches.md, "Filtered warnings").
"""

from __future__ import annotations

import warnings

from bokeh.util.warnings import BokehUserWarning

ECHOED = r"reference already known '"


def quiet_echoed_models() -> None:
    """Filter Bokeh's warning for a model a page echoed back (process-wide, idempotent)."""
    warnings.filterwarnings("ignore", message=ECHOED, category=BokehUserWarning)
