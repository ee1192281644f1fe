"""A component's design modifiers worked out once per kind of component, not on every change.

Panel 1.9 asks the page's design for a component's modifiers (`Design._get_modifiers`) on every
property change it sends to the browser, for every widget and pane of the page (they all carry
the lab's design, `LabDesign`). Panel caches the walk over the classes, but not the theme's two
stylesheets: `Theme.base_css` and `Theme.css` are `param.Filename`s, and every read resolves
the path on disk again (a `ParamOverrides` object, `os.getcwd`, `stat`): file-system work at
every change, a large share of what a class follower's page paid to follow a lesson step
(docs/patches.md and docs/performance.md, "A class", have the figures).

What the function returns follows from the design class, the component's class, the theme's
class, the two paths as set (before Param resolves them), `isolated`, and whether the document
is a served one. `cache_design_modifiers()` keys a table on those and hands back, for every
later call, a copy of what Panel's own function returned the first time (a new dict and a new
stylesheet list, as Panel builds them per call; the other values are the ones Panel itself
shares between calls). Only a theme whose stylesheets are Panel's own files (`THEME_CSS`, which
Panel turns into a fixed URL) is looked up in the table; any other theme, or none, goes to
Panel's function every time, since its stylesheets may depend on the request or the disk.
"""

from __future__ import annotations

import pathlib

import param

from app.patches.replace import Replacement, function_in, guarded_replace

# sha256 (first 16 hex digits) of the two Design classmethods in Panel 1.9.4, as read: each
# wrapper calls Panel's own with the arguments it takes there (app/patches/replace.py).
CHECKED_SOURCE = {"_get_modifiers": "c0320644de96a982", "_apply_modifiers": "27c5d26b5f687310"}
_STYLESHEETS = ("base_css", "css")


def _set_path(theme, name: str):
    """A Filename parameter's value as set, without Param resolving it on disk."""
    return param.Parameter.__get__(type(theme).param[name], theme, type(theme))


def _panels_own(path, theme_css: pathlib.Path) -> bool:
    if path is None:
        return True
    try:
        return pathlib.Path(path).resolve().is_relative_to(theme_css.resolve())
    except (OSError, TypeError):
        return False


def cache_design_modifiers() -> bool:
    """Put the table in front of Panel's `Design._get_modifiers`, once per process; False if
    this Panel's function is not the source read (then nothing is changed)."""
    from panel.io.state import state
    from panel.theme.base import THEME_CSS, Design, Theme

    original = function_in(Design.__dict__.get("_get_modifiers"))
    table: dict = {}
    own: dict = {}  # path as set -> whether it is one of Panel's theme files

    def _get_modifiers(cls, viewable, theme=None, isolated=True):
        if not isinstance(theme, Theme):
            return original(cls, viewable, theme, isolated)
        paths = tuple(_set_path(theme, name) for name in _STYLESHEETS)
        for path in paths:
            if path not in own:
                own[path] = _panels_own(path, THEME_CSS)
            if not own[path]:
                return original(cls, viewable, theme, isolated)
        doc = state.curdoc
        served = bool(doc.session_context) if not state._is_pyodide and doc else False
        key = (cls, type(viewable), type(theme), paths, isolated, served)
        found = table.get(key)
        if found is None:
            found = table[key] = original(cls, viewable, theme, isolated)
        modifiers, child_modifiers = found
        modifiers = dict(modifiers)
        if "stylesheets" in modifiers:
            modifiers["stylesheets"] = list(modifiers["stylesheets"])
        return modifiers, child_modifiers

    _get_modifiers.lab_cached = True
    _get_modifiers.original = original
    return guarded_replace(
        "design_modifiers_once",
        Replacement(
            Design, "_get_modifiers", classmethod(_get_modifiers), CHECKED_SOURCE["_get_modifiers"]
        ),
    )


def style_text_panes_as_their_updates_do() -> bool:
    """A text pane (HTML, Markdown) drawn with the stylesheets its first update would give it.

    A template renders its components with `isolated=False` (no theme stylesheets in their
    shadow roots), but a text pane's update recomputes its properties through
    `Design.params`, which is `isolated=True`: its first new text sent three more stylesheets
    with it, and each such swap made Bokeh walk the whole page's model graph (what that cost a
    class follower's second step is in docs/patches.md).
    Drawn isolated from the start, the first update finds the same stylesheets and sends
    none: the pane looks from its first paint as it looked after its first change. False if
    this Panel's `Design._apply_modifiers` is not the source read (then nothing is changed)."""
    from panel.pane.markup import HTMLBasePane
    from panel.theme.base import Design

    original = function_in(Design.__dict__.get("_apply_modifiers"))

    def _apply_modifiers(cls, viewable, mref, theme, isolated, cache=None, document=None):
        if not isolated and isinstance(viewable, HTMLBasePane):
            isolated = True  # as `Design.params` will at the pane's next update
        return original(cls, viewable, mref, theme, isolated, cache, document)

    _apply_modifiers.lab_text_panes = True
    _apply_modifiers.original = original
    return guarded_replace(
        "text_panes_styled_once",
        Replacement(
            Design,
            "_apply_modifiers",
            classmethod(_apply_modifiers),
            CHECKED_SOURCE["_apply_modifiers"],
        ),
    )
