"""Two of Panel's per-component set-ups, doing what they did without the repeated work.

Every Panel component a page shows runs `Syncable._init_params` once, and every ReactiveHTML
component (the lab's small browser-side parts: the pointer, the tab keys, the tips by
keyboard, the live summary...) runs `ReactiveHTML._init_params`. Profiling a page build
(tools/bench_page.py) found two costs there that buy nothing:

- `Syncable._init_params` asks `p not in self._synced_params` for each parameter, and
  `_synced_params` is a property that builds a new list of every synced name at each ask:
  a square of the component's thirty-odd parameters, for every component of a page.
- `ReactiveHTML._init_params` reads each parameter's `precedence` and kind through
  `self.param[k]`, which copies the class's Parameter object into the instance the first time
  (Param's per-instance parameters): about two dozen copies per component, none ever changed.

`read_parameters_once()` replaces both with Panel's own code, changed only there: the synced
names are listed once per call (a set), and a parameter the instance has no object of its own
for is read from its class. Both return what Panel's return (tests/app/test_patch_functions.py
compares them for every component of a page); they apply only to the Panel source read
(`CHECKED_SOURCE`), else Panel is left alone and the log says so.
"""

from __future__ import annotations

import textwrap
from html import escape

from app.patches.replace import Replacement, guarded_replace

# sha256 (first 16 hex digits) of the two methods' source in Panel 1.9.4, as read.
CHECKED_SOURCE = {
    "Syncable._init_params": "3c20aeeded14dbf2",
    "ReactiveHTML._init_params": "f7e830a6d020657d",
}


def _originals() -> dict:
    from panel.reactive import ReactiveHTML, Syncable

    return {
        "Syncable._init_params": Syncable.__dict__["_init_params"],
        "ReactiveHTML._init_params": ReactiveHTML.__dict__["_init_params"],
    }


def synced_init_params(self) -> dict:
    """Panel's `Syncable._init_params`, with the synced names listed once."""
    synced = set(self._synced_params)
    params = {}
    for p in self.param:
        if p not in synced:
            continue
        v = getattr(self, p)
        if v is not None:
            params[p] = v
    return params


def reactive_html_init_params(self) -> dict:
    """Panel's `ReactiveHTML._init_params`, reading a parameter's class object where the
    instance has none of its own (the copy would hold the same precedence and kind)."""
    import param
    from panel.reactive import HTML_SANITIZER, Reactive
    from panel.viewable import Layoutable, Viewable

    own = self._param__private.params
    of_class = type(self).param
    ignored = list(Reactive.param)
    for child in self._parser.children.values():
        if self._child_config.get(child) != "literal":
            ignored.append(child)
    params = {
        p: getattr(self, p)
        for p in list(Layoutable.param)
        if getattr(self, p) is not None and p != "name"
    }
    data_params, event_params = {}, []
    for k in self.param:
        pobj = own[k] if k in own else of_class[k]
        v = getattr(self, k)
        if (
            (k in ignored and k != "name")
            or ((pobj.precedence or 0) < 0)
            or (isinstance(v, Viewable) and not isinstance(pobj, param.ClassSelector))
        ):
            continue
        if isinstance(v, str):
            v = HTML_SANITIZER.clean(v)
        data_params[k] = v
        if isinstance(pobj, param.Event):
            event_params.append(k)
    html, nodes, self._attrs = self._get_template()
    params.update(
        {
            "attrs": self._attrs,
            "callbacks": self._node_callbacks,
            "data": self._data_model(**self._process_param_change(data_params)),
            "events": self._get_events(),
            "event_params": event_params,
            "html": escape(textwrap.dedent(html)),
            "nodes": nodes,
            "looped": [node for node, _ in self._parser.looped],
            "scripts": {},
        }
    )
    for trigger, scripts in self._scripts.items():
        if not isinstance(scripts, list):
            scripts = [scripts]
        params["scripts"][trigger] = [escape(textwrap.dedent(script).strip()) for script in scripts]
    return params


NAME = "parameters_read_once"  # its name in app.patches.PROCESS_WIDE


def read_parameters_once() -> bool:
    """Install both, once per process; False (nothing changed) when this Panel's methods are
    not the source read."""
    from panel.reactive import ReactiveHTML, Syncable

    originals = _originals()
    if originals["Syncable._init_params"] is not synced_init_params:
        synced_init_params.original = originals["Syncable._init_params"]
        reactive_html_init_params.original = originals["ReactiveHTML._init_params"]
    return guarded_replace(
        NAME,
        Replacement(
            Syncable,
            "_init_params",
            synced_init_params,
            CHECKED_SOURCE["Syncable._init_params"],
        ),
        Replacement(
            ReactiveHTML,
            "_init_params",
            reactive_html_init_params,
            CHECKED_SOURCE["ReactiveHTML._init_params"],
        ),
    )
