"""Accessible names for the controls a screen reader would otherwise announce as "checkbox" or
"slider".

Bokeh draws a checkbox as an input beside (not inside) its label, a slider handle without the
slider's title, and a number box's spin buttons with no name at all, all in shadow roots; an
editable slider keeps its name in a text element beside its number box. This invisible
component walks the page's shadow roots when the page first renders and again whenever the
page changes (a MutationObserver, app/js/control_names.js), and copies each visible label onto
its control as `aria-label` (spin buttons become "Increase ..." and "Decrease ...").
"""

from __future__ import annotations

import html

import param
from panel.reactive import ReactiveHTML

import attention_lab_assets
from app import js
from app.i18n.markers import N_
from app.i18n.translator import ENGLISH, Translator


class ControlNames(ReactiveHTML):
    """Renders nothing visible; its script names the page's checkboxes and sliders."""

    _template = '<div id="a11y" aria-hidden="true" style="display:none"></div>'
    _scripts = {"render": js.source("control_names.js")}  # noqa: RUF012 - Panel reads this class attribute


# TRANSLATORS: what a screen reader calls the sidebar (a landmark of the page's settings).
SIDEBAR_NAME = N_("Settings")
# TRANSLATORS: what a screen reader calls the dialog that joins a class.
DIALOG_NAME = N_("Join the class")


class PageStructure(ReactiveHTML):
    """Renders nothing visible; its script gives the template's page one `main` landmark, one
    level-one heading, a named settings landmark and a named join dialog
    (app/js/page_structure.js)."""

    sidebar_name = param.String(default=SIDEBAR_NAME, doc="the settings landmark's name")
    dialog_name = param.String(default=DIALOG_NAME, doc="the join dialog's name")

    _template = '<div id="structure" aria-hidden="true" style="display:none"></div>'
    _scripts = {  # noqa: RUF012 - Panel reads this class attribute
        "render": js.source("page_structure.js", SIDEBAR_NAME=SIDEBAR_NAME, DIALOG_NAME=DIALOG_NAME)
    }


class TabKeys(ReactiveHTML):
    """Renders nothing visible; its script makes the Tabs drawn with `css_class` real tabs:
    roles, selected state, one Tab stop, and the arrow, Home, End, Enter and Space keys
    (app/js/tab_keys.js)."""

    css_class = param.String(doc="the Tabs' CSS class")
    label = param.String(doc="the tab list's accessible name")

    _template = '<div id="tab_keys" aria-hidden="true" style="display:none"></div>'
    _scripts = {"render": js.source("tab_keys.js")}  # noqa: RUF012 - Panel reads this class attribute


class ControlPointer(ReactiveHTML):
    """Scrolls the sidebar to the controls a lesson step names and outlines them for a few
    seconds; a polite live region says where they are. After Measure, scrolls the verdict into
    view (app/js/control_pointer.js)."""

    names = param.List(default=[], item_type=str, doc="the step's control names")
    nonce = param.Integer(default=0, doc="one more for every step opened")
    shown = param.Integer(default=0, doc="one more for every verdict to bring into view")
    words = param.Dict(default={}, doc="what it says, in the page's language (its script's own)")

    _template = '<div id="said" class="lab-said" aria-live="polite"></div>'
    _scripts = js.sections("control_pointer.js")  # noqa: RUF012 - Panel reads this class attribute
    _stylesheets = [attention_lab_assets.read_text("components", "control-pointer.css")]  # noqa: RUF012

    def point(self, names) -> None:
        self.param.update(names=list(names), nonce=self.nonce + 1)

    def show_verdict(self) -> None:
        """Scroll Measure's verdict into view (drawn under the button, below a laptop's fold)."""
        self.shown += 1


# The page's first Tab stop is the skip link (the first element of <body>, before the header's
# sidebar button, title and Teach a class: Orca found it the fourth stop when it sat among the
# header's tools); it opens the Lessons tab if another one is open and puts focus on the
# lesson's first enabled button. Windows under 1400 px (phones, laptops)
# start with the sidebar folded (it would cover the page or squeeze the first screen); presenter
# mode folds it too and enlarges the type (assets/lab.css reads the class on <html>).


# The keyboard help (the header's Keys button): every key the page answers, in one short
# modal dialog drawn in the browser alone (no server model): focus stays inside while it is
# open, Esc or Close shuts it, and focus goes back to the button (app/js/page_tools.js).
KEYS = (
    (
        N_("Tab, Shift+Tab"),
        N_("the next or the previous control; the first Tab reaches <b>Skip to the lesson</b>"),
    ),
    (N_("Enter, Space"), N_("press the focused button; open the focused tab")),
    (
        N_("Left, Right, Home, End"),
        N_("on the teaching tabs: open the next, the previous, the first or the last tab"),
    ),
    (N_("Arrow keys"), N_("a slider one step; a prediction's answers one by one")),
    (N_("Page Up, Page Down"), N_("a slider a 24th of its range (the query angle 15°)")),
    (
        N_("Arrow keys on a tip"),
        N_(
            "the sidebar's tips (q, A, B, ...) move a key 0.1 along x or y, "
            "the query 5° round; with Shift five times as far"
        ),
    ),
    (
        N_("Typing, Enter, Backspace"),
        N_("a trained model's multi-choice boxes: filter, pick, remove the last one picked"),
    ),
    (N_("Esc"), N_("close this help")),
)
# The dialog's text comes from PageTools' parameters (`keys_help`), in the session's language.
KEYS_HELP = (
    '<div id="keys_panel" class="lab-keys" role="dialog" aria-modal="true" '
    'aria-label="{{keys_title}}" tabindex="-1" hidden>'
    '<h2 class="lab-keys-title">{{keys_title}}</h2><dl>{{keys_list}}</dl>'
    '<button id="keys_close" type="button" class="lab-keys-close" '
    "onclick=\"${script('keys')}\">{{keys_close}}</button></div>"
)


def keys_help(tr: Translator = ENGLISH) -> dict[str, str]:
    """The keyboard help's title, list (HTML: the translations keep their <b>) and Close, in
    `tr`'s language: PageTools' parameters."""
    _ = tr.gettext
    listed = "".join(f"<dt>{html.escape(_(keys))}</dt><dd>{_(what)}</dd>" for keys, what in KEYS)
    # TRANSLATORS: the title of the dialog the header's Keys button opens.
    return {"keys_title": _("Keyboard help"), "keys_list": listed, "keys_close": _("Close")}


class PageTools(ReactiveHTML):
    """Header tools: a skip link to the lesson and the presenter-mode switch."""

    presenter = param.Boolean(default=False, doc="Larger type, sidebar folded (?presenter=1)")
    # The session's echo: a script (or a browser test) sets `echo`, and the server copies it to
    # `echoed`. The server handles a session's messages in order, so once `echoed` has come
    # back, everything the page sent before has been handled and its answer has arrived.
    echo = param.Integer(default=0, doc="set by the page")
    echoed = param.Integer(default=0, doc="`echo`, as the server last saw it")
    # Their text in the session's language (app/i18n/; English by default).
    keys_text = param.String(default="Keys", doc="the keyboard help's button")
    presenter_text = param.String(default="Presenter mode", doc="presenter mode's button")
    tools_name = param.String(default="Page tools", doc="the group's accessible name")
    skip_text = param.String(default="Skip to the lesson", doc="the skip link")
    lessons_tab = param.String(default="Lessons", doc="the Lessons tab's title, as shown")
    keys_title = param.String(default=keys_help()["keys_title"], doc="the keyboard help's title")
    keys_list = param.String(default=keys_help()["keys_list"], doc="its keys, as HTML")
    keys_close = param.String(default="Close", doc="its Close button")

    # A group, not a second navigation landmark inside the header's (Orca said "navigation"
    # twice). The skip link is the page's first element, put there by the render script.
    _template = (
        '<div class="lab-tools" role="group" aria-label="{{tools_name}}">'
        '<button id="keys_btn" type="button" class="lab-keys-toggle" aria-expanded="false" '
        'aria-haspopup="dialog" onclick="${script(\'keys\')}">{{keys_text}}</button>'
        '<button id="toggle_btn" type="button" class="lab-presenter-toggle" aria-pressed="false" '
        "onclick=\"${script('toggle')}\">{{presenter_text}}</button>"
        f"{KEYS_HELP}"
        "</div>"
    )
    _scripts = js.sections("page_tools.js")  # noqa: RUF012 - Panel reads this class attribute
    _stylesheets = [attention_lab_assets.read_text("components", "page-tools.css")]  # noqa: RUF012

    @param.depends("echo", watch=True)
    def _answer_echo(self) -> None:
        self.echoed = self.echo
