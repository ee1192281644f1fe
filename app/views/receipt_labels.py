"""Where the receipt's dot labels go, in screen pixels: pure Python, no Panel or Bokeh.

The receipt names the heads whose estimate missed most. Dots on one spot (a saturated sentence
puts several at 0, 0) share one label, "L0 H0, L0 H1, L1 H0", shortened to "L0 H0 +2" when
there is no room; every label is placed by `label_layout.place_labels`, clear of the other
labels and of every dot, inside the frame, the largest miss first. A label with no room is
dropped (the hover still names its head).

>>> receipt_labels([0, 0, 0], [0, 0, -3], ["L0 H0", "L0 H1", "L1 H1"], [2, 0, 1],
...                (-4, 1), (-4, 1), (300, 300))[2]
['L0 H0, L0 H1', '', 'L1 H1']
"""

from __future__ import annotations

import math

from .label_layout import place_labels

FONT_PX = 13.0  # the receipt's label size
SAME_SPOT_PX = 8.0  # dots nearer than this on screen look like one dot: they share one label
DOT_PX = 6.0  # a dot's radius, kept clear of every label
LISTED = 3  # heads a shared label lists in full; more are counted ("L0 H0 +3")


def screen_points(xs, ys, x_range, y_range, size) -> list[tuple[float, float]]:
    """Data points in screen pixels from the frame's top left corner (y down)."""
    (x0, x1), (y0, y1), (width, height) = x_range, y_range, size
    sx, sy = width / ((x1 - x0) or 1.0), height / ((y1 - y0) or 1.0)
    return [((x - x0) * sx, height - (y - y0) * sy) for x, y in zip(xs, ys, strict=True)]


def shared_label(tags: list[str]) -> str:
    """One label for the heads of one spot."""
    if len(tags) <= LISTED:
        return ", ".join(tags)
    return f"{tags[0]} +{len(tags) - 1}"


def shorter(text: str) -> str | None:
    """A shared label without room: its first head and a count (None for one head's label)."""
    parts = text.split(", ")
    return f"{parts[0]} +{len(parts) - 1}" if len(parts) > 1 else None


def receipt_labels(xs, ys, tags, named, x_range, y_range, size):
    """(dx, dy, text), one list each, one entry per dot: the screen offset of its label and the
    label ("" for a dot not named, or named in another dot's shared label). ``named`` are the
    indices of the dots to name, the most important first; ``x_range`` and ``y_range`` the
    plot's (start, end); ``size`` the frame's (width, height) in pixels."""
    points = screen_points(xs, ys, x_range, y_range, size)
    spots: list[list[int]] = []
    for i in named:
        near = (s for s in spots if math.dist(points[s[0]], points[i]) < SAME_SPOT_PX)
        spot = next(near, None)
        if spot is None:
            spots.append([i])
        else:
            spot.append(i)
    texts = [shared_label([tags[i] for i in sorted(spot)]) for spot in spots]
    dots = [(x - DOT_PX, y - DOT_PX, x + DOT_PX, y + DOT_PX) for x, y in points]
    placed = place_labels(
        [points[spot[0]] for spot in spots], texts, FONT_PX, size, dots, short=shorter
    )
    dx, dy, text = [0.0] * len(points), [0.0] * len(points), [""] * len(points)
    for spot, (ox, oy, label) in zip(spots, placed, strict=True):
        dx[spot[0]], dy[spot[0]], text[spot[0]] = ox, oy, label
    return dx, dy, text


def drawn_frame(fig, guess: tuple[float, float]) -> tuple[float, float]:
    """The figure's frame (width, height) in pixels as the browser reported it, else `guess`
    (before the first drawing Bokeh raises "doesn't have a value set")."""
    size = []
    for name, fallback in zip(("inner_width", "inner_height"), guess, strict=True):
        try:
            size.append(float(getattr(fig, name) or fallback))
        except (AttributeError, ValueError):
            size.append(fallback)
    return size[0], size[1]
