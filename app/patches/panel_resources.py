"""What a browser downloads to open a lab page: MathJax only for a page that shows TeX, and
every component stylesheet from this server, never Panel's CDN.

Panel 1.9 sends Bokeh's MathJax bundle (a large share of a page's scripts, parsed before
anything is drawn: docs/patches.md has its size) to every page that has a Markdown or HTML
pane, in case one holds TeX. The lab writes its formulas in plain text and Unicode, so no page of it needs
MathJax; a Panel HTML model asks for it here only when its text holds TeX delimiters (Bokeh's
own `$$...$$`, `\\[...\\]`, `\\(...\\)`, and the single `$` of inline Markdown math). Bokeh's own
check for its models (axis labels, sliders, Divs) is untouched.

Panel points a component's stylesheets (its `loading.css`, the theme's and Bootstrap's) at
cdn.holoviz.org whenever it styles a model it cannot place in a document: its template applies
its design to every part of a page without passing the document, so a part built but not yet
shown (a trained model's controls, the Causal map tab) fell back to the CDN, and with it the
one `loading.css` stylesheet every component of the page shares. Pressing Next into the model
steps then asked the internet for five stylesheets a lecture hall cannot reach. Every such
choice goes through one Panel function, `patch_stylesheet(stylesheet, dist_url)`; while the
server serves its own resources (`BOKEH_RESOURCES=server`, app/server/cli.py), a CDN choice
there becomes this server's path, for any component a page brings in later.
"""

from __future__ import annotations

import re
import sys

from bokeh.embed.util import contains_tex_string

from app.patches.replace import Replacement, guarded_replace

# sha256 (first 16 hex digits) of the two Panel 1.9.4 functions replaced, as read
# (app/patches/replace.py): the check is narrowed, the stylesheet function wrapped.
CHECKED_SOURCE = {"_panel_use_mathjax": "f7884844bb282077", "patch_stylesheet": "bca584770193213f"}
_INLINE_DOLLAR = re.compile(r"\$[^$\s][^$]*\$")


def has_tex(text: str) -> bool:
    """Whether text holds something MathJax would typeset."""
    return contains_tex_string(text) or _INLINE_DOLLAR.search(text) is not None


def html_needs_mathjax(roots) -> bool:
    """Panel's check, narrowed to HTML models whose text holds TeX."""
    from bokeh.embed.bundle import _any
    from panel.models.markup import HTML

    return _any(roots, lambda obj: isinstance(obj, HTML) and has_tex(obj.text or ""))


def local_dist_url(dist_url: str) -> str:
    """Where a component stylesheet comes from: `dist_url`, unless that is Panel's CDN while
    this process serves its own resources; then this server's path for the current page."""
    from panel.io.resources import CDN_DIST, get_dist_path, use_cdn

    if dist_url == CDN_DIST and not use_cdn():
        return get_dist_path(cdn=False)
    return dist_url


def serve_stylesheets_from_this_server() -> bool:
    """Have every Panel module that places a stylesheet use `local_dist_url`; False if Panel's
    `patch_stylesheet` is not the source read (then it places them as it does)."""
    from panel.io import resources

    original = getattr(resources, "patch_stylesheet", None)

    def patch_stylesheet(stylesheet, dist_url):
        return original(stylesheet, local_dist_url(dist_url))

    patch_stylesheet.lab_original = original
    # The modules that imported it by name (panel.reactive does) hold their own reference.
    holders = [
        module
        for name, module in list(sys.modules.items())
        if name.startswith("panel")
        and module is not resources
        and getattr(module, "patch_stylesheet", None) is original
    ]
    source = CHECKED_SOURCE["patch_stylesheet"]
    return guarded_replace(
        "stylesheets_from_this_server",
        Replacement(resources, "patch_stylesheet", patch_stylesheet, source),
        *(Replacement(m, "patch_stylesheet", patch_stylesheet, source) for m in holders),
    )


def load_mathjax_only_for_tex() -> bool:
    """Install the narrower check in this process's Panel; False if Panel's check is not the
    source read (then its bundle choice is left alone)."""
    from panel.io import resources

    return guarded_replace(
        "mathjax_only_for_tex",
        Replacement(
            resources,
            "_panel_use_mathjax",
            html_needs_mathjax,
            CHECKED_SOURCE["_panel_use_mathjax"],
        ),
    )
