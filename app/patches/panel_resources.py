"""What a browser downloads to open a lab page: MathJax only for a page that shows TeX.

Panel 1.9 sends Bokeh's MathJax bundle (1.8 MB of JavaScript, a third of a page's scripts,
parsed before anything is drawn) to every page that has a Markdown or HTML pane, in case one
holds TeX. The lab writes its formulas in plain text and Unicode, so no page of it needs
MathJax; a Panel HTML model asks for it here only when its text holds TeX delimiters (Bokeh's
own `$$...$$`, `\\[...\\]`, `\\(...\\)`, and the single `$` of inline Markdown math). Bokeh's own
check for its models (axis labels, sliders, Divs) is untouched.
"""

from __future__ import annotations

import logging
import re

from bokeh.embed.util import contains_tex_string

_log = logging.getLogger(__name__)
_INLINE_DOLLAR = re.compile(r"\$[^$\s][^$]*\$")


def has_tex(text: str) -> bool:
    """Whether text holds something MathJax would typeset."""
    return contains_tex_string(text) or _INLINE_DOLLAR.search(text) is not None


def html_needs_mathjax(roots) -> bool:
    """Panel's check, narrowed to HTML models whose text holds TeX."""
    from bokeh.embed.bundle import _any
    from panel.models.markup import HTML

    return _any(roots, lambda obj: isinstance(obj, HTML) and has_tex(obj.text or ""))


def load_mathjax_only_for_tex() -> bool:
    """Install the narrower check in this process's Panel; False if Panel has no such check."""
    from panel.io import resources

    if not callable(getattr(resources, "_panel_use_mathjax", None)):
        _log.info("Panel has no HTML check for MathJax; its bundle choice is left alone")
        return False
    resources._panel_use_mathjax = html_needs_mathjax
    return True
