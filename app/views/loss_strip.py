"""The loss strip: how surprised a language model was by each token of the text, under it.

One bar per token (the first has none: nothing came before it), without the current edits and,
when there are edits, with them beside it. On repeated random words the two copies are shaded,
so the second copy's short bars (the model copies from its context) read at a glance, and so
does their growing back when the copying heads are ablated. The numbers are
`app/state/loss_tables.py`'s; its words are under the strip, its table in words for a screen
reader after it. The binding model predicts only its answer: the strip is hidden there.
"""

from __future__ import annotations

import html

import numpy as np
import panel as pn
from bokeh.models import BoxAnnotation, ColumnDataSource, Label, Range1d
from bokeh.models.glyphs import VBar

from app.i18n.markers import N_
from app.i18n.translator import ENGLISH, Translator
from app.state.loss_tables import (
    FIRST_COPY,
    SECOND_COPY,
    copy_of,
    loss_strip,
    strip_table,
    strip_words,
)

from .head_axes import left_to_right
from .plot_text import PlotText
from .style import OKABE_ITO, add_glyph, add_hover, assign, f32, make_figure, style_legend

TITLE = N_("Loss of each token")
HEIGHT, LEGEND_PX = 200, 50
HEADROOM = 1.25  # the range's top over the tallest bar: room for the copies' names
# A bar a token, two side by side with edits: each this share of a position (a gap between).
ALONE, PAIRED = 0.8, 0.42
BEFORE_ALONE = {"fill_color": OKABE_ITO["blue"], "line_color": OKABE_ITO["blue"], "line_dash": []}
BEFORE_PAIRED = {"fill_color": "#ffffff", "line_color": "#555555", "line_dash": "dashed"}
# The copies' shading: light enough for the bars to stay 3:1 on it.
COPY_FILL = ("#eeeeee", "#dff3ea")
# While a lesson step holds the model's answer back: the second copy's loss answers the steps
# on copying heads, so the strip waits for Measure too.
HELD_WORDS = N_("The loss of each token shows once you measure.")


class LossStripView(pn.viewable.Viewer):
    """The strip of a `ModelState`'s text; `update` draws the run on screen."""

    def __init__(self, mstate, tr: Translator = ENGLISH, **params):
        super().__init__(**params)
        self.mstate, self.tr = mstate, tr
        _ = tr.gettext
        self.held = False  # see `hold`
        self.text = PlotText(_("The loss of each token in words"), tr)
        cols = {c: f32([]) for c in ("x", "x_before", "x_after", "before", "after")}
        self.source = ColumnDataSource(name="loss_strip", data=cols | {"token": [], "copy": []})
        fig = make_figure(_(TITLE), height=HEIGHT, x_range=Range1d(0, 1), y_range=Range1d(0, 1))
        fig.name = "loss_strip_plot"
        left_to_right(fig)
        fig.xaxis.axis_label = _("token position")
        fig.yaxis.axis_label = _("loss (nats)")
        fig.xgrid.visible = False
        self.bands = [
            BoxAnnotation(fill_color=c, fill_alpha=1.0, level="underlay") for c in COPY_FILL
        ]
        self.band_labels = [
            Label(
                text=t, x=0, y=0, text_baseline="top", text_font_size="13px", text_color="#333333"
            )
            for t in (_(FIRST_COPY), _(SECOND_COPY))
        ]
        for item in (*self.bands, *self.band_labels):
            fig.add_layout(item)
        self.before = add_glyph(
            fig, VBar, x="x_before", top="before", width=ALONE, source=self.source,
            legend_label=_("without your edits"), **BEFORE_ALONE,
        )  # fmt: skip
        self.after = add_glyph(
            fig, VBar, x="x_after", top="after", width=PAIRED, source=self.source,
            color=OKABE_ITO["purple"], legend_label=_("with your edits"),
        )  # fmt: skip
        # A hover of its own for each bar: a token without edits has no "with your edits".
        token = (_("token"), _("{token} (position {position}) {copy}"))
        token = (token[0], token[1].format(token="@token", position="@x", copy="@copy"))
        nats = _("{value} nats")
        add_hover(fig, [self.before], [token, (_("loss"), nats.format(value="@before{0.00}"))])
        edits = (_("with your edits"), nats.format(value="@after{0.00}"))
        add_hover(fig, [self.after], [token, edits])
        style_legend(fig, below=True)
        self.figure = fig
        self.words = pn.pane.Markdown("", margin=(0, 10), css_classes=["lab-loss-words"])
        self.column = pn.Column(
            pn.pane.Bokeh(fig, sizing_mode="stretch_width"),
            self.words,
            self.text,
            visible=False,
            sizing_mode="stretch_width",
            margin=0,
        )

    def update(self) -> None:
        """Draw the strip of the run on screen, or hide it (no loss per token, no run yet)."""
        m = self.mstate
        plain, edited = m.plain_run, m.run
        strip = None if plain is None or edited is None else loss_strip(plain, edited, _drawn(m))
        if strip is None:
            self.column.visible = False
            return
        if self.held:
            # The figure, not its pane: with its pane hidden here, a served page's lesson
            # step that waited for the model never started (tests/browser/test_model_browser).
            self.figure.visible = False
            self.words.object = self.tr.gettext(HELD_WORDS)
            self.text.show(())
            self.column.visible = True
            return
        self._draw(strip)
        self.words.object = html.escape(strip_words(strip, self.tr))
        self.text.show((strip_table(strip),))
        self.figure.visible = self.column.visible = True

    def hold(self, held: bool) -> None:
        """Hold the strip back (a lesson step holds the model's answer until Measure) or show
        it again; drawn at once either way."""
        if held != self.held:
            self.held = held
            self.update()

    def _draw(self, strip) -> None:
        x = strip.positions.astype(np.float32)
        paired = strip.after is not None
        shift = PAIRED / 2 if paired else 0.0
        after = strip.after if paired else np.full(len(x), np.nan)
        assign(
            self.source,
            {
                "x": x,
                "x_before": f32(x - shift),
                "x_after": f32(x + shift),
                "before": f32(strip.before),
                "after": f32(after),
                "token": [strip.tokens[int(p)] for p in x],
                "copy": [copy_of(strip, int(p), self.tr) for p in x],
            },
        )
        self.before.glyph.update(width=PAIRED if paired else ALONE, **_before_style(paired))
        self.after.visible = paired
        # The legend below takes its height from the plot's: the figure grows to keep the bars.
        self.figure.height = HEIGHT + LEGEND_PX if paired else HEIGHT
        self.figure.legend.visible = paired
        top = float(np.nanmax([*strip.before, *after, 1.0]))
        self.figure.y_range.update(start=0, end=top * HEADROOM)
        self.figure.x_range.update(start=0.4, end=len(strip.tokens) - 0.4)
        copies = strip.copies or (None, None)
        for band, label, copy in zip(self.bands, self.band_labels, copies, strict=True):
            band.visible = label.visible = copy is not None
            if copy is not None:
                band.update(left=copy.start - 0.5, right=copy.stop - 0.5)
                label.update(x=copy.start - 0.4, y=top * HEADROOM)  # above the bars, at the top

    def __panel__(self):
        return self.column


def _before_style(paired: bool) -> dict:
    return BEFORE_PAIRED if paired else BEFORE_ALONE


def _drawn(mstate):
    """The repeated-words draw the text is, when it is one (its copies are shaded)."""
    return mstate.words_drawn() if mstate.words is not None else None
