"""What fits on a plane: its range, its scale in data units per screen pixel, and the
screen boxes its labels must keep clear of; also where the query's handle sits on its ray.

The planes are centred on the origin and x and y share one range, but the frame the browser draws
is not square: the axes, the title and the legend under it take different room across and down
(437 x 400 px at 1920x1080, 259 x 194 on a phone). Screen points are in pixels from the frame's
top left corner (y down), as app/views/label_layout.py takes them, each axis at its own scale.
"""

from __future__ import annotations

import math

import numpy as np

from .label_layout import HANDLE_RADIUS_PX
from .planes import FRAME
from .text_fit import text_width

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


def frame_px(fig, side: str = "inner_width") -> float:
    """The frame's width (or `side` "inner_height": its height) in screen pixels."""
    # The frame as the browser last drew it (its size follows the window), else as built.
    try:
        size = getattr(fig, side)  # readonly: the browser sets it once the plot is drawn
    except (AttributeError, ValueError):  # Bokeh: "doesn't have a value set"
        size = None
    built = fig.frame_width if side == "inner_width" else fig.frame_height
    return float(max(1, size or built or FRAME))


class Screen:
    """A plane's data points in screen pixels (y down), as the browser draws it now: across at
    the frame's width, down at its height (one range on both axes, not one scale)."""

    def __init__(self, fig):
        self.width, self.height = frame_px(fig), frame_px(fig, "inner_height")
        self.frame = (self.width, self.height)
        self.x0, self.y0 = float(fig.x_range.start), float(fig.y_range.start)
        # Data units per pixel, across and down.
        self.px = (float(fig.x_range.end) - self.x0) / self.width
        self.py = (float(fig.y_range.end) - self.y0) / self.height

    def point(self, x: float, y: float) -> tuple[float, float]:
        return (x - self.x0) / self.px, self.height - (y - self.y0) / self.py

    def note_box(self, y: float, first_line: str) -> tuple[float, float, float, float]:
        """A two-line note of 13 px bold centred on (0, y)."""
        cx, cy = self.point(0.0, y)
        half_w = 0.5 * text_width(first_line, "13px", bold=True) + 8
        return (cx - half_w, cy - 25.0, cx + half_w, cy + 25.0)

    def handle_box(self, x: float, y: float) -> tuple[float, float, float, float]:
        hx, hy = self.point(x, y)
        r = HANDLE_RADIUS_PX
        return (hx - r, hy - r, hx + r, hy + r)


def query_handle_at(q: np.ndarray, key_tips: np.ndarray, scale, lim: float = math.inf) -> float:
    """Where on its ray the query's handle goes: the first place in QUERY_HANDLE_AT at least
    HANDLE_GAP_PX from every key's handle and inside the plane (else the one farthest from
    the keys' handles). `scale`: data units per pixel (across, down), as Screen has them."""
    if not np.any(q) or len(key_tips) == 0:
        return 1.0
    per_px = np.asarray(scale, dtype=np.float64)
    best, best_dist = 1.0, -1.0
    for factor in QUERY_HANDLE_AT:
        room = (lim - np.abs(factor * q)) / per_px  # pixels to the plane's edge, each axis
        if factor > 1 and float(np.min(room)) < HANDLE_GAP_PX:
            continue  # would sit on (or past) the plane's edge
        dist = float(np.min(np.hypot(*((key_tips - factor * q) / per_px).T)))  # pixels
        if dist >= HANDLE_GAP_PX:
            return factor
        if dist > best_dist:
            best, best_dist = factor, dist
    return best
