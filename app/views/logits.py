"""Logits per key at three stages: raw q·k, after the 1/sqrt(d_k) scale, after temperature.

A masked key has no logit: its last stage is drawn as a hatched bar running off the left edge
with the text "−∞ masked", so it reads without colour.
"""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, Range1d, Selection, Span

from app.i18n.markers import N_
from app.i18n.translator import ENGLISH, Translator

from .bars import bar_note, dodged_bar
from .label_layout import isolated_labels
from .rows import NULL_LABEL, FitRows, row_axis, row_positions, row_range, set_rows
from .style import (
    STAGE_COLOURS,
    add_hover,
    assign,
    canvas_line,
    canvas_words,
    decimal_ticks,
    edged,
    f32,
    make_figure,
    style_legend,
)
from .text_fit import FitText

STAGES = (("raw", N_("raw q·k")), ("scaled", N_("after scale")), ("logit", N_("after temperature")))
TITLE = N_("Logits per key")
BAR = 0.26
HIDDEN_COLOUR = "#6e6e6e"
# Two hatches that must not be mistaken for each other (issue 40: both were diagonal stripes):
# the hidden part of a score continues its bar, dark with upright white lines; a masked key has
# no logit at all, white with dark diagonal lines and "−∞ masked" beside it.
HIDDEN_HATCH = {
    "fill_color": HIDDEN_COLOUR,
    "line_color": HIDDEN_COLOUR,
    "hatch_pattern": "|",
    "hatch_color": "#ffffff",
    "hatch_alpha": 0.8,
    "hatch_scale": 6,
}
MASKED_HATCH = {
    "fill_color": "#ffffff",
    "line_color": "#555555",
    "hatch_pattern": "/",
    "hatch_color": "#555555",
    "hatch_scale": 8,
}


def visible_scores(snap) -> np.ndarray:
    """Each key's q·k over the two drawn coordinates; the rest of its score is hidden."""
    keys = np.asarray(snap.keys, dtype=np.float64)
    return keys[:, :2] @ np.asarray(snap.query, dtype=np.float64)[:2]


class LogitsView(pn.viewable.Viewer):
    def __init__(self, tr: Translator = ENGLISH, **params):
        super().__init__(**params)
        self.tr, _ = tr, canvas_words(tr)
        self.source, self.extra = self._sources()
        # A range the server sets: an auto range would follow the live drag preview in the
        # browser and send its new bounds to the server on every frame.
        fig = make_figure(
            _(TITLE), tr=tr, height=360, y_range=row_range(), x_range=Range1d(-1.0, 1.0)
        )
        fig.xaxis.axis_label = _("logit")
        decimal_ticks(fig, tr, axes=fig.xaxis)
        renderers, null_bar = self._bars(fig)
        add_hover(
            fig,
            renderers,
            [
                (_("key"), "@label"),
                (_("raw q·k"), "@raw{0.000}"),
                # TRANSLATORS: the logits' tooltip: the part of q·k drawn in the plane, then the
                # part from the coordinates not drawn (indented under "raw q·k").
                ("  " + _("in the plane"), "@visible{0.000}"),
                ("  " + _("hidden dims"), "@hidden{0.000}"),
                (_("scaled"), "@scaled{0.000}"),
                (_("after temperature"), "@logit{0.000}"),
            ],
        )
        add_hover(fig, [null_bar], [("", "@label"), (_("logit"), "@logit{0.000}")])
        style_legend(fig, below=True)
        row_axis(fig)
        self.figure = fig
        self.fit = FitText(fig, legend_cols=2, tr=tr)  # the title and the legend fit its width
        self._snap = None
        self.rows = FitRows(fig, lambda: self.update(self._snap))  # rows fit its height

    @staticmethod
    def _sources() -> tuple[ColumnDataSource, ColumnDataSource]:
        """The keys' rows, and the null candidate's row (a zero key: score 0, logit threshold /
        temperature)."""
        cols = {
            c: f32([])
            for c in ("index", "row", "raw", "visible", "hidden", "scaled", "logit", "logit_drawn")
        }
        cols.update(
            {c: f32([]) for c in ("hatch_left", "hatch_right")},
            label=[],
            legal=np.zeros(0, dtype=bool),
            mask_text=[],
        )
        unselected = Selection()  # no tool selects from either source: they share one
        keys = ColumnDataSource(name="logits", data=cols, selected=unselected)
        extra = ColumnDataSource(
            name="logits_extra",
            data={c: f32([]) for c in ("row", "logit")} | {"label": []},
            selected=unselected,
        )
        return keys, extra

    def _bars(self, fig) -> tuple[list, object]:
        """Each stage's bar per key, the hidden part of q·k, the null candidate's bar and the
        masked keys' hatch: the renderers the hover reads, and the null bar's."""
        _ = canvas_words(self.tr)
        renderers = [
            dodged_bar(
                fig,
                self.source,
                offset,
                BAR,
                right={"logit": "logit_drawn", "raw": "visible"}.get(column, column),
                **edged(STAGE_COLOURS[column]),
                legend_label=_("q·k in the plane") if column == "raw" else _(text),
            )
            for offset, (column, text) in zip((-BAR, 0.0, BAR), STAGES, strict=True)
        ]
        # With d_k > 2 the raw score has a hidden part (the d_k - 2 coordinates not drawn),
        # stacked after the visible one: from q·k in the plane to the full q·k.
        self._hidden = dodged_bar(
            fig,
            self.source,
            -BAR,
            BAR,
            left="visible",
            right="raw",
            **HIDDEN_HATCH,
            legend_label=_("+ hidden dims"),
        )
        renderers.append(self._hidden)
        null_bar = dodged_bar(
            fig,
            self.extra,
            BAR,
            BAR,
            right="logit",
            color=STAGE_COLOURS["logit"],
            hatch_pattern="x",
            hatch_color="#ffffff",
            hatch_alpha=0.6,
        )
        dodged_bar(
            fig,
            self.source,
            BAR,
            BAR,
            left="hatch_left",
            right="hatch_right",
            **MASKED_HATCH,
            legend_label=_("masked (−∞)"),
        )
        bar_note(fig, self.source, x="hatch_right", text="mask_text", offset=BAR)
        fig.add_layout(Span(location=0, dimension="height", line_color="#777777"))
        return renderers, null_bar

    def update(self, snap) -> None:
        _ = canvas_words(self.tr)
        raw = np.asarray(snap.scores, dtype=np.float64)
        visible = visible_scores(snap)
        scaled = np.asarray(snap.scaled, dtype=np.float64)
        logit = np.asarray(snap.logits, dtype=np.float64)
        legal = np.asarray(snap.legal, dtype=bool) & np.isfinite(logit)
        null = [] if snap.null_logit is None else [float(snap.null_logit)]
        finite = np.concatenate(
            [raw[np.isfinite(raw)], visible, scaled[np.isfinite(scaled)], logit[legal], null]
        )
        low = min(0.0, float(finite.min(initial=0.0)))
        high = max(0.0, float(finite.max(initial=0.0)))
        left_edge = low - 0.3 * max(high - low, 1.0)
        masked = not bool(np.all(legal))
        self._fit_x(left_edge if masked else low, high)
        n = len(logit)
        self._snap = snap
        rows, shown = row_positions(snap.weights, snap.labels, self.rows.max_rows(len(null)))
        assign(
            self.source,
            {
                "index": f32(np.arange(n)),
                "row": rows,
                "raw": f32(raw),
                "visible": f32(visible),
                "hidden": f32(raw - visible),
                "scaled": f32(scaled),
                "logit": f32(logit),
                "logit_drawn": f32(np.where(legal, logit, np.nan)),
                "hatch_left": f32(np.where(legal, np.nan, left_edge)),
                "hatch_right": f32(np.where(legal, np.nan, 0.0)),
                "label": list(snap.labels),
                "legal": legal,
                "mask_text": ["" if ok else _("−∞ masked") for ok in legal],
            },
        )
        null_label = _(NULL_LABEL)
        labels = [*isolated_labels(shown), null_label] if null else isolated_labels(shown)
        assign(
            self.extra,
            {
                "row": f32(np.arange(len(shown), len(labels))),
                "logit": f32(null),
                "label": [null_label] * len(null),
            },
        )
        set_rows(self.figure, labels)
        # A trained head's plane keeps every score whole (engine/heads.py): nothing is hidden.
        scale = max(1.0, float(np.max(np.abs(raw), initial=0.0)))
        hidden = snap.d_k > 2 and float(np.max(np.abs(raw - visible), initial=0.0)) > 1e-9 * scale
        if self._hidden.visible != hidden:
            self._hidden.visible = hidden
            for item in self.figure.legend.items:
                if self._hidden in item.renderers:
                    item.visible = hidden
        hidden_label = _("+ {count} hidden dims").format(count=snap.d_k - 2)
        for item in self.figure.legend.items:
            if (
                self._hidden in item.renderers
                and getattr(item.label, "value", None) != hidden_label
            ):
                item.label = {"value": hidden_label}
        self._title(len(shown), len(rows), bool(null))

    def _title(self, shown: int, keys: int, null: bool) -> None:
        """The title, then shorter ones for a narrower chart: its parts joined by " · "."""
        _, ngettext = canvas_words(self.tr), self.tr.ngettext
        # TRANSLATORS: the logits chart's title: the {shown} largest logits of {total} drawn.
        top_n = ngettext("top {shown} of {total}", "top {shown} of {total}", shown)
        top = [canvas_line(top_n.format(shown=shown, total=keys), self.tr)] if shown < keys else []
        # TRANSLATORS: the logits chart's title when the null route has a bar too.
        plus = _("{title} + null") if null else "{title}"
        self.fit.title(
            plus.format(title=" · ".join([_(TITLE), *top])),
            plus.format(title=" · ".join([_("Logits"), *top])),
            _("Logits"),
        )

    def _fit_x(self, low: float, high: float) -> None:
        """Show low..high with a margin; keep the axis still while the bars fit and fill it."""
        pad = 0.08 * max(high - low, 1e-6)
        start, end = low - pad, high + pad
        x_range = self.figure.x_range
        fits = x_range.start <= low and high <= x_range.end
        if fits and (end - start) > 0.6 * (x_range.end - x_range.start):
            return
        x_range.update(start=float(start), end=float(end))

    def __panel__(self):
        return pn.pane.Bokeh(self.figure, sizing_mode="stretch_width")
