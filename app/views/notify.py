"""Toast notifications with plain text only.

Panel's notification area renders its message as HTML, and messages here can quote user text
(labels from a link, a file name, a refused value), so every message is escaped first.
"""

from __future__ import annotations

import html

import panel as pn

DURATION_MS = {"info": 5000, "success": 5000, "warning": 10000, "error": 8000}


def notify(kind: str, text: str, duration: int | None = None) -> None:
    """Show `text` as a `kind` ("info", "success", "warning", "error") toast, if the page can."""
    area = pn.state.notifications
    if area is None:
        return
    show = getattr(area, kind)
    show(html.escape(str(text)), duration=DURATION_MS[kind] if duration is None else duration)
