"""One orientation for every map of a model's heads: layers across, heads down.

The every-head grid, the Causal map tab's patching map and its estimate map all put layer L
head H in the same place: x is the layer (0 at the left, the order the model reads in), y the
head (0 on top). Across, not up, because a real model has many more layers than heads
(SmolLM2: 30 x 9): a wide map fits a 16:9 projector and the tab's full width, where 30 rows
made a tall strip of small cells.
"""

from __future__ import annotations

from bokeh.models import FixedTicker, Range1d

from app.i18n.head_words import in_line
from app.i18n.translator import ENGLISH, Translator
from engine.heads import token_mark_phrases

LAYER, HEAD = "layer", "head"  # the data columns a map's cells are placed by: x, y


def head_map_ranges(n_layers: int = 2, n_heads: int = 2) -> dict:
    """``x_range`` and ``y_range`` for a new map (head 0 on top)."""
    return {
        "x_range": Range1d(-0.5, n_layers - 0.5),
        "y_range": Range1d(n_heads - 0.5, -0.5),
    }


def left_to_right(fig):
    """`fig` drawn left to right in every language, as the stage's plots are (stage.css): on an
    Arabic page its canvas inherited right to left and drew the label "; @4" as "4@ ;"."""
    fig.styles = {**(fig.styles or {}), "direction": "ltr"}
    return fig


def label_head_map(fig, tr: Translator = ENGLISH) -> None:
    """Axis titles and tickers of a new map (ticks set by `fit_head_map`)."""
    _ = tr.gettext
    fig.xaxis.axis_label = _("layer")
    fig.yaxis.axis_label = _("head")
    fig.xaxis.ticker = FixedTicker(ticks=[0, 1])
    fig.yaxis.ticker = FixedTicker(ticks=[0, 1])


def fit_head_map(fig, n_layers: int, n_heads: int) -> None:
    """Fit a map made by `head_map_ranges` and `label_head_map` to a model's size."""
    fig.x_range.start, fig.x_range.end = -0.5, n_layers - 0.5
    fig.y_range.start, fig.y_range.end = n_heads - 0.5, -0.5
    fig.xaxis.ticker.ticks = list(range(0, n_layers, 1 if n_layers <= 10 else 5))
    fig.yaxis.ticker.ticks = list(range(n_heads))


def token_marks_words(labels, tr: Translator = ENGLISH, sep: str = "; ") -> str:
    """`engine.heads.token_marks` in the session's language (right to left: each phrase, and
    the list, in its own isolate, so the phrases read from the right as the sentence does)."""
    phrases = [
        in_line(tr.gettext(template).format(**values), tr)
        for template, values in token_mark_phrases(labels)
    ]
    return in_line(sep.join(phrases), tr)
