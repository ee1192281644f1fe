"""Attention weight per key beside that key's share of the contribution norm.

Putting the two side by side shows that a heavy weight on a short value moves the output little.
"""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, NumeralTickFormatter, Range1d
from bokeh.transform import dodge

from .rows import fit_end, row_axis, row_positions, row_range, set_rows
from .style import STAGE_COLOURS, add_hover, assign, f32, make_figure, style_legend

BAR = 0.38
FULL = 1.18  # the whole 0..1 scale, with room for the labels


class WeightsView(pn.viewable.Viewer):
    def __init__(self, **params):
        super().__init__(**params)
        cols = {c: f32([]) for c in ("index", "row", "weight", "contribution_norm", "norm_share")}
        cols.update(label=[], legal=np.zeros(0, dtype=bool), mask_text=[])
        self.source = ColumnDataSource(name="weights", data=cols)
        fig = make_figure(
            "Weights and shares of |w·v|",
            height=360,
            y_range=row_range(),
            x_range=Range1d(0, FULL),
        )
        fig.xaxis.axis_label = "share (weights sum to 100%, and so do the |w·v| shares)"
        fig.xaxis.formatter = NumeralTickFormatter(format="0.[000]%")
        w = fig.hbar(
            y=dodge("row", -BAR / 2, range=fig.y_range),
            right="weight",
            left=0,
            height=BAR * 0.92,
            source=self.source,
            color=STAGE_COLOURS["weight"],
            legend_label="weight w",
        )
        s = fig.hbar(
            y=dodge("row", BAR / 2, range=fig.y_range),
            right="norm_share",
            left=0,
            height=BAR * 0.92,
            source=self.source,
            color=STAGE_COLOURS["norm_share"],
            hatch_pattern="dot",
            hatch_color="#ffffff",
            hatch_alpha=0.5,
            legend_label="share of |w·v|",
        )
        fig.text(
            x=0,
            y="row",
            text="mask_text",
            source=self.source,
            x_offset=6,
            text_baseline="middle",
            text_font_size="14px",
            text_color="#333333",
        )
        add_hover(
            fig,
            [w, s],
            [
                ("key", "@label"),
                ("weight", "@weight{0.0000}"),
                ("|w·v|", "@contribution_norm{0.000}"),
                ("share", "@norm_share{0.0%}"),
            ],
        )
        style_legend(fig, below=True)
        row_axis(fig)
        self.figure = fig

    def update(self, snap) -> None:
        weights = np.asarray(snap.weights, dtype=np.float64)
        norms = np.asarray(snap.contribution_norms, dtype=np.float64)
        total = float(norms.sum())
        share = norms / total if total > 0 else np.zeros_like(norms)
        legal = np.asarray(snap.legal, dtype=bool)
        rows, shown = row_positions(weights, snap.labels)
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
                "mask_text": ["" if ok else "masked: weight 0" for ok in legal],
            },
        )
        set_rows(self.figure, shown)
        x_range = self.figure.x_range
        end = fit_end(x_range.end, float(max(weights.max(), share.max())), full=FULL)
        if end != x_range.end:
            x_range.end = end
        title = "Weights and shares of |w·v|"
        if len(shown) < len(rows):
            title += f" (top {len(shown)} of {len(rows)})"
        if snap.null_weight is not None:
            title += f" · null route takes {snap.null_weight:.0%}"
        if self.figure.title.text != title:
            self.figure.title.text = title

    def __panel__(self):
        return pn.pane.Bokeh(self.figure, sizing_mode="stretch_width")
