"""Entropy of the weights (and the effective number of keys, exp(entropy)) across temperature,
with the current temperature marked."""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, LinearAxis, Range1d, Span
from bokeh.models.glyphs import Line, Scatter

from app.i18n.translator import ENGLISH, Translator
from app.state.scene_tables import entropy_table

from .plot_text import PlotText
from .style import (
    EDGES,
    OKABE_ITO,
    add_glyph,
    add_hover,
    assign,
    canvas_words,
    decimal_ticks,
    f32,
    make_figure,
    plot_pane_styles,
    style_legend,
)


class EntropyView(pn.viewable.Viewer):
    def __init__(self, tr: Translator = ENGLISH, **params):
        super().__init__(**params)
        self.tr, _ = tr, canvas_words(tr)
        # Placed by the page, after the plot.
        self.text = PlotText(_("The entropy plot in words"), tr)
        cols = ("temperature", "entropy", "effective_keys")
        self.source = ColumnDataSource(name="entropy_sweep", data={c: f32([]) for c in cols})
        self.current = ColumnDataSource(name="entropy_now", data={c: f32([]) for c in cols})
        fig = make_figure(
            _("Entropy vs temperature"),
            tr=tr,
            height=300,
            x_axis_type="log",
            y_range=Range1d(0, 1.2),
        )
        fig.xaxis.axis_label = _("temperature τ (log scale)")
        fig.yaxis.axis_label = _("entropy (nats)")
        fig.extra_y_ranges = {"eff": Range1d(1, 2)}
        eff_axis = LinearAxis(y_range_name="eff", axis_label=_("effective keys e^H"))
        eff_axis.axis_label_text_font_size = "15px"
        eff_axis.major_label_text_font_size = "14px"
        fig.add_layout(eff_axis, "right")
        decimal_ticks(fig, tr)  # both y axes and the log x axis
        line = add_glyph(
            fig,
            Line,
            "temperature",
            "entropy",
            source=self.source,
            line_width=3,
            color=OKABE_ITO["blue"],
            legend_label=_("entropy"),
        )
        add_glyph(
            fig,
            Line,
            "temperature",
            "effective_keys",
            source=self.source,
            line_width=3,
            line_dash="dashed",
            color=EDGES[OKABE_ITO["orange"]],  # 3:1 on white (a line has no outline)
            y_range_name="eff",
            legend_label=_("effective keys"),
        )
        now = add_glyph(
            fig,
            Scatter,
            "temperature",
            "entropy",
            source=self.current,
            size=16,
            marker="diamond",
            color=OKABE_ITO["vermillion"],
            line_color="#000000",
            # TRANSLATORS: the entropy plot's legend: the point at the current temperature.
            legend_label=_("now"),
        )
        self.now_line = Span(
            name="temperature_marker",
            location=1.0,
            dimension="height",
            line_dash="dotted",
            line_color=OKABE_ITO["vermillion"],
            line_width=2,
        )
        fig.add_layout(self.now_line)
        add_hover(
            fig,
            [line, now],
            [
                ("τ", "@temperature{0.000}"),
                ("H", "@entropy{0.000}"),
                ("e^H", "@effective_keys{0.00}"),
            ],
        )
        style_legend(fig, "top_left")
        self.figure = fig

    def update(self, snap) -> None:
        self.text.show((entropy_table(snap),))
        sweep = snap.temperature_sweep
        temps = np.asarray(sweep.temperatures, dtype=np.float64)
        entropy = np.asarray(sweep.entropy, dtype=np.float64)
        temperature = float(sweep.current_temperature)
        assign(
            self.source,
            {
                "temperature": f32(temps),
                "entropy": f32(entropy),
                "effective_keys": f32(np.exp(entropy)),
            },
        )
        assign(
            self.current,
            {
                "temperature": f32([temperature]),
                "entropy": f32([sweep.current_entropy]),
                "effective_keys": f32([snap.effective_keys]),
            },
        )
        self.now_line.location = float(temperature)
        top = max(float(np.max(entropy, initial=0.0)), float(snap.entropy), 0.1) * 1.1
        if abs(self.figure.y_range.end - top) > 1e-6:
            self.figure.y_range.end = top
            # Both axes describe the same curve: e^H on the right lines up with H on the left.
            self.figure.extra_y_ranges["eff"].update(start=1.0, end=float(np.exp(top)))

    def __panel__(self):
        return pn.pane.Bokeh(self.figure, sizing_mode="stretch_width", **plot_pane_styles(self.tr))
