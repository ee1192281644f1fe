"""Every use of a third-party internal, in one place: one module per area, one named function
per patch, each with its reason (docs/patches.md lists them, with what each buys and when to
remove it).

- `bokeh_speedups`: five of Bokeh's property functions, shortened process-wide.
- `bokeh_glyphs`: a glyph class's positional argument names (for renderers built alone).
- `documents`: a session's stylesheets pinned to this server (a document's template variables).
- `panel_events`: widgets that answer a browser change at once (Panel's debounce, busy counter).
- `panel_links`: the process-wide registry of Panel's JS callbacks, emptied for a closed page.
- `panel_resources`: MathJax only for a page that shows TeX.
- `param_values`: a value checked against a parameter without setting it.
- `server_routes`: the served route table (route rename, liveness, TCP_NODELAY, extra routes).

`CHECKED_AGAINST` holds the releases every patch was read and tested against. A test
(tests/app/test_patch_pins.py) fails when the lock files or the installed packages hold another
release, so moving Bokeh or Panel starts with re-checking the patches.
"""

from __future__ import annotations

from importlib import metadata

# The releases of the packages whose internals app/patches/ uses, as read and tested.
CHECKED_AGAINST = {"bokeh": "3.9.2", "panel": "1.9.4", "param": "2.4.2"}


def installed_version(package: str) -> str | None:
    """The installed release of `package`, or None when it is not installed."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None
