"""What fits on a square plane: its range, its scale in data units per screen pixel, and the
screen boxes its labels must keep clear of; also where the query's handle sits on its ray.

The planes are square and centred on the origin: x and y share one range. Screen points are in
pixels from the frame's top left corner (y down), as app/views/label_layout.py takes them.
"""

from __future__ import annotations

import math

import numpy as np

from .label_layout import HANDLE_RADIUS_PX
from .planes import FRAME
from .style import text_width

# Where the query's handle may sit on its ray, as a fraction of its length, in order of
# preference: on the tip unless a key's handle is there (in the default scenario q lies on A).
QUERY_HANDLE_AT = (1.0, 0.7, 1.25, 0.5, 0.85, 1.15, 0.35)
HANDLE_GAP_PX = 26  # centre to centre: the handles are 18-20 px circles


def limit(current: float, needed: float) -> float:
    """Keep the axis still while the content fits; grow at once, shrink only when far too big."""
    needed = max(needed, 0.5)
    if needed > current or needed < 0.45 * current:
        return float(1.3 * needed)
    return current


def fit_square(fig, needed: float, *, grow_only: bool = False) -> None:
    """Show -needed..needed on both axes (with `limit`'s margin and stillness)."""
    lim = limit(float(fig.x_range.end), needed)
    if lim > fig.x_range.end or (lim != fig.x_range.end and not grow_only):
        fig.x_range.update(start=-lim, end=lim)
        fig.y_range.update(start=-lim, end=lim)


def px(fig) -> float:
    """Data units per screen pixel in a square plane."""
    # The frame as the browser last drew it (its size follows the window), else as built.
    try:
        width = fig.inner_width  # readonly: the browser sets it once the plot is drawn
    except (AttributeError, ValueError):  # Bokeh: "doesn't have a value set"
        width = None
    width = width or fig.frame_width or FRAME
    return float(fig.x_range.end - fig.x_range.start) / max(1, width)


class Screen:
    """A square plane's data points in screen pixels (y down), as the browser draws it now."""

    def __init__(self, fig):
        self.px = px(fig)
        self.start = float(fig.x_range.start)
        self.frame = (float(fig.x_range.end) - self.start) / self.px

    def point(self, x: float, y: float) -> tuple[float, float]:
        return (x - self.start) / self.px, self.frame - (y - self.start) / self.px

    def note_box(self, y: float, first_line: str) -> tuple[float, float, float, float]:
        """A two-line note of 13 px bold centred on (0, y)."""
        cx, cy = self.point(0.0, y)
        half_w = 0.5 * text_width(first_line, "13px", bold=True) + 8
        return (cx - half_w, cy - 25.0, cx + half_w, cy + 25.0)

    def handle_box(self, x: float, y: float) -> tuple[float, float, float, float]:
        hx, hy = self.point(x, y)
        r = HANDLE_RADIUS_PX
        return (hx - r, hy - r, hx + r, hy + r)


def query_handle_at(q: np.ndarray, key_tips: np.ndarray, px: float, lim: float = math.inf) -> float:
    """Where on its ray the query's handle goes: the first place in QUERY_HANDLE_AT at least
    HANDLE_GAP_PX from every key's handle and inside the plane (else the one farthest from
    the keys' handles)."""
    if not np.any(q) or len(key_tips) == 0:
        return 1.0
    gap = HANDLE_GAP_PX * px
    best, best_dist = 1.0, -1.0
    for factor in QUERY_HANDLE_AT:
        if factor > 1 and float(np.max(np.abs(factor * q))) > lim - HANDLE_GAP_PX * px:
            continue  # would sit on (or past) the plane's edge
        dist = float(np.min(np.hypot(*(key_tips - factor * q).T)))
        if dist >= gap:
            return factor
        if dist > best_dist:
            best, best_dist = factor, dist
    return best
