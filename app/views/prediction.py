"""The trained model's answer: its distribution over the answer vocabulary, before and after the
current intervention, with the correct answer marked.

A head's route is local; this is the final task. Drawing both keeps the seed's rule in sight:
a change in a head's weights is not yet a change in what the model says.
"""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, NumeralTickFormatter, Range1d

from app.state.chart_tables import answer_name, answer_rows, answer_table
from engine.heads import shown_token

from .bars import dodged_bar
from .plot_text import PlotText
from .rows import row_axis, row_range, set_rows
from .style import OKABE_ITO, add_hover, assign, f32, make_figure, style_legend
from .text_fit import FitText

BAR = 0.4


class PredictionView(pn.viewable.Viewer):
    def __init__(self, **params):
        super().__init__(**params)
        self.text = PlotText("The model's answer in words")  # placed by the page, after it
        cols = {c: f32([]) for c in ("row", "probability", "before")}
        cols.update(token=[], correct=[])
        self.source = ColumnDataSource(name="prediction", data=cols)
        fig = make_figure(
            "The model's answer", height=330, y_range=row_range(), x_range=Range1d(0, 1.02)
        )
        fig.name = "prediction_plot"
        fig.xaxis.axis_label = "probability of each answer (all sum to 100%)"
        fig.xaxis.formatter = NumeralTickFormatter(format="0%")
        before = dodged_bar(
            fig,
            self.source,
            -BAR / 2,
            BAR,
            right="before",
            fill_color="#ffffff",
            line_color="#555555",
            line_dash="dashed",
            legend_label="before the intervention",
        )
        after = dodged_bar(
            fig,
            self.source,
            BAR / 2,
            BAR,
            right="probability",
            color=OKABE_ITO["purple"],
            legend_label="with it (now)",
        )
        add_hover(
            fig,
            [before, after],
            [("answer", "@token"), ("now", "@probability{0.000}"), ("before", "@before{0.000}")],
        )
        style_legend(fig, below=True)
        row_axis(fig)
        self.figure = fig
        self.fit = FitText(fig, legend_cols=2)  # title, axis label and legend fit its width
        self.fit.x_label(
            "probability of each answer (all sum to 100%)", "probability (sums to 100%)", "P"
        )

    def update(self, prediction) -> None:
        self.text.show((answer_table(prediction),))
        rows = answer_rows(prediction)
        tokens, b, a = list(rows.tokens), list(rows.before), list(rows.after)
        correct = list(rows.correct)
        assign(
            self.source,
            {
                "row": f32(np.arange(len(tokens))),
                "probability": f32(a),
                "before": f32(b),
                "token": tokens,
                "correct": correct,
            },
        )
        names = [answer_name(t) for t in tokens]
        set_rows(self.figure, [f"✓ {t}" if ok else t for t, ok in zip(names, correct, strict=True)])
        answer = f"Answer: {shown_token(prediction.answer_after)}"
        was = ""
        if prediction.answer_after != prediction.answer_before:
            was = f" (was {shown_token(prediction.answer_before)})"
        right = ""
        if prediction.expected is not None:
            right = f" · right: {shown_token(prediction.expected)}"
        # A narrow chart drops "right" (its row is ticked), then "was" (the dashed bars).
        self.fit.title(answer + was + right, answer + was, answer)

    def __panel__(self):
        return pn.pane.Bokeh(self.figure, sizing_mode="stretch_width")
