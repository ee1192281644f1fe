"""The softmax Jacobian d w_i / d s_j as a small heatmap: near a one-hot route it fades to zero,
which is the saturation that the 1/sqrt(d_k) scale protects against.

s_j is the snapshot's `scaled` score of key j: after the 1/sqrt(d_k) factor and before the
temperature divides it, so the Jacobian carries the 1/T (the logits chart shows s_j / T)."""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import (
    BasicTicker,
    ColorBar,
    ColumnDataSource,
    FixedTicker,
    Grid,
    Label,
    LinearColorMapper,
    Range1d,
)
from bokeh.models.glyphs import Rect
from bokeh.palettes import PuOr11

from app.i18n.markers import N_
from app.i18n.translator import ENGLISH, Translator
from app.state.chart_tables import jacobian_block, jacobian_table

from .label_layout import isolated_labels
from .plot_text import PlotText
from .rows import set_ticks
from .style import (
    add_glyph,
    add_hover,
    assign,
    canvas_words,
    decimal_ticks,
    f32,
    make_figure,
    plot_pane_styles,
)
from .text_fit import FitText

# Past this many keys only the heaviest ones are shown: a 4096² heatmap teaches nothing.
MAX_SIDE = 12
# Below this every cell draws as the palette's middle: the map would look blank, so say why.
VANISHED = 1e-3
SCORE_AXIS = N_("scaled score s_j (before ÷ τ)")
TITLE = N_("Softmax Jacobian ∂w_i/∂s_j")
ROW_CHARS = 12  # a row's token label is cut to this (the hover and the table have it whole)


def axis_labels(labels) -> tuple[list[str], list[str], bool]:
    """(row labels, column labels, by position): a model's keys ("␣loan @25") name the rows
    and their positions alone the columns, each upright in its own column; side by side, the
    columns' full labels overlapped from about 26 tokens. A toy's short key names stay both."""
    labels = [str(lab) for lab in labels]
    if not labels or not all(" @" in lab for lab in labels):
        return labels, labels, False
    rows = []
    for lab in labels:
        token, at = lab.rsplit(" @", 1)
        token = token if len(token) <= ROW_CHARS else token[: ROW_CHARS - 1] + "…"
        rows.append(f"{token} @{at}")
    return rows, [lab.rsplit(" @", 1)[1] for lab in labels], True


class JacobianView(pn.viewable.Viewer):
    def __init__(self, tr: Translator = ENGLISH, **params):
        super().__init__(**params)
        self.tr, _ = tr, canvas_words(tr)
        self.text = PlotText(_("The Jacobian in words"), tr)  # placed by the page, after them
        cols = {c: f32([]) for c in ("x", "y", "value")}
        cols.update(row_label=[], column_label=[])
        self.source = ColumnDataSource(name="jacobian", data=cols)
        self.mapper = LinearColorMapper(palette=list(reversed(PuOr11)), low=-0.25, high=0.25)
        fig = make_figure(
            _(TITLE),
            tr=tr,
            height=330,
            x_range=Range1d(-0.5, 0.5),
            y_range=Range1d(0.5, -0.5),
        )
        rect = add_glyph(
            fig,
            Rect,
            "x",
            "y",
            width=0.96,
            height=0.96,
            source=self.source,
            fill_color={"field": "value", "transform": self.mapper},
            line_color=None,
        )
        self.colorbar = ColorBar(
            color_mapper=self.mapper,
            ticker=BasicTicker(desired_num_ticks=5),
            major_label_text_font_size="14px",
            width=14,
        )
        fig.add_layout(self.colorbar, "right")
        decimal_ticks(fig, tr, axes=[self.colorbar])  # its ticks in the language's numbers
        fig.xaxis.axis_label = _(SCORE_AXIS)
        fig.yaxis.axis_label = _("weight w_i")
        fig.center = [item for item in fig.center if not isinstance(item, Grid)]  # cells only
        add_hover(
            fig, [rect], [("w", "@row_label"), ("s", "@column_label"), ("∂w/∂s", "@value{0.0000}")]
        )
        for axis in (fig.xaxis[0], fig.yaxis[0]):
            axis.ticker = FixedTicker(ticks=[])
        # One Label (one model): the words that replace a blank map when the gradients vanish.
        self.note = Label(
            x=0,
            y=0,
            text="",
            visible=False,
            text_align="center",
            text_baseline="middle",
            text_font_size="16px",
            text_font_style="bold",
            text_color="#222222",
            background_fill_color="#ffffff",
            background_fill_alpha=0.9,
            border_line_color="#888888",
            padding=8,
        )
        fig.add_layout(self.note)
        self.figure = fig
        self.fit = FitText(fig, tr=tr)  # the title and the axis label fit a phone's narrow frame
        self._shown: tuple = ()

    def update(self, snap) -> None:
        block = jacobian_block(snap, MAX_SIDE)
        self.text.show((jacobian_table(block),))
        weights = np.asarray(snap.weights, dtype=np.float64)
        labels = list(snap.labels)
        sub, shown, k = block.values, list(block.labels), len(block.labels)
        yy, xx = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")
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
        largest = float(np.max(np.abs(sub), initial=0.0))
        bound = max(largest, VANISHED)
        self.mapper.update(low=-bound, high=bound)
        self._say_if_vanished(largest, weights, labels, k)
        if tuple(shown) != self._shown:
            self._shown = tuple(shown)
            self.figure.x_range.update(start=-0.5, end=k - 0.5)
            self.figure.y_range.update(start=k - 0.5, end=-0.5)
            rows, columns, by_position = axis_labels(shown)
            set_ticks(self.figure.yaxis[0], isolated_labels(rows))
            set_ticks(self.figure.xaxis[0], columns)
            self.figure.xaxis[0].major_label_orientation = (
                "vertical" if by_position else "horizontal"
            )
            self._texts(by_position, k, len(labels))

    def _texts(self, by_position: bool, k: int, keys: int) -> None:
        """The axis label and title for these rows, longest first (FitText)."""
        _ = canvas_words(self.tr)
        if by_position:
            self.fit.x_label(
                # TRANSLATORS: the Jacobian's x axis when its columns are token positions.
                _("{axis}, key by position").format(axis=_(SCORE_AXIS)),
                _("score s_j, key by position"),
                _("s_j by position"),
            )
        else:
            self.fit.x_label(_(SCORE_AXIS), _("scaled score s_j"), _("s_j"))
        if keys <= MAX_SIDE:
            self.fit.title(_(TITLE), _("Jacobian ∂w_i/∂s_j"))
        else:
            self.fit.title(
                _("Softmax Jacobian ∂w_i/∂s_j ({shown} heaviest of {total} keys)").format(
                    shown=k, total=keys
                ),
                _("Jacobian ∂w_i/∂s_j ({shown} of {total} keys)").format(shown=k, total=keys),
                _("Jacobian ∂w_i/∂s_j"),
            )

    def _vanished(self, label: str, share: float) -> str:
        """The words over a blank map: why the gradients vanished (three lines)."""
        _ = canvas_words(self.tr)
        if 100 * share >= 99.95:
            held = _("more than {share}").format(share=self.tr.format_percent(0.999, "0.0%"))
        else:
            held = self.tr.format_percent(share, "0.0%")
        # TRANSLATORS: over the Jacobian's map when every cell is near 0; keep the line breaks
        # (\n): the map is narrow. {label}: a key; {held}: its share ("99.8%").
        return _(
            "The gradients vanished: every ∂w_i/∂s_j is below 0.001,\n"
            "because {label} holds {held} of the route.\n"
            "Nudging a logit moves no weight (softmax is saturated)."
        ).format(label=label, held=held)

    def _say_if_vanished(self, largest: float, weights, labels, k: int) -> None:
        vanished = k > 0 and largest < VANISHED
        if vanished:
            top = int(np.argmax(weights[: len(labels)]))
            share = float(weights[top])
            text = self._vanished(labels[top], share)
            centre = (k - 1) / 2
            self.note.update(x=centre, y=centre, text=text, visible=True)
        elif self.note.visible:
            self.note.visible = False
        # A scale of ±0.001 around nothing read as a measurement ("1.000e-3"): hide it.
        if self.colorbar.visible == vanished:
            self.colorbar.visible = not vanished

    def __panel__(self):
        return pn.pane.Bokeh(self.figure, sizing_mode="stretch_width", **plot_pane_styles(self.tr))
