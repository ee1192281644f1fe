"""The planes' tips by keyboard: the drag's equivalent for a student without a mouse.

One focusable tip per query and key, in the sidebar under the route's controls, each a slider
for a screen reader ("movable tip") that reads its place ("x 0.80, y 0.60"; the query's angle).
The arrow keys move a key by `KEY_STEP` along x (Left, Right) or y (Up, Down) and turn the
query by `ANGLE_STEP` degrees (Right and Up anticlockwise); with Shift, five steps. The browser
sends each press as the sum of the steps taken on that tip (app/js/tip_keys.js); what the sum
added is applied here to the tip where it is now, through the same state calls as a drag (app/views/tip_drag.py), so the planes, the
tables and the live region's news follow as they do after a drag.
"""

from __future__ import annotations

import json
from urllib.parse import quote

import param
from panel.reactive import ReactiveHTML

import attention_lab_assets
from app import js
from app.i18n.markers import N_
from app.i18n.translator import ENGLISH, Translator

from .tip_drag import wrap_angle

KEY_STEP = 0.1
ANGLE_STEP = 5.0
# TRANSLATORS: the sidebar's "Move a tip by keyboard" group, under its title.
HELP = N_(
    "Arrow keys move a focused tip: a key 0.1 along x (Left, Right) or y (Up, Down), the query "
    "5° round. Shift with an arrow: five times as far."
)
TITLE = N_("Move a tip by keyboard")


def tip_rows(state, tr: Translator = ENGLISH) -> list[dict]:
    """The query and each key as the browser draws them (name, label, value, read text)."""
    _ = tr.gettext

    def num(value) -> str:  # two decimals, as the language writes them (0,25 in Spanish)
        # English as Python rounds it (Babel rounds 0.675 up, Python's binary 0.67499... down).
        english = f"{float(value):.2f}"
        return english if tr.code == "en" else tr.format_decimal(float(value), "0.00")

    angle = float(state.angle)
    lo, hi = state.param.angle.bounds
    rows = [
        {
            "name": "q",
            "kind": "query",
            "index": 0,
            # TRANSLATORS: a tip's accessible name; q is the formula's letter, kept.
            "label": _("Query q"),
            "now": round(angle, 2),
            "min": lo,
            "max": hi,
            "text": _("angle {angle} degrees").format(angle=f"{angle:.0f}"),
            "shown": f"q {angle:.0f}°",
        }
    ]
    for i, ((x, y), label) in enumerate(zip(state.keys, state.labels, strict=True)):
        rows.append(
            {
                "name": f"k{i}",
                "kind": "key",
                "index": i,
                # TRANSLATORS: a tip's accessible name; {label} is the key's own label (A).
                "label": _("Key {label}").format(label=label),
                "now": round(float(x), 4),
                "min": -1000,
                "max": 1000,
                # TRANSLATORS: a key tip's value as a screen reader reads it; its button shows
                # "{label} ({x}, {y})" (Spanish: a semicolon between numbers with commas).
                "text": _("x {x}, y {y}").format(x=num(x), y=num(y)),
                "shown": _("{label} ({x}, {y})").format(label=label, x=num(x), y=num(y)),
            }
        )
    return rows


def apply_move(state, move: str, seen: dict) -> None:
    """One press: "kind:index:sum_x:sum_y", the steps the page has taken on that tip so far;
    the tip moves by what the sums added since `seen` (updated), from where it is now."""
    try:
        kind, index, sx, sy = move.split(":")
        i, sx, sy = int(index), float(sx), float(sy)
    except ValueError:
        return  # not a move this page sent
    was_x, was_y = seen.get((kind, i), (0.0, 0.0))
    seen[(kind, i)] = (sx, sy)
    dx, dy = sx - was_x, sy - was_y
    if kind == "query":
        state.angle = wrap_angle(float(state.angle) + dx * ANGLE_STEP, state.param.angle.bounds)
    elif kind == "key" and 0 <= i < len(state.keys):
        x, y = state.keys[i]
        state.set_key(i, round(float(x) + dx * KEY_STEP, 4), round(float(y) + dy * KEY_STEP, 4))


class TipKeys(ReactiveHTML):
    """The focusable tips of one page's planes (the hand-made source only)."""

    encoded_tips = param.String(default="", doc="the tips as percent-encoded JSON")
    move = param.String(default="", doc="the browser's last press, applied once")
    # Their text in the session's language (app/i18n/; English by default).
    title_text = param.String(default=TITLE, doc="the group's title and accessible name")
    help_text = param.String(default=HELP, doc="how the keys move a tip")

    _template = (
        '<div class="lab-tip-keys" role="group" aria-label="{{title_text}}">'
        '<p class="lab-tip-title">{{title_text}}</p>'
        '<p id="help" class="lab-tip-help">{{help_text}}</p>'
        '<div id="row" class="lab-tip-row"></div></div>'
    )
    _scripts = js.sections("tip_keys.js")  # noqa: RUF012 - Panel reads this
    _stylesheets = [attention_lab_assets.read_text("components", "tip-keys.css")]  # noqa: RUF012

    def __init__(self, state, tr: Translator = ENGLISH, **params):
        _ = tr.gettext
        super().__init__(title_text=_(TITLE), help_text=_(HELP), **params)
        self._state, self._tr = state, tr
        self._seen: dict = {}  # (kind, index) -> the step sums last applied
        self.param.watch(self._moved, "move")

    def update(self, snap=None) -> None:
        text = quote(json.dumps(tip_rows(self._state, self._tr)), safe="")
        if self.encoded_tips != text:
            self.encoded_tips = text

    def _moved(self, event) -> None:
        if event.new:
            apply_move(self._state, event.new, self._seen)
