"""Accessible names for the controls a screen reader would otherwise announce as "checkbox" or
"slider".

Bokeh draws a checkbox as an input beside (not inside) its label, a slider handle without the
slider's title, and a number box's spin buttons with no name at all, all in shadow roots; an
editable slider keeps its name in a text element beside its number box. This invisible
component walks the page's shadow roots now and then and copies each visible label onto its
control as `aria-label` (spin buttons become "Increase ..." and "Decrease ...").
"""

from __future__ import annotations

import param
from panel.reactive import ReactiveHTML

from app import js


class ControlNames(ReactiveHTML):
    """Renders nothing visible; its script names the page's checkboxes and sliders."""

    _template = '<div id="a11y" aria-hidden="true" style="display:none"></div>'
    _scripts = {"render": js.source("control_names.js")}  # noqa: RUF012 - Panel reads this class attribute


# The page's first Tab stop is the skip link; it opens the Lessons tab if another one is open
# and puts focus on the lesson's first enabled button. Phones and narrow windows start with the
# sidebar folded (it would cover the page); presenter mode folds it too and enlarges the type
# (assets/lab.css reads the class on <html>).


class PageTools(ReactiveHTML):
    """Header tools: a skip link to the lesson and the presenter-mode switch."""

    presenter = param.Boolean(default=False, doc="Larger type, sidebar folded (?presenter=1)")

    _template = (
        '<nav class="lab-tools" aria-label="Page tools">'
        '<button id="skip_link" type="button" class="lab-skip" onclick="${script(\'skip\')}">'
        "Skip to the lesson</button>"
        '<button id="toggle_btn" type="button" class="lab-presenter-toggle" aria-pressed="false" '
        "onclick=\"${script('toggle')}\">Presenter mode</button>"
        "</nav>"
    )
    _scripts = js.sections("page_tools.js")  # noqa: RUF012 - Panel reads this class attribute
    _stylesheets = [  # noqa: RUF012
        ".lab-tools { display: flex; gap: 12px; align-items: center; }"
        # Off screen until it has focus (the usual skip-link pattern), then plainly visible.
        ".lab-skip { position: absolute; left: -10000px; top: 8px; padding: 6px 12px;"
        " background: #fff; color: #0b3d5c; font: inherit; font-weight: 700; border: 0;"
        " border-radius: 4px; z-index: 10; }"
        ".lab-skip:focus { position: static; }"
        ".lab-presenter-toggle { font: inherit; font-size: var(--lab-text, 16px);"
        " color: #fff; background: transparent; border: 2px solid #fff; border-radius: 6px;"
        " padding: 4px 12px; cursor: pointer; }"
        ".lab-presenter-toggle[aria-pressed=true] { background: #fff; color: #0b3d5c; }"
        ":focus-visible { outline: 3px solid #ffd166 !important; outline-offset: 2px; }"
        # Nobody presents from a phone; the header has no room to spare there.
        "@media (max-width: 600px) { .lab-presenter-toggle { display: none; } }"
    ]
