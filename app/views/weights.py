"""Attention weight per key beside that key's share of the contribution norm.

Putting the two side by side shows that a heavy weight on a short value moves the output little.
"""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, Range1d, Selection

from app.i18n.markers import N_
from app.i18n.translator import ENGLISH, Translator
from engine.snapshot import share_percent

from .bars import bar_note, dodged_bar
from .label_layout import isolated_labels
from .rows import (
    NULL_LABEL,
    OTHERS,
    FitRows,
    fit_end,
    others_count,
    row_axis,
    row_positions,
    row_range,
    set_rows,
)
from .style import (
    STAGE_COLOURS,
    add_hover,
    assign,
    canvas_line,
    canvas_words,
    edged,
    f32,
    make_figure,
    percent_ticks,
    style_legend,
)
from .text_fit import FitText
from .token_note import add_token_note, show_token_note

BAR = 0.38
FULL = 1.18  # the whole 0..1 scale, with room for the labels
AXIS_LABEL = N_("share (each colour sums to 100%)")
AXIS_LABEL_NULL = N_("share (weights with the null row: 100%)")
TITLE = N_("Weights and |w·v| shares")
# The bar charts' rows that are not one key (app/views/rows.py), marked here for the plots'
# catalogue: they are shown translated.
ROW_NAMES = (N_("all others"), N_("null (none of these)"))
DOTTED = {"hatch_pattern": "dot", "hatch_color": "#ffffff", "hatch_alpha": 0.5}
CROSSED = {"hatch_pattern": "x", "hatch_color": "#ffffff", "hatch_alpha": 0.6}


class WeightsView(pn.viewable.Viewer):
    def __init__(self, tr: Translator = ENGLISH, **params):
        super().__init__(**params)
        self.tr, _ = tr, canvas_words(tr)
        cols = {c: f32([]) for c in ("index", "row", "weight", "contribution_norm", "norm_share")}
        cols.update(label=[], legal=np.zeros(0, dtype=bool), mask_text=[])
        unselected = Selection()  # no tool selects from either source: they share one
        self.source = ColumnDataSource(name="weights", data=cols, selected=unselected)
        # Rows that are not one key: "all others" (the summed weight of the keys without a row
        # of their own) and the null candidate. `weights` keeps exactly one row per key.
        self.extra = ColumnDataSource(
            name="weights_extra", data=self._extra_data([], [], []), selected=unselected
        )
        fig = make_figure(
            _(TITLE),
            tr=tr,
            height=360,
            y_range=row_range(),
            x_range=Range1d(0, FULL),
        )
        fig.xaxis.axis_label = _(AXIS_LABEL)
        fig.xaxis.formatter = percent_ticks("0.[000]%", tr)
        # Per row: its weight, then its share of |w·v| (dotted).
        weight = {"right": "weight", "color": STAGE_COLOURS["weight"]}
        share = {"right": "norm_share", **edged(STAGE_COLOURS["norm_share"]), **DOTTED}
        w = dodged_bar(fig, self.source, -BAR / 2, BAR, **weight, legend_label=_("weight w"))
        s = dodged_bar(fig, self.source, BAR / 2, BAR, **share, legend_label=_("share of |w·v|"))
        # "All others" and the null candidate: the same bars, cross-hatched weights.
        extras = [
            dodged_bar(fig, self.extra, -BAR / 2, BAR, **weight, **CROSSED),
            dodged_bar(fig, self.extra, BAR / 2, BAR, **share),
        ]
        bar_note(fig, self.extra, x="weight", text="note")  # their percentage
        bar_note(fig, self.source, x=0, text="mask_text")
        add_hover(
            fig,
            [w, s, *extras],
            [
                (_("key"), "@label"),
                (_("weight"), "@weight{0.0000}"),
                ("|w·v|", "@contribution_norm{0.000}"),
                (_("share"), "@norm_share{0.0%}"),
            ],
        )
        style_legend(fig, below=True)
        row_axis(fig)
        self.token_note = add_token_note(fig)  # what ␣ and a split character's ↳ mean
        self.figure = fig
        self.fit = FitText(fig, legend_cols=2, tr=tr)  # title, axis label and legend fit its width
        self._snap = None
        self.rows = FitRows(fig, lambda: self.update(self._snap))
        self._x_labels(null=False)

    def _x_labels(self, *, null: bool) -> None:
        _ = canvas_words(self.tr)
        if null:
            self.fit.x_label(_(AXIS_LABEL_NULL), _("share (with null: 100%)"), _("share"))
        else:
            self.fit.x_label(_(AXIS_LABEL), _("share (sums to 100%)"), _("share"))

    def _extra_data(self, kind, weight, share, norm=None, labels=None, rows=None) -> dict:
        n = len(kind)
        return {
            "row": f32(rows if rows is not None else []),
            "weight": f32(weight),
            "norm_share": f32(share),
            "contribution_norm": f32(norm if norm is not None else np.zeros(n)),
            "label": list(labels or []),
            "kind": list(kind),
            "note": [share_text(w, self.tr) for w in weight],
        }

    def update(self, snap) -> None:
        _ = canvas_words(self.tr)
        weights = np.asarray(snap.weights, dtype=np.float64)
        norms = np.asarray(snap.contribution_norms, dtype=np.float64)
        total = float(norms.sum())
        share = norms / total if total > 0 else np.zeros_like(norms)
        legal = np.asarray(snap.legal, dtype=bool)
        # As many rows as the drawn height leaves readable (a laptop's short chart ran eleven
        # labels into each other); the rest go into "all others".
        self._snap = snap
        max_rows = self.rows.max_rows(int(snap.null_weight is not None))
        rows, shown = row_positions(weights, snap.labels, max_rows)
        others = others_count(len(weights), max_rows)
        kind, w_extra, s_extra, n_extra, l_extra = [], [], [], [], []
        if others:
            hidden = np.isnan(rows)
            kind.append("others")
            w_extra.append(float(weights[hidden].sum()))
            s_extra.append(float(share[hidden].sum()))
            n_extra.append(float(norms[hidden].sum()))
            # TRANSLATORS: the bar charts' last row: the keys without a row of their own.
            l_extra.append(_("{others} ({count})").format(others=_(OTHERS), count=others))
        if snap.null_weight is not None:
            kind.append("null")
            w_extra.append(float(snap.null_weight))
            s_extra.append(0.0)  # a zero value: the refused share moves the output nowhere
            n_extra.append(0.0)
            l_extra.append(_(NULL_LABEL))
        extra_rows = np.arange(len(shown), len(shown) + len(kind), dtype=np.float32)
        assign(
            self.extra,
            self._extra_data(kind, w_extra, s_extra, n_extra, l_extra, extra_rows),
        )
        assign(
            self.source,
            {
                "index": f32(np.arange(len(weights))),
                "row": rows,
                "weight": f32(weights),
                "contribution_norm": f32(norms),
                "norm_share": f32(share),
                "label": list(snap.labels),
                "legal": legal,
                "mask_text": ["" if ok else _("masked: weight 0") for ok in legal],
            },
        )
        set_rows(self.figure, [*isolated_labels(shown), *l_extra])
        show_token_note(self.token_note, snap.labels, self.tr)  # the planes above show every token
        x_range = self.figure.x_range
        peak = max(weights.max(), share.max(), max(w_extra, default=0.0), max(s_extra, default=0))
        end = fit_end(x_range.end, float(peak), full=FULL)
        if end != x_range.end:
            x_range.end = end
        self._title(len(shown) if others else None, len(rows), snap.null_weight)
        self._x_labels(null=snap.null_weight is not None)

    def _title(self, top: int | None, keys: int, null_weight) -> None:
        """Shorter titles for a narrower chart keep what is shown (top k of n, the null's
        share): its parts joined by " · "."""
        _, ngettext = canvas_words(self.tr), self.tr.ngettext
        # TRANSLATORS: the weights chart's title: the {shown} heaviest keys of {total} are drawn
        # (one form per count of {shown}: "the largest of 14" where a language says so).
        top_n = ngettext("top {shown} of {total}", "top {shown} of {total}", top or 0)
        tops = [canvas_line(top_n.format(shown=top, total=keys), self.tr)] if top else []
        null, short_null = [], []
        if null_weight is not None:
            share = share_text(null_weight, self.tr)
            # TRANSLATORS: the weights chart's title: the share the null route takes.
            null = [_("null takes {share}").format(share=share)]
            short_null = [_("null {share}").format(share=share)]
        top_first = ngettext("Top {shown} of {total}", "Top {shown} of {total}", top or 0)
        top_only = canvas_line(top_first.format(shown=top, total=keys), self.tr) if top else ""
        self.fit.title(
            " · ".join([_(TITLE), *tops, *null]),
            " · ".join([_("Weights, |w·v|"), *tops, *short_null]),
            " · ".join([_("Weights"), *tops, *short_null]),
            " · ".join([top_only or _("Weights"), *short_null]),
            _("Weights"),
        )

    def __panel__(self):
        return pn.pane.Bokeh(self.figure, sizing_mode="stretch_width")


def share_text(x: float, tr: Translator = ENGLISH) -> str:
    """A share as `share_percent` writes it (never a real share as 0% or 100%), in `tr`'s
    language."""
    if tr is ENGLISH or tr.code == "en":
        return share_percent(float(x))
    _ = canvas_words(tr)
    p = max(0.0, 100 * float(x))
    if 0 < p < 0.1:
        return _("under {share}").format(share=tr.format_percent(0.001, "0.0%"))
    if 99.9 < p < 100:
        return _("over {share}").format(share=tr.format_percent(0.999, "0.0%"))
    whole = p <= 0 or p >= 100 or 1 <= p < 99
    return tr.format_percent(p / 100, "0%" if whole else "0.0%")
