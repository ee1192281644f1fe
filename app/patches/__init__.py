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

All fourteen are applied by `apply_all()`, once, when the server starts (app/server/cli.py's
`serve`, and the served script app/server/serve.py for a bare `panel serve`), and by whatever
builds pages without a server (the tests' conftest, tools/bench_page.py, tools/bench_ui.py).
Importing any module of the app applies none of them.

Per object, applied where the object is made or dropped:

- `bokeh_glyphs`: a glyph class's positional argument names (for renderers built alone).
- `bokeh_columns`: a source's changed columns sent with their values, not read when the hold ends.
- `documents`: a session's stylesheets pinned to this server (a document's template variables).
- `panel_events`: widgets that answer a browser change at once (Panel's debounce, busy counter).
- `panel_links`: the process-wide registry of Panel's JS callbacks, emptied for a closed page.
- `param_values`: a value checked against a parameter without setting it.
- `server_routes.serve_command`: the served route table (route rename, liveness, extra routes).

`CHECKED_AGAINST` (app/patches/pins.py) holds the releases every patch was read and tested
against. A test (tests/app/test_patch_pins.py) fails when the lock files or the installed
packages hold another release, so moving Bokeh or Panel starts with re-checking the patches.
"""

from __future__ import annotations

import threading

from app.patches.pins import CHECKED_AGAINST, installed_version

__all__ = ["CHECKED_AGAINST", "PROCESS_WIDE", "apply_all", "installed_version"]

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
_applied: dict[str, bool] | None = None
_lock = threading.Lock()


def apply_all() -> dict[str, bool]:
    """Apply every process-wide patch, once per process; later calls only report.

    Returns, per name of PROCESS_WIDE, whether the patch is in (False: the installed release
    lacks what it patches, and the lab runs unpatched, as each module's log line says)."""
    global _applied
    with _lock:
        if _applied is None:
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

            _applied = {
                # A fifth of every page build went to Bokeh recomputing defaults it discards.
                "bokeh_speedups": bokeh_speedups.apply(),
                # The lab shows no TeX: 1.8 MB less JavaScript to load per page.
                "mathjax_only_for_tex": panel_resources.load_mathjax_only_for_tex(),
                # Every change a page sends re-read the theme's stylesheet paths from disk.
                "design_modifiers_once": panel_design.cache_design_modifiers(),
                # Every following page parsed the same lesson texts again at every Next.
                "markdown_html_once": panel_markdown.cache_markdown_html(),
                # A `?` inside a link's value or an IPv6 host blanked the page.
                "any_address_opens": panel_location.read_addresses_as_browsers_do(),
                # Raises if Panel's websocket route is gone: the server must not start without.
                "websocket_nodelay": server_routes.send_updates_without_delay() is not None,
                # A click that came while a change from its page was pending was lost.
                "clicks_under_the_lock": panel_events.clicks_under_the_document_lock(),
                # Every pane carried a Row of its own that no page of the lab shows.
                "pane_layouts_on_demand": panel_panes.pane_layouts_on_demand(),
                # A set per Bokeh container for its one owner: a sixth of a page's memory.
                "owners_in_tuples": bokeh_owners.owners_in_tuples(),
                # A dict and a list per watched parameter of every component: a fifth of a page.
                "compact_instance_watchers": param_watchers.compact_instance_watchers(),
                # A text pane's first update swapped its stylesheets: a walk of the whole page.
                "text_panes_styled_once": panel_design.style_text_panes_as_their_updates_do(),
                # A new text recomputed every property of its pane: a sixth of a follower's Next.
                "text_panes_send_their_text": panel_markdown.update_text_panes_with_their_text(),
                # Each component listed its synced names once per parameter, and each
                # ReactiveHTML copied two dozen parameters it only read: 6% of a page build.
                "parameters_read_once": panel_params.read_parameters_once(),
                # A part styled before it was shown took its stylesheets from Panel's CDN.
                "stylesheets_from_this_server": (
                    panel_resources.serve_stylesheets_from_this_server()
                ),
            }
        return dict(_applied)
