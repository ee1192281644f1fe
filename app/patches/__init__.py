"""Every use of a third-party internal, in one place: one module per area, one named function
per patch, each with its reason (docs/patches.md lists them, with what each buys and when to
remove it).

Process-wide patches (they change a class or a table every session shares):

- `bokeh_speedups`: seven of Bokeh's property functions, shortened process-wide.
- `panel_resources`: MathJax only for a page that shows TeX (Panel's bundle check, replaced).
- `panel_resources.serve_stylesheets_from_this_server`: no component stylesheet from Panel's
  CDN while the server serves its own resources (a lecture hall has no internet).
- `panel_design`: a component's design modifiers worked out once per kind of component, not
  on every change it sends.
- `panel_markdown`: a Markdown text rendered to HTML once per process, not per page and change.
- `panel_location`: a page's address read as a browser reads it (a `?` in a value, an IPv6 host).
- `server_routes.send_updates_without_delay`: a websocket handler with TCP_NODELAY, swapped
  into Bokeh's route table.
- `panel_events.clicks_under_the_document_lock`: a click that arrives while a change from its
  page is pending is handled under the session's document lock (it was lost).
- `panel_panes`: a pane's own wrapping layout built when read, not for every pane.
- `bokeh_owners`: a Bokeh container's owners in a tuple, not a set per container.
- `param_watchers`: an instance's watchers of a parameter in two slots, not a dict of lists.
- `panel_design.style_text_panes_as_their_updates_do`: a text pane drawn with the stylesheets
  its first update would send (that update made Bokeh walk the whole page).
- `panel_markdown.update_text_panes_with_their_text`: a text pane's new text sent alone, not
  every property of the pane recomputed.
- `panel_params`: a component's set-up lists its synced parameters once, and a ReactiveHTML
  component's reads its parameters without copying each into the instance.

Each goes through one guarded replace (`replace.guarded_replace`): what it replaces is checked
against the source read, or the patch is skipped with a warning in the log, and `undo(name)`
puts Panel's, Bokeh's or Param's own back. `apply_all()` applies the chosen ones, once, when
the server starts (app/server/cli.py's `serve`, and the served script app/server/serve.py for a
bare `panel serve`), and so does whatever builds pages without a server (the tests' conftest,
tools/bench_page.py, tools/bench_ui.py). `ATTENTION_LAB_PATCHES` (or `--patches`) chooses:
`all` (the default), `none`, `fixes` (the three that fix what a user sees, `FIXES`), or a
comma-separated list of names. With none, the lab runs on
Panel as its documentation describes it: slower, never wrong. Importing any module of the app
applies none of them.

Per object, applied where the object is made or dropped:

- `bokeh_glyphs`: a glyph class's positional argument names (for renderers built alone).
- `bokeh_columns`: a source's changed columns sent with their values, not read when the hold ends.
- `documents`: a session's stylesheets pinned to this server (a document's template variables).
- `html_language`: a page's `<html lang dir>` in its session's language (its template).
- `panel_events`: widgets that answer a browser change at once (Panel's debounce, busy counter).
- `panel_links`: the process-wide registry of Panel's JS callbacks, emptied for a closed page.
- `param_values`: a value checked against a parameter without setting it.
- `server_routes.serve_command`: the served route table (route rename, liveness, extra routes).

`CHECKED_AGAINST` (app/patches/pins.py) holds the releases every patch was read and tested
against. A test (tests/app/test_patch_pins.py) fails when the lock files or the installed
packages hold another release, so moving Bokeh or Panel starts with re-checking the patches.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterable

from app.patches import replace
from app.patches.pins import CHECKED_AGAINST, installed_version

__all__ = [
    "CHECKED_AGAINST",
    "ENV",
    "FIXES",
    "PROCESS_WIDE",
    "apply_all",
    "choose",
    "chosen",
    "installed_version",
    "installers",
    "summary",
    "undo_all",
]

ENV = "ATTENTION_LAB_PATCHES"  # also the --patches option's variable (app/server/options.py)


def installers() -> dict[str, Callable[[], bool]]:
    """Name -> the function that applies it (True: in), in the order apply_all applies them.
    What each buys, measured, is in docs/patches.md."""
    from app.patches import (
        bokeh_owners,
        bokeh_speedups,
        panel_design,
        panel_events,
        panel_location,
        panel_markdown,
        panel_panes,
        panel_params,
        panel_resources,
        param_watchers,
        server_routes,
    )

    return {
        # Bokeh recomputed, at every page build, defaults it then discards.
        "bokeh_speedups": bokeh_speedups.apply,
        # The lab shows no TeX, yet every page loaded MathJax.
        "mathjax_only_for_tex": panel_resources.load_mathjax_only_for_tex,
        # Every change a page sends re-read the theme's stylesheet paths from disk.
        "design_modifiers_once": panel_design.cache_design_modifiers,
        # Every following page parsed the same lesson texts again at every Next.
        "markdown_html_once": panel_markdown.cache_markdown_html,
        # A `?` inside a link's value or an IPv6 host blanked the page.
        "any_address_opens": panel_location.read_addresses_as_browsers_do,
        # An update's frames waited for the browser's delayed ACK (Nagle's algorithm).
        "websocket_nodelay": server_routes.send_updates_without_delay,
        # A click that came while a change from its page was pending was lost.
        "clicks_under_the_lock": panel_events.clicks_under_the_document_lock,
        # Every pane carried a Row of its own that no page of the lab shows.
        "pane_layouts_on_demand": panel_panes.pane_layouts_on_demand,
        # A set per Bokeh container, for its one owner.
        "owners_in_tuples": bokeh_owners.owners_in_tuples,
        # A dict and a list per watched parameter of every component.
        "compact_instance_watchers": param_watchers.compact_instance_watchers,
        # A text pane's first update swapped its stylesheets: a walk of the whole page.
        "text_panes_styled_once": panel_design.style_text_panes_as_their_updates_do,
        # A new text recomputed every property of its pane.
        "text_panes_send_their_text": panel_markdown.update_text_panes_with_their_text,
        # Each component listed its synced names once per parameter, and each ReactiveHTML
        # copied two dozen parameters it only read.
        "parameters_read_once": panel_params.read_parameters_once,
        # A part styled before it was shown took its stylesheets from Panel's CDN.
        "stylesheets_from_this_server": panel_resources.serve_stylesheets_from_this_server,
    }


# The process-wide patches, in the order apply_all applies them.
PROCESS_WIDE = (
    "bokeh_speedups",
    "mathjax_only_for_tex",
    "design_modifiers_once",
    "markdown_html_once",
    "any_address_opens",
    "websocket_nodelay",
    "clicks_under_the_lock",
    "pane_layouts_on_demand",
    "owners_in_tuples",
    "compact_instance_watchers",
    "text_panes_styled_once",
    "text_panes_send_their_text",
    "parameters_read_once",
    "stylesheets_from_this_server",
)
# Those that fix something a user sees (the rest buy speed or memory): `fixes` names them.
FIXES = ("any_address_opens", "clicks_under_the_lock", "stylesheets_from_this_server")
_chosen: tuple[str, ...] | None = None  # what the first apply_all chose; None: not yet
_lock = threading.Lock()


def choose(text: str) -> tuple[str, ...]:
    """The patches a choice names: `all` (or nothing), `none`, `fixes` (FIXES alone), or names
    separated by commas or spaces; ValueError (a predicate, as app/server/options.py reads it)
    names a stray word."""
    words = [word for word in re.split(r"[,;\s]+", text.strip().lower()) if word]
    if words in ([], ["all"]):
        return PROCESS_WIDE
    if words == ["none"]:
        return ()
    if words == ["fixes"]:
        return FIXES
    unknown = [word for word in words if word not in PROCESS_WIDE]
    if unknown:
        raise ValueError(
            f"names no patch ({', '.join(unknown)}); use all, none, fixes, or some of: "
            + ", ".join(PROCESS_WIDE)
        )
    return tuple(name for name in PROCESS_WIDE if name in words)


def apply_all(chosen: Iterable[str] | None = None) -> dict[str, bool]:
    """Apply the chosen process-wide patches, once per process; later calls only report.

    `chosen`: names of PROCESS_WIDE; None reads ATTENTION_LAB_PATCHES (unset: all). Returns,
    per name of PROCESS_WIDE, whether the patch is in (False: not chosen, or the installed
    release is not the source read, and the log says so)."""
    global _chosen
    with _lock:
        if _chosen is None:
            if chosen is None:
                _chosen = choose(os.environ.get(ENV, ""))
            else:
                chosen = list(chosen)
                _chosen = choose(",".join(chosen)) if chosen else ()
            install = installers()
            for name in _chosen:
                install[name]()
        return {name: replace.is_in(name) for name in PROCESS_WIDE}


def chosen() -> bool:
    """Whether apply_all has made its choice in this process."""
    return _chosen is not None


def summary() -> str:
    """The start-up log's line: the patches in, `none` when none is, and any skipped."""
    applied = [name for name in PROCESS_WIDE if replace.is_in(name)]
    skipped = [name for name in _chosen or () if name not in applied]
    line = "patches: " + (", ".join(applied) or "none")
    if skipped:
        line += f" (skipped, not the source read: {', '.join(skipped)})"
    return line


def undo_all() -> None:
    """Panel, Bokeh and Param as they ship again, and the choice forgotten (the next apply_all
    chooses anew): for tests and measurements. Objects made while a patch was in keep what it
    gave them, so undo before building pages, not between."""
    global _chosen
    with _lock:
        for name in reversed(PROCESS_WIDE):
            replace.undo(name)
        _chosen = None
