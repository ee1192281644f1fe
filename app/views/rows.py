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


def row_positions(weights, labels, max_rows: int = MAX_ROWS) -> tuple[np.ndarray, list[str]]:
    """Where each key's bar goes: every key in order while they fit, else the heaviest
    max_rows - 1 keys, heaviest on top, and NaN (not drawn) for the rest, which the caller
    sums into one "all others" row (see `others_count`).

    The source still holds one row per key; only the drawing is selective, because thousands
    of sub-pixel bars read as a smear.
    """
    n = len(labels)
    if n <= max_rows:
        return np.arange(n, dtype=np.float32), [str(lab) for lab in labels]
    top = np.argsort(-np.asarray(weights, dtype=np.float64), kind="stable")[: max_rows - 1]
    rows = np.full(n, np.nan, dtype=np.float32)
    rows[top] = np.arange(len(top), dtype=np.float32)
    return rows, [str(labels[i]) for i in top]


def others_count(n: int, max_rows: int = MAX_ROWS) -> int:
    """How many keys the "all others" row stands for (0: every key has its own row)."""
    return 0 if n <= max_rows else n - (max_rows - 1)


# A row needs its label's type size times this for the label not to touch the next one.
ROW_LINE = 1.2
MIN_ROWS = 2  # the heaviest key and "all others"


def rows_that_fit(height, other_rows: int = 0, label_px: float = 14.0) -> int:
    """The `max_rows` for a chart whose frame the browser drew `height` px tall (None: not
    drawn yet) with row labels of `label_px` type, when `other_rows` rows (the null
    candidate) are drawn beside the keys'."""
    if not isinstance(height, int | float) or height <= 0:  # also Bokeh's Undefined
        return MAX_ROWS
    fit = int(float(height) // (ROW_LINE * label_px)) - other_rows
    return max(MIN_ROWS, min(MAX_ROWS, fit))


class FitRows:
    """How many rows a bar chart draws: as many as the height the browser draws its frame at
    leaves readable for its row labels (a laptop's short chart ran eleven labels into each
    other); the rest go into "all others". `redraw()` is called when that number changes (a
    resize, presenter mode's larger labels)."""

    def __init__(self, fig, redraw):
        self.fig = fig
        self._redraw = redraw
        self._chosen: int | None = None
        self._other_rows = 0
        fig.on_change("inner_height", self._changed)
        fig.yaxis[0].on_change("major_label_text_font_size", self._changed)

    def max_rows(self, other_rows: int = 0) -> int:
        self._other_rows = other_rows
        self._chosen = self._fit()
        return self._chosen

    def _fit(self) -> int:
        try:
            height = self.fig.inner_height  # readonly: set by the browser once drawn
        except (AttributeError, ValueError):
            height = None
        size = str(self.fig.yaxis[0].major_label_text_font_size)
        label_px = float(size.removesuffix("px")) if size.endswith("px") else 14.0
        return rows_that_fit(height, self._other_rows, label_px)

    def _changed(self, attr, old, new) -> None:  # Bokeh's callback signature
        if self._chosen is not None and self._fit() != self._chosen:
            self._redraw()

    def pause(self) -> None:
        """No redraw on a resize until the chart is drawn again (it is held back, covered.py)."""
        self._chosen = None


def set_rows(fig, labels) -> None:
    """Point the y axis at one row per drawn key, each named."""
    n = len(labels)
    start, end = n - 0.5, -0.5
    if fig.y_range.start != start or fig.y_range.end != end:
        fig.y_range.update(start=start, end=end)
    set_ticks(fig.yaxis[0], labels)


# Up to MAX_ROWS keys plus the "all others" and null rows keep the full size.
DENSE_TICKS = MAX_ROWS + 2


def set_ticks(axis, labels) -> None:
    n = len(labels)
    if n <= MAX_LABELLED_ROWS:
        ticks = list(range(n))
        overrides = {i: str(lab) for i, lab in enumerate(labels)}
    else:
        ticks, overrides = _sparse_ticks(n), {}
    was_dense = len(axis.ticker.ticks) > DENSE_TICKS
    if list(axis.ticker.ticks) != ticks:
        axis.ticker.ticks = ticks
    if axis.major_label_overrides != overrides:
        axis.major_label_overrides = overrides
    # The size is written only when the density changes: presenter mode (page_figures.TextScale)
    # scales it, and rewriting 14 px on every redraw undid that after each load.
    dense = len(ticks) > DENSE_TICKS
    if dense != was_dense:
        axis.major_label_text_font_size = "10px" if dense else "14px"


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
