"""The trained model's answer: its distribution over the answer vocabulary, before and after the
current intervention, with the correct answer marked.

A head's route is local; this is the final task. Drawing both keeps the seed's rule in sight:
a change in a head's weights is not yet a change in what the model says.
"""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, Range1d

from app.i18n.translator import ENGLISH, Translator
from app.state.chart_tables import answer_name, answer_rows, answer_table
from app.state.scene_tables import in_language
from engine.heads import shown_token

from .bars import dodged_bar
from .label_layout import isolated
from .plot_text import PlotText
from .rows import row_axis, row_range, set_rows
from .style import (
    OKABE_ITO,
    add_hover,
    assign,
    canvas_words,
    f32,
    make_figure,
    percent_ticks,
    plot_pane_styles,
    style_legend,
)
from .text_fit import FitText

BAR = 0.4


class PredictionView(pn.viewable.Viewer):
    def __init__(self, tr: Translator = ENGLISH, **params):
        super().__init__(**params)
        self.tr, _ = tr, canvas_words(tr)
        self.text = PlotText(_("The model's answer in words"), tr)  # placed by the page
        cols = {c: f32([]) for c in ("row", "probability", "before")}
        cols.update(token=[], correct=[])
        self.source = ColumnDataSource(name="prediction", data=cols)
        fig = make_figure(
            _("The model's answer"),
            tr=tr,
            height=330,
            y_range=row_range(),
            x_range=Range1d(0, 1.02),
        )
        fig.name = "prediction_plot"
        fig.xaxis.axis_label = _("probability of each answer (all sum to 100%)")
        fig.xaxis.formatter = percent_ticks("0%", tr)
        before = dodged_bar(
            fig,
            self.source,
            -BAR / 2,
            BAR,
            right="before",
            fill_color="#ffffff",
            line_color="#555555",
            line_dash="dashed",
            legend_label=_("before the intervention"),
        )
        after = dodged_bar(
            fig,
            self.source,
            BAR / 2,
            BAR,
            right="probability",
            color=OKABE_ITO["purple"],
            legend_label=_("with it (now)"),
        )
        add_hover(
            fig,
            [before, after],
            [
                (_("answer"), "@token"),
                (_("now"), "@probability{0.000}"),
                (_("before"), "@before{0.000}"),
            ],
        )
        style_legend(fig, below=True)
        row_axis(fig)
        self.figure = fig
        self.fit = FitText(fig, legend_cols=2, tr=tr)  # title, axis label and legend fit its width
        self.fit.x_label(
            _("probability of each answer (all sum to 100%)"),
            _("probability (sums to 100%)"),
            "P",
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
        names = [isolated(in_language(answer_name(t), self.tr)) for t in tokens]
        set_rows(self.figure, [f"✓ {t}" if ok else t for t, ok in zip(names, correct, strict=True)])
        self._title(prediction)

    def _title(self, prediction) -> None:
        """The answer, what it was before (when it changed) and the right one, each dropped in
        turn on a narrow chart: "right" (its row is ticked), then "was" (the dashed bars)."""
        _ = canvas_words(self.tr)
        answer = _("Answer: {token}").format(token=shown_token(prediction.answer_after))
        with_was = answer
        if prediction.answer_after != prediction.answer_before:
            # TRANSLATORS: the answer chart's title: the answer, then the one before ("was").
            with_was = _("{answer} (was {token})").format(
                answer=answer, token=shown_token(prediction.answer_before)
            )
        full = with_was
        if prediction.expected is not None:
            full = " · ".join(
                [with_was, _("right: {token}").format(token=shown_token(prediction.expected))]
            )
        self.fit.title(full, with_was, answer)

    def __panel__(self):
        return pn.pane.Bokeh(self.figure, sizing_mode="stretch_width", **plot_pane_styles(self.tr))
