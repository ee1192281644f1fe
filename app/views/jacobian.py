"""The softmax Jacobian d w_i / d z_j as a small heatmap: near a one-hot route it fades to zero,
which is the saturation that the 1/sqrt(d_k) scale protects against."""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import (
    BasicTicker,
    ColorBar,
    ColumnDataSource,
    FixedTicker,
    Grid,
    LinearColorMapper,
    Range1d,
)
from bokeh.palettes import PuOr11

from .rows import set_ticks
from .style import add_hover, assign, f32, make_figure

# Past this many keys only the heaviest ones are shown: a 4096² heatmap teaches nothing.
MAX_SIDE = 12


class JacobianView(pn.viewable.Viewer):
    def __init__(self, **params):
        super().__init__(**params)
        cols = {c: f32([]) for c in ("x", "y", "value")}
        cols.update(row_label=[], column_label=[])
        self.source = ColumnDataSource(name="jacobian", data=cols)
        self.mapper = LinearColorMapper(palette=list(reversed(PuOr11)), low=-0.25, high=0.25)
        fig = make_figure(
            "Softmax Jacobian ∂w_i/∂z_j",
            height=330,
            x_range=Range1d(-0.5, 0.5),
            y_range=Range1d(0.5, -0.5),
        )
        rect = fig.rect(
            "x",
            "y",
            width=0.96,
            height=0.96,
            source=self.source,
            fill_color={"field": "value", "transform": self.mapper},
            line_color=None,
        )
        fig.add_layout(
            ColorBar(
                color_mapper=self.mapper,
                ticker=BasicTicker(desired_num_ticks=5),
                major_label_text_font_size="13px",
                width=14,
            ),
            "right",
        )
        fig.xaxis.axis_label = "logit z_j"
        fig.yaxis.axis_label = "weight w_i"
        fig.center = [item for item in fig.center if not isinstance(item, Grid)]  # cells only
        add_hover(
            fig, [rect], [("w", "@row_label"), ("z", "@column_label"), ("∂w/∂z", "@value{0.0000}")]
        )
        for axis in (fig.xaxis[0], fig.yaxis[0]):
            axis.ticker = FixedTicker(ticks=[])
        self.figure = fig
        self._shown: tuple = ()

    def update(self, snap) -> None:
        jac = np.asarray(snap.jacobian, dtype=np.float64)
        weights = np.asarray(snap.weights, dtype=np.float64)
        labels = list(snap.labels)
        side = min(len(jac), len(labels))
        if side > MAX_SIDE:
            keep = np.sort(np.argsort(-weights[:side], kind="stable")[:MAX_SIDE])
        else:
            keep = np.arange(side)
        sub = jac[np.ix_(keep, keep)]
        k = len(keep)
        yy, xx = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
        shown = [labels[i] for i in keep]
        assign(
            self.source,
            {
                "x": f32(xx.ravel()),
                "y": f32(yy.ravel()),
                "value": f32(sub.ravel()),
                "row_label": [shown[i] for i in yy.ravel()],
                "column_label": [shown[j] for j in xx.ravel()],
            },
        )
        bound = max(float(np.max(np.abs(sub), initial=0.0)), 1e-3)
        self.mapper.update(low=-bound, high=bound)
        if tuple(shown) != self._shown:
            self._shown = tuple(shown)
            self.figure.x_range.update(start=-0.5, end=k - 0.5)
            self.figure.y_range.update(start=k - 0.5, end=-0.5)
            for axis in (self.figure.xaxis[0], self.figure.yaxis[0]):
                set_ticks(axis, shown)
            self.figure.title.text = (
                "Softmax Jacobian ∂w_i/∂z_j"
                if len(labels) <= MAX_SIDE
                else f"Softmax Jacobian ∂w_i/∂z_j ({k} heaviest of {len(labels)} keys)"
            )

    def __panel__(self):
        return pn.pane.Bokeh(self.figure, sizing_mode="stretch_width")
