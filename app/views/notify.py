"""Toast notifications with plain text only.

Panel's notification area renders its message as HTML, and messages here can quote user text
(labels from a link, a file name, a refused value), so every message is escaped first.
"""

from __future__ import annotations

import html

import panel as pn

DURATION_MS = {"info": 5000, "success": 5000, "warning": 10000, "error": 8000}
# Each kind's toast background, under white text at least 4.5:1 (WCAG AA for its 16 px text;
# tests/app/test_contrast.py). Panel's and Notyf's own were 1.6:1 (amber) to 4.0:1 (blue).
TOAST_BACKGROUNDS = {
    "warning": "#8a5300",
    "info": "#0a58ca",
    "error": "#b02a37",
    "success": "#146c43",
}
TOAST_TEXT = "#ffffff"
# Panel's icons for the two kinds it adds to Notyf's (error and success keep Notyf's own).
_ICONS = {"warning": "fas fa-exclamation-triangle", "info": "fas fa-info-circle"}


def toast_types() -> list[dict]:
    """The notification area's `types`: Panel's and Notyf's kinds with the colours above."""
    types = []
    for kind, background in TOAST_BACKGROUNDS.items():
        entry: dict = {"type": kind, "background": background}
        if kind in _ICONS:
            entry["icon"] = {"className": _ICONS[kind], "tagName": "i", "color": TOAST_TEXT}
        types.append(entry)
    return types


def notify(kind: str, text: str, duration: int | None = None) -> None:
    """Show `text` as a `kind` ("info", "success", "warning", "error") toast, if the page can."""
    area = pn.state.notifications
    if area is None:
        return
    show = getattr(area, kind)
    show(html.escape(str(text)), duration=DURATION_MS[kind] if duration is None else duration)
