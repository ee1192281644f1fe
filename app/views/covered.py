"""A view drawn neutral while a lesson step holds back what it asks about (app/lessons/reveals.py).

The page (app/page/held.py) calls `conceal` on a held view instead of drawing it: its data
sources are emptied, its words in the plots' text removed and its title says why. The data is
not on the page at all, not merely hidden from sight: a class's vote then measures thinking,
not reading. The next drawing after Measure fills everything again, as before.
"""

from __future__ import annotations

import numpy as np
from bokeh.models import ColumnDataSource, Label

from app.i18n.markers import N_
from app.i18n.translator import ENGLISH

from .plot_text import PlotText
from .rows import FitRows, set_rows
from .style import canvas_words
from .text_fit import FitText

# TRANSLATORS: a held plot's title after its name ("Logits: predict first, then press
# Measure"), while a lesson step waits for the student's prediction.
PREDICT_FIRST = N_("predict first, then press Measure")
# The same, where the title has less room.
PREDICT_FIRST_SHORT = N_("predict first")


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
    (a view whose title fits its width, FitText, sets it again on its next drawing), in the
    view's language (its `tr`; `what` is the plot's English name, a catalogue entry)."""
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
        _ = canvas_words(getattr(view, "tr", ENGLISH))
        name = _(what)
        # TRANSLATORS: a held plot's title: {plot} is its name, {why} "predict first ...".
        held = _("{plot}: {why}")
        long, short = (
            held.format(plot=name, why=_(w)) for w in (PREDICT_FIRST, PREDICT_FIRST_SHORT)
        )
        fit.title(long, short, name)
        set_rows(fit.fig, [])  # bar charts list their rows by weight
