"""Find heads: the head grid's cells coloured by a copying score (app/state/copy_tables.py).

The head grid (app/views/head_grid.py) shows each head's pattern; with a score chosen in
"Find heads" (the model setting `find`), each cell is filled with its head's score instead, on a
colour-blind-safe sequential palette (viridis, light for 0 and dark for 1: the legend beside the
control says so), and the heads ranked first are outlined and numbered. A text on which the
score cannot be measured says so in the grid's place: a cell is never drawn as a zero it is not.

Named source: `head_scores_top`, the marked heads (`rank`, `layer`, `head`, `score`).
"""

from __future__ import annotations

import html

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource, LinearColorMapper
from bokeh.models.glyphs import Quad, Text
from bokeh.palettes import Viridis256
from bokeh.transform import transform

import attention_lab_assets
from app.i18n.head_words import head_words, in_line
from app.i18n.translator import ENGLISH, Translator
from app.patches.panel_events import respond_at_once
from app.state import copy_tables as ct
from app.state.settings_schema import FIND_HEADS, MODEL_FIELDS

from .notify import notify
from .style import add_glyph, f32
from .two_way import Echo

GRID_CSS = attention_lab_assets.read_text("components", "head-grid.css")
# Light (score 0) to dark (score 1); assets/components/head-grid.css draws the same ramp.
SCORE_PALETTE = tuple(reversed(Viridis256))
DARK_FROM = 0.45  # a number on a cell at least this score is written white, else black
MARK_EDGE = 0.06  # how far a marked head's outline stands out of its cell (data units)


def legend_html(kind: str, tr: Translator = ENGLISH) -> str:
    """What the colours and the marks mean, beside the control (the ramp is drawn by CSS)."""
    _ = tr.gettext
    scale = html.escape(_("colour scale: light yellow for 0, dark purple for 1"))
    said = _(
        "the share of each head's attention on {target}; outlined and numbered: the {count} highest"
    ).format(target=in_line(_(ct.TARGETS[kind]), tr), count=ct.MARKED)
    return (
        '<div class="lab-score-legend">'
        '<span class="lab-score-end">0</span>'
        f'<span class="lab-score-ramp" role="img" aria-label="{scale}"></span>'
        '<span class="lab-score-end">1</span>'
        f"<span>{html.escape(said)}</span></div>"
    )


class ScoreLayer:
    """The grid's "Find heads" control, its score colouring, its marks, legend and notice."""

    def __init__(self, mstate, fig, cells: ColumnDataSource, hover, tr: Translator = ENGLISH):
        self.mstate, self.hover, self.tr = mstate, hover, tr
        _ = tr.gettext
        self.pattern_tips = list(hover.tooltips)
        self._echo = Echo()
        field = MODEL_FIELDS["find"]
        self.control = pn.widgets.Select(
            label=_(field.label),
            options={_(ct.FIND_TITLES[k]): k for k in FIND_HEADS},
            value=mstate.find,
            sizing_mode="stretch_width",
            max_width=480,  # the longest title whole, in presenter type too
        )
        self.control.param.watch(self._picked, "value")
        respond_at_once(self.control)
        self.legend = pn.pane.HTML("", visible=False, margin=(0, 10), stylesheets=[GRID_CSS])
        self.notice = pn.pane.Markdown(
            "",
            visible=False,
            css_classes=["lab-grid-notice"],
            margin=(0, 10),
            stylesheets=[GRID_CSS],
        )
        self.top_source = ColumnDataSource(
            name="head_scores_top",
            data={k: [] for k in ("rank", "label", "layer", "head", "score", "ink")}
            | {k: [] for k in ("left", "right", "top", "bottom")},
        )
        self.cells = self._add_glyphs(fig, cells)
        self.summary = ""  # the marked heads in one line, for the grid's caption

    def _add_glyphs(self, fig, cells):
        mapper = LinearColorMapper(
            palette=list(SCORE_PALETTE), low=0, high=1, nan_color=(0, 0, 0, 0)
        )
        coloured = add_glyph(
            fig,
            Quad,
            left="left",
            right="right",
            top="top",
            bottom="bottom",
            source=cells,
            fill_color=transform("score", mapper),
            line_alpha=0.0,
            visible=False,
        )
        marks = dict(source=self.top_source, visible=False)
        self.outlines = add_glyph(
            fig,
            Quad,
            left="left",
            right="right",
            top="top",
            bottom="bottom",
            fill_alpha=0.0,
            line_color="#000000",
            line_width=2,
            **marks,
        )
        self.numbers = add_glyph(
            fig,
            Text,
            x="layer",
            y="head",
            text="label",
            text_color="ink",
            text_align="center",
            text_baseline="middle",
            text_font_size="14px",
            text_font_style="bold",
            **marks,
        )
        return coloured

    def _picked(self, event) -> None:
        if self._echo.active or event.new == self.mstate.find:
            return
        if not self.mstate.request(find=event.new):
            notify("warning", self.mstate.error_text(self.tr))

    def draw(self, run, data: dict, share: float) -> tuple:
        """Fill `data` (the grid's rows) with the chosen score and draw the marks; returns the
        tables in words ((): the cells show patterns)."""
        kind = self.mstate.find
        with self._echo.writing():
            self.control.value = kind
        shown = kind != "patterns"
        scores = ct.copy_scores(run) if shown else []
        column = ct.score_column(scores, kind) if shown else None
        measured = shown and not np.isnan(column).all()
        n = len(data["layer"])
        data["score"] = column if measured else f32(np.full(n, np.nan))
        self.cells.visible = self.outlines.visible = self.numbers.visible = measured
        self.hover.tooltips = self._tips(kind) if measured else self.pattern_tips
        self.legend.object = legend_html(kind, self.tr) if measured else ""
        self.legend.visible = measured
        unmeasured = shown and not measured
        self.notice.object = html.escape(ct.unmeasured(kind, self.tr)) if unmeasured else ""
        self.notice.visible = shown and not measured
        self._mark(scores, kind, share if measured else None)
        self.summary = ct.ranked_words(scores, kind, self.tr) if measured else ""
        if not shown:
            return ()
        return (ct.ranked_table(scores, kind, self.mstate.open_head),)

    def _mark(self, scores, kind: str, share: float | None) -> None:
        top = ct.ranked_heads(scores, kind, ct.MARKED) if share is not None else []
        layers = np.array([s.layer for s in top], dtype=np.float32)
        heads = np.array([s.head for s in top], dtype=np.float32)
        values = [s.score(kind) for s in top]
        edge = (share or 0) / 2 + MARK_EDGE
        self.top_source.data = {
            "rank": list(range(1, len(top) + 1)),
            "label": [str(i) for i in range(1, len(top) + 1)],
            "layer": f32(layers),
            "head": f32(heads),
            "score": f32(values),
            "ink": ["#ffffff" if v >= DARK_FROM else "#000000" for v in values],
            "left": f32(layers - edge),
            "right": f32(layers + edge),
            "top": f32(heads - edge),
            "bottom": f32(heads + edge),
        }

    def _tips(self, kind: str) -> list:
        _ = self.tr.gettext
        return [
            (_("head"), head_words("@layer", "@head", self.tr)),
            (_(ct.FIND_TITLES[kind]).lower(), "@score{0.000}"),
        ]

    def conceal(self) -> None:
        """Held by a lesson step: no score, mark or legend on the page."""
        self.cells.visible = self.outlines.visible = self.numbers.visible = False
        self.legend.visible = self.notice.visible = False
        self.legend.object = self.notice.object = self.summary = ""
