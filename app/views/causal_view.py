"""The "Causal map" tab: where every head looks against what it decides, and patching.

Two charts, each one glyph over all heads. The causal map puts one dot per head: across, its
weight on a chosen token from the query position; down, how much the answer's log-probability
falls when the head is ablated (dot size: the norm of what the head writes). Until every head
has been removed it draws the attribution estimate (one backward pass, `ReceiptState`), faded
and marked as estimated; before "Measure every head" the note says what that will cost (the
forwards it runs times one forward's time here), and while it runs how long it has left. The
patching map
colours a layer x head grid by how much of the clean sentence's answer one head's output brings
back into the changed sentence. Tapping a head opens it in the planes.
"""

from __future__ import annotations

import html

import numpy as np
import panel as pn
import param
from bokeh.models import (
    ColorBar,
    ColumnDataSource,
    LinearColorMapper,
    Range1d,
    Span,
    TapTool,
)
from bokeh.models.glyphs import Rect, Scatter

import attention_lab_assets
from app.i18n.head_words import head_words, in_line
from app.i18n.markers import N_
from app.i18n.translator import ENGLISH, Translator
from app.state import attribution_runs
from app.state.causal_state import LOOKING, CausalState
from app.state.estimate_words import written
from app.state.estimated_map import estimated_map
from app.state.head_tables import causal_top_table, patching_top_table
from app.state.map_cost import price_words, running_words
from app.state.model_state import MAX_TEXT_CHARS, ModelState
from app.state.receipt_state import ReceiptState
from app.views.head_axes import (
    HEAD,
    LAYER,
    fit_head_map,
    head_map_ranges,
    label_head_map,
    left_to_right,
    token_marks_words,
)
from app.views.head_tap import open_head_on_tap
from app.views.model_panel import TYPED_CSS
from app.views.phrases import phrase_text
from engine.head_names import HEAD_TAG_KEY, head_tag
from engine.heads import shown_token, token_labels

from .headings import TITLE_CSS
from .plot_text import PlotText
from .receipt_labels import FONT_PX, drawn_frame, receipt_labels
from .style import OKABE_ITO, add_glyph, add_hover, add_placed_labels, assign, f32, make_figure
from .two_way import Echo

CAUSAL_CSS = attention_lab_assets.read_text("components", "causal.css")
NAMED = 3  # heads named on the causal map: the heaviest and the most decisive
IDLE_EFFECT = 0.05  # |change of log p| below this: the head "decides nothing" here
TITLE, ESTIMATED_TITLE = N_("Weight vs cost"), N_("Weight vs cost (estimated)")
MEASURED_ALPHA, ESTIMATED_ALPHA = 0.8, 0.35
# The map's frame in pixels until the browser reports its size (then the labels are placed again).
FRAME_GUESS = (640.0, 300.0)


def _head_tags(records) -> list[str]:
    return [head_tag(r.layer, r.head) for r in records]


def named_heads(cmap) -> dict[tuple[int, int], str]:
    """(layer, head) -> why it is named: heavy (looks most), decisive (moves the answer most,
    either way), or both."""
    out: dict[tuple[int, int], str] = {}
    for r in cmap.heaviest(NAMED):
        out[(r.layer, r.head)] = "looks most"
    for r in cmap.decisive(NAMED):
        key = (r.layer, r.head)
        out[key] = "looks and decides" if key in out else "decides most"
    return out


def key_words(run, tr: Translator = ENGLISH) -> str:
    """What the map's short marks mean, said once under it: the dots' head labels, and the
    marks of the tokens the picker lists ("" before a run)."""
    _ = tr.gettext
    marks = "" if run is None else token_marks_words(token_labels(run.tokens), tr)
    # The key is a sentence of its own: in Arabic it reads right to left inside the sentence.
    key = _("On the plot, {key}.").format(key=in_line(_(HEAD_TAG_KEY), tr))
    tokens = (" " + _("Tokens: {marks}.").format(marks=marks)) if marks else ""
    return f"<p class='lab-map-key'>{html.escape(key + tokens)}</p>"


def _summary_values(cmap, tr: Translator) -> dict[str, str]:
    """The numbers and names the causal map's sentences say, in `tr`'s language."""
    heavy, decisive = cmap.heaviest(1)[0], cmap.costliest(1)[0]
    return {
        "token": html.escape(shown_token(cmap.token_text)),
        "answer": html.escape(shown_token(cmap.answer)),
        "prob": written(cmap.prob, ".1%", tr),
        "heavy": head_words(heavy.layer, heavy.head, tr),
        "heavy_weight": written(heavy.weight, ".2f", tr),
        "heavy_effect": written(heavy.effect, "+.2f", tr),
        "decisive": head_words(decisive.layer, decisive.head, tr),
        "decisive_effect": written(decisive.effect, "+.2f", tr),
        "decisive_prob": written(decisive.effect_prob, "+.1%", tr),
        "decisive_weight": written(decisive.weight, ".3f", tr),
    }


def causal_summary(cmap, tr: Translator = ENGLISH) -> str:
    """Two sentences naming the heaviest and the most decisive head, with their numbers."""
    _ = tr.gettext
    return _(
        "P({answer}) is {prob} with every head in place. <b>{heavy}</b> puts the most weight on "
        "{token} ({heavy_weight}); ablating it changes log P({answer}) by {heavy_effect}. "
        "<b>{decisive}</b> costs the answer most ({decisive_effect}, P {decisive_prob}) with "
        "weight {decisive_weight} on {token}."
    ).format(**_summary_values(cmap, tr))


def estimated_summary(cmap, tr: Translator = ENGLISH) -> str:
    """The causal map's sentences for the estimate, each number said as estimated."""
    _ = tr.gettext
    return _(
        "<i>Estimated from one backward pass, until every head is measured.</i> P({answer}) is "
        "{prob} with every head in place. <b>{heavy}</b> puts the most weight on {token} "
        "({heavy_weight}); removing it would change log P({answer}) by about {heavy_effect}. "
        "<b>{decisive}</b> would cost the answer most (about {decisive_effect}) with weight "
        "{decisive_weight} on {token}."
    ).format(**_summary_values(cmap, tr))


def patching_summary(pmap, patched: str = "", tr: Translator = ENGLISH) -> str:
    """The patching map in a sentence, after `patched`: which changed sentence it was measured
    on and at which positions (what the map is of, whatever the box holds now)."""
    best, _ = pmap.restoring(1)[0], tr.gettext
    said = _(
        "The changed sentence answers {bad}, the open one {clean}. Putting <b>{head}</b>'s "
        "output from the open sentence into the changed one brings back {share} of the "
        "difference between them (log P({clean}) {effect})."
    ).format(
        bad=html.escape(shown_token(pmap.corrupted_answer)),
        clean=html.escape(shown_token(pmap.clean_answer)),
        head=head_words(best.layer, best.head, tr),
        share=written(best.recovered, ".0%", tr),
        effect=written(best.effect, "+.2f", tr),
    )
    return html.escape(patched) + said


def no_sentence_words(change: str, tr: Translator = ENGLISH) -> str:
    """Why "Patch every head" is disabled: there is no changed sentence to patch into."""
    _ = tr.gettext
    if change == LOOKING:
        return _("Patching needs a changed sentence: one is being looked for, or type your own.")
    return _(
        "Patching needs a changed sentence: none could be suggested for this one, so type one "
        "above with the same number of tokens."
    )


class CausalView(pn.viewable.Viewer):
    """The causal map and the patching map of one `CausalState`."""

    cstate = param.ClassSelector(class_=CausalState, constant=True, doc="the maps measured")
    mstate = param.ClassSelector(class_=ModelState, constant=True, doc="the model they are of")
    rstate = param.ClassSelector(
        class_=ReceiptState, constant=True, allow_None=True, doc="the estimate drawn first"
    )

    def __init__(self, cstate, mstate, rstate=None, tr: Translator = ENGLISH, **params):
        super().__init__(cstate=cstate, mstate=mstate, rstate=rstate, **params)
        self.tr, _ = tr, tr.gettext  # the session's language (app/i18n/translator.py)
        self._echo = Echo()  # while the pickers follow the state, what they report is its echo
        self.token = pn.widgets.Select(label=_("Weight on the token"), sizing_mode="stretch_width")
        self.measure = pn.widgets.Button(label=_("Measure every head"), color="primary")
        self.stop = pn.widgets.Button(label=_("Stop"), color="light", disabled=True)
        self.bar = pn.indicators.Progress(
            value=0, max=100, visible=False, sizing_mode="stretch_width", height=18
        )
        self.note = pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[CAUSAL_CSS])
        self.summary = pn.pane.HTML("", sizing_mode="stretch_width")
        self.corrupted = pn.widgets.TextInput(
            label=_("Changed sentence (the same number of tokens)"),
            max_length=MAX_TEXT_CHARS,
            sizing_mode="stretch_width",
            stylesheets=[TYPED_CSS],
        )
        self.change = pn.pane.HTML("", sizing_mode="stretch_width")
        # Patching limited to chosen tokens (of the open sentence; the changed one has the same
        # number): none chosen patches every position.
        self.positions = pn.widgets.MultiChoice(
            label=_("Patch only at these tokens (none: at every token)"),
            options={},
            sizing_mode="stretch_width",
        )
        self.patch = pn.widgets.Button(label=_("Patch every head"), color="primary")
        self.patch_why = pn.pane.HTML("", sizing_mode="stretch_width", name="patch_why")
        self.patch_summary = pn.pane.HTML("", sizing_mode="stretch_width")
        self.causal_text = PlotText(_("The causal map in words"), tr)
        self.patch_text = PlotText(_("The patching map in words"), tr)
        self._build_causal_figure()
        self._build_patching_figure()

        self.measure.on_click(lambda _e: self.cstate.measure())
        self.patch.on_click(lambda _e: self._start_patch())
        self.stop.on_click(lambda _e: self.cstate.stop())
        self.token.param.watch(self._token_picked, "value")
        # What is typed counts at once: the button is enabled as soon as there is a sentence.
        self.corrupted.param.watch(lambda _e: self._typed_changed(), "value_input")
        self.positions.param.watch(self._positions_picked, "value")
        self._tokens()
        self._sync_corrupted()
        self._refresh()
        self._redraw()

    # ---------------------------------------------------------------- figures

    def _build_causal_figure(self) -> None:
        cols = {
            c: f32([]) for c in ("weight", "effect", "effect_prob", "contribution", "size", "alpha")
        }
        cols.update(layer=[], head=[], tag=[], colour=[], ablated_answer=[])
        self.source = ColumnDataSource(name="causal_map", data=cols)
        self.labels = ColumnDataSource(name="causal_labels", data=_no_labels())
        _ = self.tr.gettext
        fig = make_figure(
            _(TITLE),
            height=380,
            x_range=Range1d(-0.03, 1.03),
            y_range=Range1d(-1.0, 1.0),  # set from the data: the labels are placed in pixels
            tools="",
        )
        fig.name = "causal_plot"
        left_to_right(fig)
        fig.xaxis.axis_label = _("weight on the token")
        fig.yaxis.axis_label = _("change of log P(answer)")
        fig.add_layout(Span(location=0, dimension="width", line_color="#888888", line_width=1))
        dots = add_glyph(
            fig,
            Scatter,
            x="weight",
            y="effect",
            size="size",
            source=self.source,
            fill_color="colour",
            line_color="#333333",
            fill_alpha="alpha",
        )
        add_hover(
            fig,
            [dots],
            [
                (_("head"), "@tag"),
                (_("weight on the token"), "@weight{0.000}"),
                (_("change of log P"), "@effect{+0.000}"),
                (_("change of P"), "@effect_prob{+0.0%}"),
                (_("what it writes (norm)"), "@contribution{0.00}"),
                (_("answer without it"), "@ablated_answer"),
            ],
        )
        fig.add_tools(TapTool(renderers=[dots]))
        # The named heads, placed in screen pixels as the receipt's are (receipt_labels): no
        # label covers another or a dot, heads on one spot share one, one without room is
        # dropped (the hover names every head).
        add_placed_labels(fig, self.labels, x="weight", y="effect", text="text", font_px=FONT_PX)
        open_head_on_tap(self.source, self.mstate)
        self.figure = fig
        self._named_heads: list[int] = []
        fig.on_change("inner_width", self._replace_labels)
        fig.on_change("inner_height", self._replace_labels)

    def _build_patching_figure(self) -> None:
        cols = {c: f32([]) for c in ("recovered", "effect")}
        cols.update(layer=[], head=[], tag=[])
        self.patch_source = ColumnDataSource(name="patching_map", data=cols)
        # Layers across and heads down, as the every-head grid (app/views/head_axes.py).
        _ = self.tr.gettext
        fig = make_figure(_("Patching"), height=420, tools="", **head_map_ranges())
        label_head_map(fig, self.tr)
        fig.name = "patching_plot"
        left_to_right(fig)
        mapper = LinearColorMapper(palette=_BLUE_RED, low=-1.0, high=1.0)
        cells = add_glyph(
            fig,
            Rect,
            x=LAYER,
            y=HEAD,
            width=0.95,
            height=0.95,
            source=self.patch_source,
            fill_color={"field": "recovered", "transform": mapper},
            line_color=None,
        )
        add_hover(
            fig,
            [cells],
            [
                (_("head"), "@tag"),
                (_("share of the difference brought back"), "@recovered{0%}"),
                (_("change of log P(clean answer)"), "@effect{+0.000}"),
            ],
        )
        fig.add_tools(TapTool(renderers=[cells]))
        fig.add_layout(ColorBar(color_mapper=mapper, width=12), "right")
        open_head_on_tap(self.patch_source, self.mstate)
        self.patch_figure = fig

    # ---------------------------------------------------------------- updates

    @param.depends("mstate.run", "mstate.layer", "mstate.head", watch=True)
    def _tokens(self) -> None:
        """The token picker follows the sentence; it shows the map's token: the one the student
        picked, else the drawn map's, else the one the open head weighs most."""
        run = self.mstate.run
        if run is None:
            return
        options = {label: i for i, label in enumerate(token_labels(run.tokens))}
        chosen = self.cstate.token
        if chosen is None:
            cmap = self.cstate.causal
            chosen = cmap.token if cmap else self.cstate.open_token()
        # Choices.js draws a label as HTML: escaped, a token such as "<bos>" shows as itself.
        upto = {html.escape(k): i for k, i in options.items() if i <= run.query_position}
        with self._echo.writing():
            if self.positions.options != upto:
                self.positions.options = upto
            self.positions.value = [p for p in self.cstate.positions if p in upto.values()]
            if self.token.options != options:
                self.token.options = options
            if chosen is not None:  # None: a switch of model under way (run and head in turn)
                self.token.value = chosen

    def _token_picked(self, event) -> None:
        if self._echo.active or event.new is None or event.new == self.cstate.token:
            return
        self.cstate.token = int(event.new)
        if self.cstate.causal is not None:
            self.cstate.measure()  # the ablations are cached: only the weights are read again

    def _positions_picked(self, event) -> None:
        if not self._echo.active:
            self.cstate.positions = sorted(int(p) for p in event.new)

    def _typed_changed(self) -> None:
        """The caption follows the sentence typed, not the one suggested."""
        self.change.object = html.escape(
            phrase_text(self.cstate.change_words(self._typed()), self.tr)
        )
        self._refresh()

    def _typed(self) -> str:
        """The changed sentence as typed so far (or as suggested)."""
        return self.corrupted.value_input or ""

    def _start_patch(self) -> None:
        if not self._typed().strip():  # no sentence: the button is disabled and says why
            return
        self.cstate.corrupted = self._typed()
        self.cstate.patch()

    @param.depends("cstate.corrupted", "cstate.change", watch=True)
    def _sync_corrupted(self) -> None:
        self.corrupted.value = self.corrupted.value_input = self.cstate.corrupted
        words = self.cstate.change_words(self.cstate.corrupted)
        self.change.object = html.escape(phrase_text(words, self.tr))
        self._refresh()  # the reason the button gives may have changed

    @param.depends(
        "cstate.causal",
        "cstate.patching",
        "cstate.running",
        "cstate.progress",
        "cstate.error",
        "mstate.loading",
        "mstate.run",
        watch=True,
    )
    def _refresh(self) -> None:
        """The buttons and the note: what a map costs, how far it is, what went wrong."""
        c, _ = self.cstate, self.tr.gettext
        busy = bool(c.running)
        waiting = bool(self.mstate.loading)  # a link's model still loading: measure that one
        self.measure.disabled = busy or waiting
        sentence = bool(self._typed().strip())
        self.patch.disabled = busy or waiting or not sentence
        self.patch_why.object = "" if sentence else no_sentence_words(c.change, self.tr)
        self.stop.disabled = not busy
        self.bar.visible = busy
        self.bar.value = int(round(100 * c.progress))
        if waiting:
            self.note.object = _("The model is still loading; measure once it is in.")
        elif busy:
            said = running_words(c.running, c.progress, c.time_left(), self.tr)
            self.note.object = html.escape(said)
        elif c.error:
            error = html.escape(phrase_text(c.error, self.tr))
            self.note.object = f"<span class='lab-map-error'>{error}</span>"
        elif c.message == "stopped":
            self.note.object = _("Stopped. Press the button again to measure.")
        else:
            self.note.object = "" if c.causal else self._price()

    @param.depends(
        "cstate.causal",
        "cstate.patching",
        "cstate.token",
        "rstate.amap",
        "mstate.layer",
        "mstate.head",
        watch=True,
    )
    def _redraw(self) -> None:
        """The two maps: the exact causal map once measured, else the estimate's picture."""
        exact = self.cstate.causal
        if exact is not None:
            self._draw_causal(exact)
        else:
            cmap = self._estimated()
            self._draw_causal(cmap, estimated=cmap is not None)
        self._draw_patching(self.cstate.patching)

    def _price(self) -> str:
        run = self.mstate.run
        if run is None:
            return ""
        model = self.mstate.loaded
        heads = model.n_layers * model.n_heads
        return html.escape(price_words(self.cstate.cost(), heads, self.tr))

    def _estimated(self):
        """The causal map drawn from the estimate of the open sentence, or None."""
        amap = None if self.rstate is None else self.rstate.amap
        run = self.mstate.run
        if amap is None or run is None or amap.corrupted is not None or amap.text != run.text:
            return None
        token = self.cstate.token
        token = self.cstate.open_token() if token is None else token
        if token is None:
            return None
        # Not the run itself: on a long text it is too large to keep, and a forward here would
        # hold the page's server for seconds at every redraw.
        rows = attribution_runs.query_rows(self.mstate.model, run.text, run.query_position)
        if rows.query_position != run.query_position or token > rows.query_position:
            return None
        return estimated_map(amap, rows, token)

    def _draw_causal(self, cmap, estimated: bool = False) -> None:
        self.figure.title.text = self.tr.gettext(ESTIMATED_TITLE if estimated else TITLE)
        if cmap is None:
            assign(self.source, {k: v[:0] for k, v in self.source.data.items()})
            assign(self.labels, _no_labels())
            self._named_heads = []
            self.summary.object = ""
            self.causal_text.show(())
            return
        recs = cmap.records
        norms = np.array([r.contribution for r in recs])
        size = 7 + 14 * norms / max(float(norms.max()), 1e-12)
        named = named_heads(cmap)
        colour = [
            OKABE_ITO["vermillion"]
            if named.get((r.layer, r.head), "").startswith("decides")
            else OKABE_ITO["blue"]
            if (r.layer, r.head) in named
            else "#bbbbbb"
            for r in recs
        ]
        assign(
            self.source,
            {
                "weight": f32([r.weight for r in recs]),
                "effect": f32([r.effect for r in recs]),
                "effect_prob": f32([r.effect_prob for r in recs]),
                "contribution": f32(norms),
                "size": f32(size),
                "alpha": f32(np.full(len(recs), ESTIMATED_ALPHA if estimated else MEASURED_ALPHA)),
                "layer": [r.layer for r in recs],
                "head": [r.head for r in recs],
                "tag": _head_tags(recs),
                "colour": colour,
                "ablated_answer": [shown_token(r.ablated_answer) for r in recs],
            },
        )
        effects = [r.effect for r in recs]
        low, high = min([0.0, *effects]), max([0.0, *effects])
        pad = 0.12 * ((high - low) or 1.0)
        self.figure.y_range.update(start=low - pad, end=high + pad)
        # The most decisive first, then the heaviest: a crowd drops the last.
        order = sorted(named, key=lambda lh: "decides" not in named[lh])
        index = {(r.layer, r.head): i for i, r in enumerate(recs)}
        self._named_heads = [index[lh] for lh in order if lh in index]
        self._place_labels()
        _ = self.tr.gettext
        weight_on = _("weight on {token}")
        self.figure.xaxis.axis_label = weight_on.format(token=shown_token(cmap.token_text)[:16])
        summary = estimated_summary if estimated else causal_summary
        self.summary.object = summary(cmap, self.tr) + key_words(self.mstate.run, self.tr)
        # The table says "every head ablated": an estimate gets none (the receipt's own view
        # lists estimate against exact).
        self.causal_text.show(() if estimated else (causal_top_table(cmap),))
        if self.token.value != cmap.token:
            self._tokens()

    def _place_labels(self) -> None:
        """The named heads' labels for the frame as the browser drew it (or as guessed)."""
        data = self.source.data
        xs = [float(x) for x in data["weight"]]
        ys = [float(y) for y in data["effect"]]
        fig = self.figure
        size = drawn_frame(fig, FRAME_GUESS)
        dx, dy, text = receipt_labels(
            xs,
            ys,
            list(data["tag"]),
            self._named_heads,
            (float(fig.x_range.start), float(fig.x_range.end)),
            (float(fig.y_range.start), float(fig.y_range.end)),
            tuple(size),
        )
        shown = [i for i, t in enumerate(text) if t]
        self.labels.data = {
            "weight": [xs[i] for i in shown],
            "effect": [ys[i] for i in shown],
            "text": [text[i] for i in shown],
            "dx": [dx[i] for i in shown],
            "dy": [dy[i] for i in shown],
        }

    def _replace_labels(self, attr, old, new) -> None:
        if old != new and self._named_heads:
            self._place_labels()

    def _draw_patching(self, pmap) -> None:
        if pmap is None:
            assign(self.patch_source, {k: v[:0] for k, v in self.patch_source.data.items()})
            self.patch_summary.object = ""
            self.patch_text.show(())
            return
        recs = pmap.records
        layers, heads = max(r.layer for r in recs) + 1, max(r.head for r in recs) + 1
        fit_head_map(self.patch_figure, layers, heads)
        assign(
            self.patch_source,
            {
                "recovered": f32([r.recovered for r in recs]),
                "effect": f32([r.effect for r in recs]),
                "layer": [r.layer for r in recs],
                "head": [r.head for r in recs],
                "tag": _head_tags(recs),
            },
        )
        _ = self.tr.gettext
        patched = _("Patched into “{sentence}” ({change}), {where}. ").format(
            sentence=pmap.corrupted,
            change=phrase_text(self.cstate.what_changed(pmap.corrupted), self.tr),
            where=self.cstate.positions_words(pmap.positions, self.tr),
        )
        self.patch_summary.object = patching_summary(pmap, patched, self.tr)
        self.patch_text.show((patching_top_table(pmap),))

    def __panel__(self):
        _ = self.tr.gettext
        return pn.Column(
            pn.pane.HTML(
                _(
                    "<p>Each dot is one head. Right: it looks at the token. Down: the answer "
                    "needs it. A head far right but near zero looks without deciding.</p>"
                ),
                sizing_mode="stretch_width",
            ),
            pn.Row(self.token, self.measure, self.stop, sizing_mode="stretch_width"),
            self.bar,
            self.note,
            pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"),
            self.summary,
            self.causal_text,
            pn.pane.HTML(
                _(
                    "<h2>Activation patching</h2><p>Run a changed sentence with one head's "
                    "output taken from the open sentence, for every head in turn. Red: that head "
                    "alone brings the open sentence's answer back (1 = all of it).</p>"
                ),
                sizing_mode="stretch_width",
                stylesheets=[TITLE_CSS],
            ),
            self.corrupted,
            self.change,
            self.positions,
            pn.Row(self.patch, self.patch_why, sizing_mode="stretch_width"),
            pn.pane.Bokeh(self.patch_figure, sizing_mode="stretch_width"),
            self.patch_summary,
            self.patch_text,
            sizing_mode="stretch_width",
        )


def _no_labels() -> dict:
    return {"weight": [], "effect": [], "text": [], "dx": [], "dy": []}


# Blue (the head pushes towards the changed sentence's answer) to red (brings the open one back).
_BLUE_RED = (
    "#2166ac",
    "#4393c3",
    "#92c5de",
    "#d1e5f0",
    "#f7f7f7",
    "#fddbc7",
    "#f4a582",
    "#d6604d",
    "#b2182b",
)
