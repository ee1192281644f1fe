"""The top of the "Causal map" tab: every head's estimated effect at once, and its receipt.

Two charts, each one glyph. The estimate grid colours a layer x head grid by the first-order
estimate of what removing each head does to log P(answer) (one backward pass). The receipt
plots, for the heads checked so far by really removing them, the estimate across against the
exact change down, each dot labelled L.H, beside the line where the two agree; the text gives
this sentence's rank correlation and top-k agreement, and each warning in plain words. When
"Measure every head" has measured the exact map of the same sentence, the receipt also counts
over every head, so the heads the estimate called small are checked as well.
"""

from __future__ import annotations

import html
import math

import panel as pn
import param
from bokeh.models import (
    BasicTicker,
    BasicTickFormatter,
    ColorBar,
    ColumnDataSource,
    LinearColorMapper,
    Range1d,
    Slope,
    TapTool,
)
from bokeh.models.glyphs import Rect, Scatter

from app.i18n.head_words import head_words, in_line
from app.i18n.translator import ENGLISH, Translator
from app.state.causal_state import CausalState
from app.state.chart_tables import estimate_table, receipt_table
from app.state.estimate_words import (
    LOG_P_WORDS,
    order_words,
    percent,
    probability_factor,
    reason_names,
    reasons,
    sentence_warning,
    written,
)
from app.state.map_cost import duration
from app.state.model_state import ModelState
from app.state.receipt_state import VERIFY, ReceiptState
from app.views.head_axes import (
    HEAD,
    LAYER,
    fit_head_map,
    head_map_ranges,
    label_head_map,
    left_to_right,
)
from app.views.head_tap import open_head_on_tap
from engine.head_names import HEAD_TAG_KEY, head_tag
from engine.heads import shown_token
from engine.trained import attribution

from .causal_view import CAUSAL_CSS
from .headings import TITLE_CSS
from .plot_text import PlotText
from .receipt_labels import FONT_PX, drawn_frame, receipt_labels
from .style import OKABE_ITO, add_glyph, add_hover, add_placed_labels, assign, f32, make_figure

TOP = 10  # the top-k agreement over every head, as the engine's benchmark reports it
NOTES_SHOWN = 4  # warnings spelled out, the largest misses first
SCALE_FLOOR = 0.1  # nats: the grid's colours span at least ±0.1 (about a 10% change of P)
LABELLED = 6  # dots named on the receipt, the furthest from the line first (hover names all)
# The receipt's frame in pixels until the browser reports its size (then placed again).
FRAME_GUESS = (420.0, 300.0)
WARNED, PLAIN = OKABE_ITO["orange"], OKABE_ITO["blue"]


def checked_k(checked: int) -> int:
    """The top-k a receipt over ``checked`` heads can judge: half of them, at most TOP (over k
    heads of k, every head is in both tops and the count says nothing)."""
    return min(TOP, checked // 2)


def progress_words(rs: ReceiptState, tr: Translator = ENGLISH) -> str:
    amap, _ = rs.amap, tr.gettext
    said = _(
        "The answer {answer} has probability {p}. One backward pass estimated all {heads} heads "
        "at once (the grid). "
    ).format(
        answer=html.escape(shown_token(amap.answer)),
        p=percent(amap.prob, tr),
        heads=len(amap.records),
    )
    if rs.complete:
        return said + _(
            "The {planned} heads with the largest estimates were then checked by really "
            "removing each one."
        ).format(planned=rs.planned)
    left = rs.time_left()
    if left is None:
        going = _(
            "Checking the {planned} largest by removing each head: {checked} of {planned} done..."
        )
    else:
        going = _(
            "Checking the {planned} largest by removing each head: {checked} of {planned} done, "
            "{time} left..."
        )
    time = "" if left is None else duration(left, tr)
    return said + going.format(planned=rs.planned, checked=rs.checked, time=time)


def receipt_words(amap, tr: Translator = ENGLISH) -> str:
    """The receipt over the checked heads, in words a student can read aloud: does the estimate
    put them in the order that removing them does, and does it pick the ones that matter."""
    checked = amap.verified()
    k = checked_k(len(checked))
    if k < 1:
        return ""
    got, _ = amap.receipt(k), tr.gettext
    return _(
        "<b>{heads} heads checked</b> by really removing each one. The estimate put them in "
        "{order}. Of these {heads}, the {k} the estimate ranks largest include <b>{top_k} of the "
        "{k}</b> whose removal really changed the answer most."
    ).format(heads=got.heads, order=order_words(got.spearman, tr), k=k, top_k=got.top_k)


def whole_words(amap, cmap, tr: Translator = ENGLISH) -> str:
    """The receipt over every head, once the exact causal map of the same sentence exists."""
    estimates = [r.estimate for r in amap.records]
    exacts = [r.effect for r in cmap.records]
    got = attribution.receipt(estimates, exacts, TOP)
    missed = sorted(
        set(attribution.top_by_magnitude(exacts, got.k))
        - set(attribution.top_by_magnitude(estimates, got.k)),
        key=lambda i: -abs(exacts[i]),
    )
    _ = tr.gettext
    said = _(
        "Against <b>Measure every head</b> (all {heads} removed one at a time): the estimate put "
        "every head in {order}, and of the {k} heads whose removal really changes the answer "
        "most, <b>{top_k}</b> are among its own {k} largest."
    ).format(heads=got.heads, order=order_words(got.spearman, tr), k=got.k, top_k=got.top_k)
    if missed:
        missed_head = _(
            "{head} (estimated {estimate}, really {exact}: the answer's probability {factor})"
        )
        names = ", ".join(
            missed_head.format(
                head=head_words(amap.records[i].layer, amap.records[i].head, tr),
                estimate=written(estimates[i], "+.3f", tr),
                exact=written(exacts[i], "+.2f", tr),
                factor=probability_factor(exacts[i], tr),
            )
            for i in missed[:3]
        )
        said += " " + _("It missed {names}.").format(names=names)
    return said


def checked_words(amap, planned: int, cmap=None, tr: Translator = ENGLISH) -> list[str]:
    """Each head's "removed" in the grid's hover, short enough that the tooltip fits beside a
    cell on a phone (a wider one flipped to the left and was cut off): the real change where it
    is known (from the receipt, else from "Measure every head": "full map"), else whether the
    receipt will still check it or never will."""
    queued = {(r.layer, r.head) for r in amap.ranked()[:planned]}
    whole = {} if cmap is None else {(r.layer, r.head): r.effect for r in cmap.records}
    said, _ = [], tr.gettext
    for r in amap.records:
        exact = r.exact if r.exact is not None else whole.get((r.layer, r.head))
        if exact is not None:
            removed = (
                _("{change}, P {factor}")
                if r.exact is not None
                else _("{change}, P {factor} (full map)")
            )
            change, factor = written(exact, "+.2f", tr), probability_factor(exact, tr)
            said.append(removed.format(change=change, factor=factor))
        elif (r.layer, r.head) in queued:
            said.append(_("soon (top {planned})").format(planned=planned))
        else:
            said.append(_("no (top {planned} only)").format(planned=planned))
    return said


def colour_span(amap, cmap=None) -> float:
    """Half the grid's colour range: the largest change on screen, estimated or real, so a
    colour means the same change of log P in the grid and on the receipt (a scale of ±0.2
    beside real changes of -2.8 made every cell look as if it mattered), never under
    SCALE_FLOOR."""
    changes = [r.estimate for r in amap.records] + [r.exact for r in amap.verified()]
    if cmap is not None and (cmap.text, cmap.answer) == (amap.text, amap.answer):
        changes += [r.effect for r in cmap.records]
    return max(SCALE_FLOOR, *(abs(c) for c in changes if math.isfinite(c)))


def notes_words(amap, tr: Translator = ENGLISH) -> str:
    """Why the estimate may be off: once for the sentence (a saturated answer), then for each
    checked head with a warning of its own, the largest misses first."""
    said, _ = "", tr.gettext
    if warning := sentence_warning(amap.prob, tr):
        suspect = _("<b>Every head's estimate is suspect here</b>: {why}.")
        said = f"<p>{suspect.format(why=html.escape(warning))}</p>"
    warned = [
        (r, words)
        for r in amap.verified()
        if (words := reasons(r.note, leave_out=("saturated",), tr=tr))
    ]
    warned.sort(key=lambda pair: -abs(pair[0].exact - pair[0].estimate))
    note = _("<b>{head}</b>: estimated {estimate}, really {exact}: {why}.")
    items = [
        "<li>"
        + note.format(
            head=head_words(r.layer, r.head, tr),
            estimate=written(r.estimate, "+.3f", tr),
            exact=written(r.exact, "+.3f", tr),
            why=html.escape("; ".join(words)),
        )
        + "</li>"
        for r, words in warned[:NOTES_SHOWN]
    ]
    return said + (f"<ul>{''.join(items)}</ul>" if items else "")


class ReceiptView(pn.viewable.Viewer):
    """The estimate grid and the receipt of one `ReceiptState` (and the exact causal map of a
    `CausalState`, when measured)."""

    rstate = param.ClassSelector(class_=ReceiptState, constant=True)
    cstate = param.ClassSelector(class_=CausalState, constant=True)
    mstate = param.ClassSelector(class_=ModelState, constant=True)

    def __init__(self, rstate, cstate, mstate, tr: Translator = ENGLISH, **params):
        super().__init__(rstate=rstate, cstate=cstate, mstate=mstate, **params)
        self.tr = tr  # the session's language (app/i18n/translator.py)
        self.status = pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[CAUSAL_CSS])
        self.receipt_text = pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[CAUSAL_CSS])
        _ = tr.gettext
        self.text = PlotText(_("The estimate grid and the receipt in words"), tr)
        self._build_grid()
        self._build_receipt()
        self._refresh()

    # ---------------------------------------------------------------- figures

    def _build_grid(self) -> None:
        cols = {"estimate": f32([]), "exact": f32([])}
        cols.update(layer=[], head=[], name=[], checked=[], note=[], outline=f32([]))
        self.grid_source = ColumnDataSource(name="estimate_map", data=cols)
        # Layers across and heads down, as the every-head grid (app/views/head_axes.py).
        _ = self.tr.gettext
        fig = make_figure(_("Each head's estimated effect"), height=420, **head_map_ranges())
        fig.name = "estimate_plot"
        left_to_right(fig)
        label_head_map(fig, self.tr)
        # Red: removing the head lowers the answer (it helps); blue: removing it raises it.
        self.mapper = LinearColorMapper(palette=_RED_BLUE, low=-1.0, high=1.0)
        cells = add_glyph(
            fig,
            Rect,
            x=LAYER,
            y=HEAD,
            width=0.95,
            height=0.95,
            source=self.grid_source,
            fill_color={"field": "estimate", "transform": self.mapper},
            line_color="#222222",
            line_alpha="outline",  # the checked heads are outlined
            line_width=2,
        )
        add_hover(
            fig,
            [cells],
            [
                (_("head"), "@name"),
                (_("estimate"), "@estimate{+0.0000}"),
                (_("removed"), "@checked"),
                (_("warning"), "@note"),
            ],
        )
        fig.add_tools(TapTool(renderers=[cells]))
        # Below, not beside: Bokeh aligns the frames of a column's plots, so a colour bar at the
        # side would narrow the receipt's frame as well (to 180 px on a phone).
        bar = ColorBar(
            color_mapper=self.mapper,
            orientation="horizontal",
            height=12,
            ticker=BasicTicker(desired_num_ticks=5),
            formatter=BasicTickFormatter(use_scientific=False),
            title=_("estimated change of log P if removed"),
        )
        fig.add_layout(bar, "below")
        open_head_on_tap(self.grid_source, self.mstate)
        self.grid_figure = fig

    def _build_receipt(self) -> None:
        cols = {"estimate": f32([]), "exact": f32([])}
        cols.update(layer=[], head=[], tag=[], name=[], label=[], colour=[], note=[])
        cols.update(dx=f32([]), dy=f32([]))
        self.receipt_source = ColumnDataSource(name="receipt", data=cols)
        # One range for both axes (set from the data): the dashed line is then the diagonal, and
        # a dot's distance from it is how wrong the estimate was.
        _ = self.tr.gettext
        fig = make_figure(
            _("Estimate vs real removal"),
            height=380,
            x_range=Range1d(-1.0, 1.0),
            y_range=Range1d(-1.0, 1.0),
        )
        fig.name = "receipt_plot"
        left_to_right(fig)
        for axis in (*fig.xaxis, *fig.yaxis):
            axis.ticker = BasicTicker(desired_num_ticks=5)
            axis.formatter = BasicTickFormatter(use_scientific=False)
        fig.xaxis.axis_label = _("estimated change of log P")
        fig.yaxis.axis_label = _("real change of log P (removed)")
        # On this line the estimate is exact; below it, removing the head costs more than
        # the estimate said.
        fig.add_layout(Slope(gradient=1, y_intercept=0, line_color="#888888", line_dash="dashed"))
        dots = add_glyph(
            fig,
            Scatter,
            x="estimate",
            y="exact",
            size=11,
            source=self.receipt_source,
            fill_color="colour",
            line_color="#333333",
        )
        add_hover(
            fig,
            [dots],
            [
                (_("head"), "@name"),
                (_("estimate"), "@estimate{+0.0000}"),
                (_("really"), "@exact{+0.000}"),
                (_("warning"), "@note"),
            ],
        )
        fig.add_tools(TapTool(renderers=[dots]))
        # Placed in screen pixels (receipt_labels): dots on one spot share a label, and no
        # label covers another or a dot. One glyph, its offsets in the data.
        add_placed_labels(
            fig, self.receipt_source, x="estimate", y="exact", text="label", font_px=FONT_PX
        )
        open_head_on_tap(self.receipt_source, self.mstate)
        self.receipt_figure = fig
        self._named: list[int] = []
        # Once the browser reports the frame's real size (it follows the window), place the
        # labels again for that size.
        fig.on_change("inner_width", self._replace_labels)
        fig.on_change("inner_height", self._replace_labels)

    # ---------------------------------------------------------------- updates

    @param.depends(
        "rstate.amap", "rstate.planned", "rstate.error", "rstate.following", "cstate.causal",
        watch=True,
    )  # fmt: skip
    def _refresh(self) -> None:
        rs, _ = self.rstate, self.tr.gettext
        amap = rs.amap
        if rs.error:
            self.status.object = f"<span class='lab-map-error'>{html.escape(rs.error)}</span>"
        elif amap is None:
            estimating = _("Estimating every head...")
            self.status.object = estimating if rs.following else ""
        else:
            self.status.object = progress_words(rs, self.tr)
        self._draw_grid(amap)
        self._draw_receipt(amap)
        self.text.show(() if amap is None else self.tables(amap))

    @staticmethod
    def tables(amap) -> tuple:
        """The two charts in words: the grid's estimates, and the receipt once a head is checked."""
        tables = (estimate_table(amap),)
        return tables + ((receipt_table(amap),) if amap.verified() else ())

    def _draw_grid(self, amap) -> None:
        if amap is None:
            assign(self.grid_source, {k: v[:0] for k, v in self.grid_source.data.items()})
            return
        recs = amap.records
        layers, heads = recs[-1].layer + 1, max(r.head for r in recs) + 1
        fit_head_map(self.grid_figure, layers, heads)
        # Never narrower than SCALE_FLOOR: scaled to its own ±0.002, a saturated sentence's
        # estimates were drawn deep red and blue, as if they mattered.
        cmap = self._same_whole_map(amap)
        top, _ = colour_span(amap, cmap), self.tr.gettext
        self.mapper.low, self.mapper.high = -top, top
        assign(
            self.grid_source,
            {
                "estimate": f32([r.estimate for r in recs]),
                "exact": f32([math.nan if r.exact is None else r.exact for r in recs]),
                "layer": [r.layer for r in recs],
                "head": [r.head for r in recs],
                "name": [head_words(r.layer, r.head, self.tr) for r in recs],
                "checked": checked_words(amap, self.rstate.planned, cmap, self.tr),
                "note": [reason_names(r.note, self.tr) for r in recs],
                "outline": f32([0.0 if r.exact is None else 1.0 for r in recs]),
            },
        )

    def _draw_receipt(self, amap) -> None:
        checked = [] if amap is None else amap.verified()
        values = [v for r in checked for v in (r.estimate, r.exact)]
        low, high = min([0.0, *values]), max([0.0, *values])
        pad = 0.12 * (high - low or 1.0)
        fig = self.receipt_figure
        if checked:
            fig.x_range.start = fig.y_range.start = low - pad
            fig.x_range.end = fig.y_range.end = high + pad
        by_miss = sorted(
            range(len(checked)), key=lambda i: -abs(checked[i].exact - checked[i].estimate)
        )
        self._named = by_miss[:LABELLED]
        # The sentence's own warning (a saturated answer) holds for every dot: it is said once
        # in the text, and the colour marks a head's own warning.
        own = [bool(reasons(r.note, leave_out=("saturated",))) for r in checked]
        _ = self.tr.gettext
        data = {
            "estimate": f32([r.estimate for r in checked]),
            "exact": f32([r.exact for r in checked]),
            "layer": [r.layer for r in checked],
            "head": [r.head for r in checked],
            "tag": [head_tag(r.layer, r.head) for r in checked],
            "name": [head_words(r.layer, r.head, self.tr) for r in checked],
            "colour": [WARNED if warned else PLAIN for warned in own],
            "note": [reason_names(r.note, self.tr) for r in checked],
        }
        assign(self.receipt_source, data | self._labels(data))
        if not checked:
            self.receipt_text.object = ""
            return
        _ = self.tr.gettext
        parts = [receipt_words(amap, self.tr)]
        cmap = self._same_whole_map(amap)
        if cmap is not None:
            parts.append(whole_words(amap, cmap, self.tr))
        else:
            parts.append(
                _(
                    "Only the heads the estimate ranks largest are checked here: a head it "
                    "calls unimportant is checked by <b>Measure every head</b> below."
                )
            )
        line = _(
            "On the dashed line the estimate is exact; the further a dot is from it, the more "
            "the estimate missed (the {count} furthest are named: {key}). Orange: the head has a "
            "warning of its own, below."
        ).format(count=LABELLED, key=in_line(_(HEAD_TAG_KEY), self.tr))
        self.receipt_text.object = (
            "".join(f"<p>{p}</p>" for p in parts if p)
            + f"<p>{line}</p>"
            + notes_words(amap, self.tr)
        )

    def _same_whole_map(self, amap):
        """The exact causal map of the estimate's own sentence and answer, once measured."""
        cmap = self.cstate.causal
        same = cmap is not None and (cmap.text, cmap.answer) == (amap.text, amap.answer)
        return cmap if same and len(cmap.records) == len(amap.records) else None

    def _labels(self, data: dict) -> dict:
        """The label columns (label, dx, dy) of the receipt's dots for the frame as drawn."""
        fig = self.receipt_figure
        size = drawn_frame(fig, FRAME_GUESS)
        dx, dy, label = receipt_labels(
            [float(x) for x in data["estimate"]],
            [float(y) for y in data["exact"]],
            data["tag"],
            self._named,
            (float(fig.x_range.start), float(fig.x_range.end)),
            (float(fig.y_range.start), float(fig.y_range.end)),
            tuple(size),
        )
        return {"label": label, "dx": f32(dx), "dy": f32(dy)}

    def _replace_labels(self, attr, old, new) -> None:
        # Every column together, as the planes do: a patch of some columns could reach the
        # browser's older, longer source.
        if old != new and self._named:
            data = {k: v for k, v in self.receipt_source.data.items()}
            self.receipt_source.data = data | self._labels(data)

    def __panel__(self):
        _ = self.tr.gettext
        intro = _(
            "<h2>Every head at once: a fast estimate, then a receipt</h2><p>One backward pass "
            "estimates what removing each head would do to the answer's log P: red cells help "
            "the answer (removing them lowers it), blue cells work against it. Then the {count} "
            "heads with the largest estimates are really removed, two at a time, to check the "
            "estimate (their cells are outlined): that check is the receipt. The grid's colours "
            "use the receipt's scale, so a pale cell whose real change is large is a miss. "
            "{log_p}. Tap a head to open it.</p>"
        ).format(count=VERIFY, log_p=_(LOG_P_WORDS))
        return pn.Column(
            pn.pane.HTML(
                intro,
                sizing_mode="stretch_width",
                stylesheets=[TITLE_CSS],
            ),
            self.status,
            pn.pane.Bokeh(self.grid_figure, sizing_mode="stretch_width"),
            pn.pane.Bokeh(self.receipt_figure, sizing_mode="stretch_width"),
            self.text,
            self.receipt_text,
            sizing_mode="stretch_width",
        )


# Red (removing the head lowers the answer: it helps) to blue (removing it raises the answer).
_RED_BLUE = (
    "#b2182b",
    "#d6604d",
    "#f4a582",
    "#fddbc7",
    "#f7f7f7",
    "#d1e5f0",
    "#92c5de",
    "#4393c3",
    "#2166ac",
)
