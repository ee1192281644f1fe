"""Logits per key at three stages: raw q·k, after the 1/sqrt(d_k) scale, after temperature.

A masked key has no logit: its last stage is drawn as a hatched bar running off the left edge
with the text "−∞ masked", so it reads without colour.
"""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, Span
from bokeh.transform import dodge

from .rows import row_axis, row_positions, row_range, set_rows
from .style import STAGE_COLOURS, add_hover, assign, f32, make_figure, style_legend

STAGES = (("raw", "raw q·k"), ("scaled", "after scale"), ("logit", "after temperature"))
BAR = 0.26


class LogitsView(pn.viewable.Viewer):
    def __init__(self, **params):
        super().__init__(**params)
        cols = {c: f32([]) for c in ("index", "row", "raw", "scaled", "logit", "logit_drawn")}
        cols.update(
            {c: f32([]) for c in ("hatch_left", "hatch_right")},
            label=[],
            legal=np.zeros(0, dtype=bool),
            mask_text=[],
        )
        self.source = ColumnDataSource(name="logits", data=cols)
        fig = make_figure("Logits per key", height=360, y_range=row_range())
        fig.xaxis.axis_label = "logit"
        renderers = []
        for offset, (column, text) in zip((-BAR, 0.0, BAR), STAGES, strict=True):
            drawn = "logit_drawn" if column == "logit" else column
            renderers.append(
                fig.hbar(
                    y=dodge("row", offset, range=fig.y_range),
                    right=drawn,
                    left=0,
                    height=BAR * 0.92,
                    source=self.source,
                    color=STAGE_COLOURS[column],
                    legend_label=text,
                )
            )
        fig.hbar(
            y=dodge("row", BAR, range=fig.y_range),
            left="hatch_left",
            right="hatch_right",
            height=BAR * 0.92,
            source=self.source,
            fill_color="#ffffff",
            line_color="#555555",
            hatch_pattern="/",
            hatch_color="#555555",
            hatch_scale=8,
            legend_label="masked (−∞)",
        )
        fig.text(
            x="hatch_right",
            y=dodge("row", BAR, range=fig.y_range),
            text="mask_text",
            source=self.source,
            x_offset=6,
            text_baseline="middle",
            text_font_size="14px",
            text_color="#333333",
        )
        fig.add_layout(Span(location=0, dimension="height", line_color="#777777"))
        add_hover(
            fig,
            renderers,
            [
                ("key", "@label"),
                ("raw", "@raw{0.000}"),
                ("scaled", "@scaled{0.000}"),
                ("after temperature", "@logit{0.000}"),
            ],
        )
        style_legend(fig, below=True)
        row_axis(fig)
        self.figure = fig

    def update(self, snap) -> None:
        raw = np.asarray(snap.scores, dtype=np.float64)
        scaled = np.asarray(snap.scaled, dtype=np.float64)
        logit = np.asarray(snap.logits, dtype=np.float64)
        legal = np.asarray(snap.legal, dtype=bool) & np.isfinite(logit)
        finite = np.concatenate([raw[np.isfinite(raw)], scaled[np.isfinite(scaled)], logit[legal]])
        low = min(0.0, float(finite.min(initial=0.0)))
        high = max(0.0, float(finite.max(initial=0.0)))
        left_edge = low - 0.3 * max(high - low, 1.0)
        n = len(logit)
        rows, shown = row_positions(snap.weights, snap.labels)
        assign(
            self.source,
            {
                "index": f32(np.arange(n)),
                "row": rows,
                "raw": f32(raw),
                "scaled": f32(scaled),
                "logit": f32(logit),
                "logit_drawn": f32(np.where(legal, logit, np.nan)),
                "hatch_left": f32(np.where(legal, np.nan, left_edge)),
                "hatch_right": f32(np.where(legal, np.nan, 0.0)),
                "label": list(snap.labels),
                "legal": legal,
                "mask_text": ["" if ok else "−∞ masked" for ok in legal],
            },
        )
        set_rows(self.figure, shown)
        title = "Logits per key"
        if len(shown) < len(rows):
            title += f" (top {len(shown)} of {len(rows)} by weight)"
        if self.figure.title.text != title:
            self.figure.title.text = title

    def __panel__(self):
        return pn.pane.Bokeh(self.figure, sizing_mode="stretch_width")
