"""Helpers for the per-key bar charts: one horizontal row per key, first key on top.

Axis tickers are created once per figure and then edited in place: replacing a model inside a
live document makes Bokeh re-walk the whole model graph (tens of ms), editing a list does not.
"""

from __future__ import annotations

import numpy as np
from bokeh.models import FixedTicker, Range1d

from .style import MAX_LABELLED_ROWS

# Beyond this many keys a chart draws the heaviest MAX_ROWS - 1 keys and one "all others" row:
# two dozen bars in 360 px were too thin to read.
MAX_ROWS = 12
OTHERS = "all others"
NULL_LABEL = "null (none of these)"


def row_axis(fig) -> None:
    """Give the figure's y axis its one, reusable ticker."""
    fig.yaxis[0].ticker = FixedTicker(ticks=[])


def row_positions(weights, labels) -> tuple[np.ndarray, list[str]]:
    """Where each key's bar goes: every key in order while they fit, else the heaviest
    MAX_ROWS - 1 keys, heaviest on top, and NaN (not drawn) for the rest, which the caller
    sums into one "all others" row (see `others_count`).

    The source still holds one row per key; only the drawing is selective, because thousands
    of sub-pixel bars read as a smear.
    """
    n = len(labels)
    if n <= MAX_ROWS:
        return np.arange(n, dtype=np.float32), [str(lab) for lab in labels]
    top = np.argsort(-np.asarray(weights, dtype=np.float64), kind="stable")[: MAX_ROWS - 1]
    rows = np.full(n, np.nan, dtype=np.float32)
    rows[top] = np.arange(len(top), dtype=np.float32)
    return rows, [str(labels[i]) for i in top]


def others_count(n: int) -> int:
    """How many keys the "all others" row stands for (0: every key has its own row)."""
    return 0 if n <= MAX_ROWS else n - (MAX_ROWS - 1)


def set_rows(fig, labels) -> None:
    """Point the y axis at one row per drawn key, each named."""
    n = len(labels)
    start, end = n - 0.5, -0.5
    if fig.y_range.start != start or fig.y_range.end != end:
        fig.y_range.update(start=start, end=end)
    set_ticks(fig.yaxis[0], labels)


def set_ticks(axis, labels) -> None:
    n = len(labels)
    if n <= MAX_LABELLED_ROWS:
        ticks = list(range(n))
        overrides = {i: str(lab) for i, lab in enumerate(labels)}
    else:
        ticks, overrides = _sparse_ticks(n), {}
    if list(axis.ticker.ticks) != ticks:
        axis.ticker.ticks = ticks
    if axis.major_label_overrides != overrides:
        axis.major_label_overrides = overrides
    # Up to MAX_ROWS keys plus the "all others" and null rows keep the full size.
    size = "14px" if len(ticks) <= MAX_ROWS + 2 else "10px"
    if axis.major_label_text_font_size != size:
        axis.major_label_text_font_size = size


def fit_end(current: float, needed: float, *, full: float) -> float:
    """Right end of a 0..x axis: the full scale while values are large, zoomed in on small
    ones; it moves only when the values leave the view or shrink far below it."""
    if needed > 0.3 * full:
        return full
    needed = max(needed, 1e-4)
    if needed > current or needed < 0.4 * current:
        return float(1.25 * needed)
    return current


def _sparse_ticks(n: int) -> list[int]:
    step = max(1, int(10 ** np.floor(np.log10(max(n, 1) / 4))))
    return list(range(0, n, step))


def row_range() -> Range1d:
    return Range1d(0.5, -0.5)
