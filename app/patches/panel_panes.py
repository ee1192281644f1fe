"""A pane's wrapping layout built when something asks for it, not for every pane.

Panel's `PaneBase.__init__` gives every pane a `layout` (a Row holding the pane alone) and a
watcher that copies the pane's twenty-odd layout parameters onto that Row at every change.
The Row is used only when the pane itself is the thing shown (`pn.panel(obj)`, a pane served
as the page's root, a pane whose object changes to one it cannot update in place, `pane[0]`).
The lab puts its panes inside its own layouts, so each page carried a few dozen such Rows
that never reached the browser, each a full Panel layout with its own watchers
(docs/patches.md has what they held).

`pane_layouts_on_demand()` replaces `PaneBase.__init__` with Panel's own minus those two
lines and makes `layout` a property that builds the Row (and its watcher) on first read, from
the pane's parameters at that moment, exactly as Panel's `_sync_layoutable()` would have left
it. A subclass that assigns `self.layout` (Panel's `Param` pane) keeps what it assigns.
"""

from __future__ import annotations

from app.patches.replace import Replacement, guarded_replace

# sha256 (first 16 hex digits) of Panel 1.9.4's PaneBase.__init__, as read: the patch applies
# only to this source (app/patches/replace.py).
CHECKED_SOURCE = "e183ce8d27dd816f"

_SLOT = "_lab_pane_layout"


def pane_layouts_on_demand() -> bool:
    """Give Panel's panes a layout built on first use, once per process; False (nothing
    changed) when this Panel's `PaneBase.__init__` is not the one read."""
    from panel.pane.base import PaneBase
    from panel.viewable import Layoutable

    def __init__(self, object=None, **params):
        self._object_changing = False
        super(PaneBase, self).__init__(object=object, **params)
        if not hasattr(self, "_internal_callbacks"):
            self._internal_callbacks = []
        applies = self.applies(self.object, **(params if self._applies_kw else {}))
        if (isinstance(applies, bool) and not applies) and self.object is not None:
            self._type_error(self.object)

    def _get_layout(self):
        layout = self.__dict__.get(_SLOT)
        if layout is None:
            layout = self.__dict__[_SLOT] = self.default_layout(self)
            self._internal_callbacks.append(
                self.param.watch(self._sync_layoutable, list(Layoutable.param))
            )
            self._sync_layoutable()  # the Row takes the pane's sizes and margin, as at init
        return layout

    def _set_layout(self, layout):
        self.__dict__[_SLOT] = layout

    __init__.lab_lazy_layout = True
    if not getattr(PaneBase.__dict__["__init__"], "lab_lazy_layout", False):
        __init__.original = PaneBase.__dict__["__init__"]
    return guarded_replace(
        "pane_layouts_on_demand",
        Replacement(PaneBase, "__init__", __init__, CHECKED_SOURCE),
        Replacement(
            PaneBase,
            "layout",
            property(_get_layout, _set_layout, doc="the pane in a layout of its own"),
            added=True,
        ),
    )
