"""Helpers for the per-key bar charts: one horizontal row per key, first key on top.

Axis tickers are created once per figure and then edited in place: replacing a model inside a
live document makes Bokeh re-walk the whole model graph (tens of ms), editing a list does not.
"""

from __future__ import annotations

import numpy as np
from bokeh.models import FixedTicker, Range1d

from .style import MAX_LABELLED_ROWS


def row_axis(fig) -> None:
    """Give the figure's y axis its one, reusable ticker."""
    fig.yaxis[0].ticker = FixedTicker(ticks=[])


def set_rows(fig, labels) -> None:
    """Point the y axis at one row per key; name rows while there are few enough to read."""
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


def _sparse_ticks(n: int) -> list[int]:
    step = max(1, int(10 ** np.floor(np.log10(max(n, 1) / 4))))
    return list(range(0, n, step))


def row_range() -> Range1d:
    return Range1d(0.5, -0.5)
