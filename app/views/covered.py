"""A view drawn neutral while a lesson step holds back what it asks about (app/lessons/reveals.py).

The page (app/page/held.py) calls `conceal` on a held view instead of drawing it: its data
sources are emptied, its words in the plots' text removed and its title says why. The data is
not on the page at all, not merely hidden from sight: a class's vote then measures thinking,
not reading. The next drawing after Measure fills everything again, as before.
"""

from __future__ import annotations

import numpy as np
from bokeh.models import ColumnDataSource, Label

from .plot_text import PlotText
from .rows import FitRows, set_rows
from .text_fit import FitText

PREDICT_FIRST = "predict first, then press Measure"


def blank(source: ColumnDataSource) -> None:
    """Every column of `source` emptied (same names and types), if it holds any row."""
    if not any(len(column) for column in source.data.values()):
        return
    source.data = {
        name: (column[:0] if isinstance(column, np.ndarray) else [])
        for name, column in source.data.items()
    }


def conceal(view, what: str) -> None:
    """Empty every source, plot text and note the view holds; its title names `what` is held
    (a view whose title fits its width, FitText, sets it again on its next drawing)."""
    for value in list(vars(view).values()):
        if isinstance(value, ColumnDataSource):
            blank(value)
        elif isinstance(value, PlotText):
            value.show(())
        elif isinstance(value, FitRows):
            value.pause()  # a resize must not redraw the held rows
        elif isinstance(value, Label) and value.visible:
            value.visible = False  # e.g. the Jacobian's "... holds 99.9% of the route"
    fit = getattr(view, "fit", None)
    if isinstance(fit, FitText):
        fit.title(f"{what}: {PREDICT_FIRST}", f"{what}: predict first", what)
        set_rows(fit.fig, [])  # bar charts list their rows by weight
