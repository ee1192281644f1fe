"""The dimension story: spread of the logits and entropy of the weights against d_k, with and
without the 1/sqrt(d_k) scale, the sqrt(d_k) theory line, and the current d_k marked."""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, Span
from bokeh.models.glyphs import Line, Scatter

from app.i18n.markers import N_
from app.i18n.translator import ENGLISH, Translator
from app.state.chart_tables import dimension_table

from .plot_text import PlotText
from .style import (
    STAGE_COLOURS,
    add_glyph,
    add_hover,
    canvas_words,
    decimal_ticks,
    f32,
    make_figure,
    plot_pane_styles,
    style_legend,
)

# The two series: without and with the 1/√d_k scale (their legend's names).
UNSCALED, SCALED = N_("unscaled"), N_("scaled")
COLUMNS = (
    "d_k",
    "logit_std_scaled",
    "logit_std_unscaled",
    "entropy_scaled",
    "entropy_unscaled",
    "theory_std",
)


class DimensionView(pn.viewable.Viewer):
    def __init__(self, tr: Translator = ENGLISH, **params):
        super().__init__(**params)
        self.tr, _ = tr, canvas_words(tr)
        self.text = PlotText(_("The d_k plots in words"), tr)  # placed by the page, after them
        self.source = ColumnDataSource(name="dimension_sweep", data={c: f32([]) for c in COLUMNS})
        self.spread = make_figure(
            _("Logit spread vs d_k"), tr=tr, height=300, x_axis_type="log", y_axis_type="log"
        )
        self.spread.xaxis.axis_label = _("d_k (log scale)")
        self.spread.yaxis.axis_label = _("std of logits")
        un = self._series(self.spread, "logit_std_unscaled", UNSCALED)
        sc = self._series(self.spread, "logit_std_scaled", SCALED)
        add_glyph(
            self.spread,
            Line,
            "d_k",
            "theory_std",
            source=self.source,
            line_width=2,
            line_dash="dashed",
            color=STAGE_COLOURS["theory"],
            legend_label=_("√d_k theory"),
        )
        add_hover(
            self.spread,
            [un, sc],
            [
                ("d_k", "@d_k"),
                (_(UNSCALED), "@logit_std_unscaled"),
                (_(SCALED), "@logit_std_scaled"),
            ],
        )
        style_legend(self.spread, "top_left")

        self.entropy = make_figure(_("Entropy vs d_k"), tr=tr, height=300, x_axis_type="log")
        self.entropy.xaxis.axis_label = _("d_k (log scale)")
        self.entropy.yaxis.axis_label = _("entropy (nats)")
        eu = self._series(self.entropy, "entropy_unscaled", UNSCALED)
        es = self._series(self.entropy, "entropy_scaled", SCALED)
        add_hover(
            self.entropy,
            [eu, es],
            [("d_k", "@d_k"), (_(UNSCALED), "@entropy_unscaled"), (_(SCALED), "@entropy_scaled")],
        )
        style_legend(self.entropy, "bottom_left")
        decimal_ticks(self.spread, tr)
        decimal_ticks(self.entropy, tr)

        self.markers = []
        for fig, name in ((self.spread, "d_k_marker"), (self.entropy, "d_k_marker_entropy")):
            span = Span(
                name=name,
                location=2,
                dimension="height",
                line_dash="dotted",
                line_width=2,
                line_color="#000000",
            )
            fig.add_layout(span)
            self.markers.append(span)

    # Unscaled and scaled series differ by colour and by marker shape, so they never rely on
    # colour alone.
    _LOOK = {UNSCALED: ("unscaled_line", "square"), SCALED: ("scaled_line", "circle")}

    def _series(self, fig, column: str, kind: str):
        """One sweep as a line with markers at the measured d_k; returns the line renderer."""
        colour, marker = self._LOOK[kind]
        line = add_glyph(
            fig,
            Line,
            "d_k",
            column,
            source=self.source,
            line_width=3,
            color=STAGE_COLOURS[colour],
            legend_label=canvas_words(self.tr)(kind),
        )
        add_glyph(
            fig,
            Scatter,
            "d_k",
            column,
            source=self.source,
            size=7,
            color=STAGE_COLOURS[colour],
            marker=marker,
        )
        return line

    def update(self, snap, d_k: int) -> None:
        sweep = snap.dimension_sweep
        self.text.show((dimension_table(sweep, d_k),))
        data = {c: f32(np.asarray(getattr(sweep, c), dtype=np.float64)) for c in COLUMNS}
        previous = self.source.data
        if any(
            len(previous[c]) != len(data[c]) or not np.array_equal(previous[c], data[c])
            for c in COLUMNS
        ):
            self.source.data = data  # the sweep is cached upstream: resend only on change
        for span in self.markers:
            if span.location != d_k:
                span.location = int(d_k)

    def __panel__(self):
        return pn.Row(
            pn.pane.Bokeh(self.spread, sizing_mode="stretch_width", **plot_pane_styles(self.tr)),
            pn.pane.Bokeh(self.entropy, sizing_mode="stretch_width", **plot_pane_styles(self.tr)),
            sizing_mode="stretch_width",
        )
