"""Helpers for the per-key bar charts: one horizontal row per key, first key on top."""

from __future__ import annotations

import numpy as np
from bokeh.models import FixedTicker, Range1d

from .style import MAX_LABELLED_ROWS


def set_rows(fig, labels) -> None:
    """Point the y axis at one row per key; name rows while there are few enough to read."""
    n = len(labels)
    start, end = n - 0.5, -0.5
    if fig.y_range.start != start or fig.y_range.end != end:
        fig.y_range.update(start=start, end=end)
    axis = fig.yaxis[0]
    if n <= MAX_LABELLED_ROWS:
        overrides = {i: str(lab) for i, lab in enumerate(labels)}
        if axis.major_label_overrides != overrides:
            axis.ticker = FixedTicker(ticks=list(range(n)))
            axis.major_label_overrides = overrides
    elif axis.major_label_overrides:
        axis.ticker = FixedTicker(ticks=_sparse_ticks(n))
        axis.major_label_overrides = {}


def _sparse_ticks(n: int) -> list[int]:
    step = max(1, int(10 ** np.floor(np.log10(max(n, 1) / 4))))
    return list(range(0, n, step))


def row_range() -> Range1d:
    return Range1d(0.5, -0.5)
