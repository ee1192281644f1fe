"""The trained-model controls: program, layer and head, the head's interventions, experiments.

Built only when a page first opens the trained-model source, so a page that never does carries
none of these widgets.
"""

from __future__ import annotations

import html

import numpy as np
import panel as pn
import param

import attention_lab_assets
from app.i18n.head_words import head_words, in_line
from app.i18n.markers import N_
from app.i18n.translator import ENGLISH, Translator
from app.patches.panel_events import respond_at_once, widgets_of
from app.state.model_state import (
    MAX_TEXT_CHARS,
    ROTATE_BOUNDS,
    ModelState,
    model_choices,
    short_title,
)
from app.state.settings_schema import MODEL_FIELDS, WORDS_SEED_MAX
from app.views.headings import group_heading
from engine.heads import HEAD_FINDERS, find_heads, shown_token
from engine.trained import experiments as ex
from engine.trained.edits import PatchHead

from .head_grid import QueryPicker
from .loss_strip import LossStripView
from .notify import notify
from .phrases import phrase_text
from .prediction import PredictionView
from .two_way import Echo, Sent

MODEL_BACKENDS = {
    N_("NumPy (CPU)"): "numpy",
    N_("torch, CPU"): "torch-cpu",
    N_("torch, GPU (CUDA)"): "torch-cuda",
}
# The example menu's entry for a seeded draw of repeated random words (a language model's only):
# its value is no text of the menu, and choosing it draws the text (ModelState's `words`).
REPEATED_WORDS = N_("Repeated random words")
REPEATED_WORDS_VALUE = "(repeated random words)"
# The head's temperature slider offers a teaching range; the state accepts a wider one
# (tests/app/test_model_panel.py checks that it holds every value the slider offers).
HEAD_TEMPERATURE_SLIDER = (0.25, 8.0)
# The model settings' labels, declared in app/state/settings_schema.py (MODEL_FIELDS) without a
# marker: marked here so the catalogue has them; the panel translates MODEL_FIELDS' own label.
FIELD_LABELS = (
    N_("Model"),
    N_("Program (press Enter to run)"),
    N_("Layer"),
    N_("Head"),
    N_("Query position"),
    N_("This head's temperature"),
    N_("Rotate this head's query (degrees)"),
    N_("Hide positions from this head"),
    N_("Ablate heads (zero their output)"),
    N_("Run the model with"),
    N_("Seed of the words"),
    N_("Find heads"),
)


def head_choices(model, tr: Translator = ENGLISH) -> dict[str, str]:
    """Every head of `model`, named as the page names it, with its "layer.head" value."""
    return {
        head_words(layer, head, tr): f"{layer}.{head}"
        for layer in range(model.n_layers)
        for head in range(model.n_heads)
    }


class ModelPanel(pn.viewable.Viewer):
    """Sidebar controls of the trained-model source, kept in step with a `ModelState`."""

    mstate = param.ClassSelector(class_=ModelState, constant=True, doc="the model source")
    link_warning = param.Callable(
        default=None, doc="shows a link's warning in the page (a toast if None)"
    )

    def __init__(self, mstate, tr: Translator = ENGLISH, **params):
        super().__init__(mstate=mstate, **params)
        self.tr, self._ = tr, tr.gettext  # the session's language (app/i18n/translator.py)
        # While _from_state writes these widgets, what they report is its echo, not a student's.
        self._echo = Echo()
        # A refused program or sentence stays in its box for editing (the plots keep the last
        # valid one and the banner names the problem) until the next valid change.
        self._refused_text: str | None = None
        self._poller = None
        self._make_source_controls()
        self._make_head_controls()
        self._make_intervention_controls()
        self.query = QueryPicker(mstate, tr=tr)  # the query position (app/views/head_grid.py)
        self.loss = LossStripView(mstate, tr=tr)  # under the text: each token's loss
        self._links = self._link()
        self._from_state()
        self._watch_loading()  # a link may have asked for a model that is still loading
        respond_at_once(*widgets_of(self))

    def _make_source_controls(self) -> None:
        """The model, its program or sentence, and how far a model being loaded is."""
        mstate, model, _ = self.mstate, self.mstate.loaded, self._
        choices = model_choices()
        self.model = pn.widgets.Select(
            label=_(MODEL_FIELDS["model"].label),
            options={_(title): name for name, title, ok, _r in choices if ok},
            value=mstate.model,
            sizing_mode="stretch_width",
        )
        missing = [f"{_(title)}: {reason}" for _n, title, ok, reason in choices if not ok]
        self.about = pn.pane.Markdown("", margin=(0, 10))
        self.missing = pn.pane.Markdown(
            "\n".join(_("- not installed: {model}").format(model=html.escape(m)) for m in missing),
            visible=bool(missing),
            margin=(0, 10),
        )
        self.example = pn.widgets.Select(
            label=_("Ready-made programs"),
            options=example_options(model, self.tr),
            sizing_mode="stretch_width",
        )
        self.text = pn.widgets.TextInput(
            label=_(MODEL_FIELDS["text"].label),
            value=mstate.text,
            max_length=MAX_TEXT_CHARS,  # the box takes what the state accepts, no more
            sizing_mode="stretch_width",
            stylesheets=[TYPED_CSS],
        )
        # Shown while the text is a draw of repeated random words: its seed, and a new draw.
        self.words = pn.widgets.IntInput(
            label=_(MODEL_FIELDS["words"].label), start=0, end=WORDS_SEED_MAX, width=170
        )
        self.new_words = pn.widgets.Button(label=_("New words"), color="primary", align="end")
        self.words_row = pn.Row(self.words, self.new_words, visible=False, margin=0)
        # A language model takes seconds to load: the page shows how far it is meanwhile.
        self.progress = pn.indicators.Progress(
            value=0, max=100, visible=False, sizing_mode="stretch_width", margin=(4, 10)
        )
        self.progress_note = pn.pane.Markdown("", visible=False, margin=(0, 10))
        self.backend = pn.widgets.Select(
            label=_(MODEL_FIELDS["backend"].label),
            options={_(label): value for label, value in MODEL_BACKENDS.items()},
            value=mstate.backend,
            sizing_mode="stretch_width",
        )
        self.ran_on = pn.pane.Markdown("", margin=(0, 10))

    def _make_head_controls(self) -> None:
        """The head open: layer and head, the one found at load, and the finder of heads."""
        _ = self._
        self.layer = pn.widgets.Select(
            label=_(MODEL_FIELDS["layer"].label), sizing_mode="stretch_width"
        )
        self.head = pn.widgets.Select(
            label=_(MODEL_FIELDS["head"].label), sizing_mode="stretch_width"
        )
        # Named for what was measured to find it (model.retrieval_basis), not for a role: on
        # another text the same head may do something else.
        self.retrieval = pn.widgets.Button(
            label=_("Open the head found at load"), color="primary", sizing_mode="stretch_width"
        )
        self.head_note = pn.pane.Markdown(margin=(0, 10))
        self.finder = pn.widgets.Select(
            label=_("Find heads with"),
            options={_(text): key for key, text in HEAD_FINDERS.items()},
            value="on_token",
            sizing_mode="stretch_width",
        )
        self.finder_token = pn.widgets.Select(label=_("The token"), sizing_mode="stretch_width")
        self.found = pn.widgets.Select(
            label=_("Heads found (pick one to open it)"), sizing_mode="stretch_width"
        )

    def _make_intervention_controls(self) -> None:
        """What the student changes inside the open head, and which heads are ablated."""
        model, _ = self.mstate.loaded, self._
        self.temperature = pn.widgets.FloatSlider(
            label=_(MODEL_FIELDS["head_temperature"].label),
            start=HEAD_TEMPERATURE_SLIDER[0],
            end=HEAD_TEMPERATURE_SLIDER[1],
            step=0.05,
            value=1.0,
            sizing_mode="stretch_width",
        )
        self.rotate = pn.widgets.FloatSlider(
            label=_(MODEL_FIELDS["rotate"].label),
            start=ROTATE_BOUNDS[0],
            end=ROTATE_BOUNDS[1],
            step=5.0,
            value=0.0,
            sizing_mode="stretch_width",
        )
        self.masked = pn.widgets.MultiChoice(
            label=_(MODEL_FIELDS["masked"].label), options=[], sizing_mode="stretch_width"
        )
        self.ablated = pn.widgets.MultiChoice(
            label=_(MODEL_FIELDS["ablated"].label),
            options=head_choices(model, self.tr),
            sizing_mode="stretch_width",
        )
        # A patched head is named here, as an ablated one is in the box above (a lesson's
        # patch is no control of its own).
        self.patched = pn.pane.Markdown("", visible=False, margin=(0, 10))
        self.clear = pn.widgets.Button(
            label=_("Clear the intervention"), color="light", sizing_mode="stretch_width"
        )

    def _link(self) -> list[Sent]:
        """Each control sends its new value to the state; the state's changes come back through
        _from_state and _watch_loading, which depend on it."""
        echo, send = self._echo, self._send
        sent = {  # the setting -> its widget and the value the state takes
            "model": (self.model, None),
            "text": (self.text, str.strip),
            "layer": (self.layer, int),
            "head": (self.head, int),
            "head_temperature": (self.temperature, None),
            "rotate": (self.rotate, None),
            "masked": (self.masked, sorted),
            "ablated": (self.ablated, sorted),
            "backend": (self.backend, None),
        }
        links = [
            Sent(widget, name, send, echo=echo, to_state=to_state)
            for name, (widget, to_state) in sent.items()
        ]
        links.append(Sent(self.example, "text", self._pick_example, echo=echo))
        links.append(Sent(self.words, "words", send, echo=echo))
        self.new_words.on_click(lambda _e: send(words=self._new_seed()))
        links.append(Sent(self.found, "found", self._open_found, echo=echo))
        self.retrieval.on_click(lambda _e: send(**self._retrieval_head()))
        self.clear.on_click(lambda _e: self.mstate.clear_intervention())
        # The finder lists heads again whenever its criterion or its token changes, the
        # state's own redraw included.
        self.finder.param.watch(lambda _e: self._find(), "value")
        self.finder_token.param.watch(lambda _e: self._find(), "value")
        return links

    def _retrieval_head(self) -> dict[str, int]:
        layer, head = self.mstate.loaded.retrieval_head
        return {"layer": layer, "head": head} | self.mstate.fresh()

    def _find(self) -> None:
        """List the heads that fit the chosen criterion in the run on screen."""
        m, model = self.mstate, self.mstate.loaded
        on_token = self.finder.value == "on_token"
        self.finder_token.visible = on_token
        position = self.finder_token.value if on_token else None
        if m.run is None or (on_token and position is None):
            return
        found = find_heads(
            m.run, model.n_layers, model.n_heads, criterion=self.finder.value, position=position
        )
        _, tr = self._, self.tr
        # TRANSLATORS: a head found by the finder and its measure, "layer 3 head 1: 0.912".
        named = (
            _("{head}: {value}") if self.finder.value != "sharpest" else _("{head}: {value} nats")
        )
        options = {_("(choose one)"): ""} | {
            named.format(
                head=head_words(layer, head, tr), value=_fixed(value, 3, tr)
            ): f"{layer}.{head}"
            for layer, head, value in found
        }
        with self._echo.writing():
            self.found.options = options
            self.found.value = ""

    def _open_found(self, found) -> None:
        if not found:
            return
        layer, head = (int(x) for x in found.split("."))
        self._send(layer=layer, head=head)

    def _pick_example(self, text) -> None:
        if text == REPEATED_WORDS_VALUE:
            seed = self.mstate.words
            self._send(words=0 if seed is None else seed)
        elif text:
            self._send(text=text)

    def _new_seed(self) -> int:
        """A seed other than the one shown (random: each press is a new draw)."""
        rng, shown = np.random.default_rng(), self.mstate.words
        while (seed := int(rng.integers(0, WORDS_SEED_MAX + 1))) == shown:
            pass
        return seed

    @param.depends("mstate.loading", watch=True)
    def _watch_loading(self) -> None:
        waiting = bool(self.mstate.loading)
        self.progress.visible = self.progress_note.visible = waiting
        if waiting and self._poller is None and pn.state.curdoc is not None:
            # Polled once the page is loaded, not before: under session reuse a model that is
            # in (or failed: a bad file fails in milliseconds) while the browser connects
            # changed models it did not know yet ("reference isn't known"), and the page froze.
            poller = pn.state.add_periodic_callback(self._poll, period=300, start=False)
            self._poller = poller
            pn.state.onload(lambda: poller is self._poller and poller.start())
        if waiting:
            self._poll()

    def _poll(self) -> None:
        fraction, message = self.mstate.poll()
        # A link that waited for its model is checked now: name its bad values as the page
        # names those of a link read on opening (app/page/urlsync.py).
        for text in self.mstate.take_link_warnings():
            if self.link_warning is not None:
                self.link_warning(self._("Link: {warning}").format(warning=text))
            else:
                notify("warning", self._("Link: {warning}").format(warning=text))
        if self.mstate.loading:
            self.progress.value = int(100 * fraction)
            loading = self._("Loading {model} for this server (once, for every page): {progress}")
            self.progress_note.object = html.escape(
                loading.format(model=short_title(self.mstate.loading), progress=message)
            )
            return
        if self._poller is not None:
            self._poller.stop()
            self._poller = None
        self.progress.visible = self.progress_note.visible = False

    def _send(self, **settings) -> None:
        # A refused text is kept in the box for editing; after any other refusal the widgets
        # show the last valid settings again (the box included).
        self._refused_text = settings.get("text")
        with pn.io.hold():
            # The forward, if the change needs one, runs off the session's thread; the plots
            # and these controls follow when it arrives (ModelState.request).
            if not self.mstate.request(**settings):
                self._from_state()

    # Both may change in one update (a valid change clears the error): one call for both.
    @param.depends("mstate.snapshot", "mstate.error", watch=True)
    def _from_state(self) -> None:
        m, model, _, tr = self.mstate, self.mstate.loaded, self._, self.tr
        with self._echo.writing():
            self.model.value = m.model
            about = getattr(model, "about", "")
            self.about.object = html.escape(_(about) if about else "")
            if not m.error:
                self._refused_text = None
            self.text.value = m.text if self._refused_text is None else self._refused_text
            self.example.label = (
                _("Ready-made programs") if m.model == "binding" else _("Ready-made sentences")
            )
            tokens = getattr(model, "max_tokens", 48)
            self.text.label = (
                _("Program (press Enter to run)")
                if m.model == "binding"
                else _("Sentence, up to {tokens} tokens (press Enter)").format(tokens=tokens)
            )
            self.example.options = example_options(model, tr)
            self.example.value = (
                REPEATED_WORDS_VALUE
                if m.words is not None
                else m.text
                if m.text in model.examples.values()
                else ""
            )
            self.words_row.visible = m.words is not None
            if m.words is not None:
                self.words.value = m.words
            self.layer.options = {_("layer {n}").format(n=i): i for i in range(model.n_layers)}
            self.head.options = {_("head {n}").format(n=i): i for i in range(model.n_heads)}
            self.layer.value, self.head.value = m.layer, m.head
            low, high = HEAD_TEMPERATURE_SLIDER
            self.temperature.value = min(max(m.head_temperature, low), high)
            self.rotate.value = m.rotate
            labels = list(m.snapshot.labels) if m.snapshot is not None else []
            # The picker (Choices.js) draws its labels as HTML: "<bos> @0" showed as "@0".
            self.masked.options = {html.escape(lab): i for i, lab in enumerate(labels)}
            tokens = {lab: i for i, lab in enumerate(labels)}
            if self.finder_token.options != tokens:
                self.finder_token.options = tokens
                # The answer's source is usually what a student looks for: the top weight.
                self.finder_token.value = int(np.argmax(m.snapshot.weights)) if labels else None
            self.masked.value = [p for p in m.masked if p < len(labels)]
            heads = head_choices(model, tr)
            if self.ablated.options != heads:
                self.ablated.options = heads
            self.ablated.value = list(m.ablated)
            patched = patched_words(m.extra, tr)
            self.patched.param.update(object=patched, visible=bool(patched))
            self.backend.value = m.backend
            ran_on = _("This run was computed with {backend}.")
            backend = in_line(_(m.ran_on), tr)
            self.ran_on.object = ran_on.format(backend=backend) if m.ran_on else ""
            self.head_note.object = html.escape(found_head_note(model, m.layer, m.head, tr))
        self.loss.update()
        self._find()

    def __panel__(self):
        return pn.Column(
            self.model,
            self.about,
            self.progress,
            self.progress_note,
            self.missing,
            self.example,
            self.text,
            self.words_row,
            self.loss,
            pn.Row(self.layer, self.head, sizing_mode="stretch_width"),
            self.query,
            self.retrieval,
            self.head_note,
            self.finder,
            self.finder_token,
            self.found,
            group_heading(self._("Intervene inside this head")),
            self.temperature,
            self.rotate,
            self.masked,
            self.ablated,
            self.patched,
            self.clear,
            self.backend,
            self.ran_on,
            sizing_mode="stretch_width",
        )


# The table's columns: what was done and on which program, the local change, the final change.
# The CSV has them all. Tokens are shown with their space marker (a language model's " Paris").
# Each cell is written in the session's language (`tr`); a column is known by its English name.
TABLE_COLUMNS = {
    N_("experiment"): lambda r, tr: tr.gettext(r.title),
    N_("program"): lambda r, tr: r.text_before,
    N_("edit"): lambda r, tr: phrase_text(r.edit, tr),  # the engine's words (a Phrase)
    N_("largest weight change"): lambda r, tr: _fixed(r.max_weight_change, 3, tr),
    N_("head output moved"): lambda r, tr: _fixed(r.output_change, 2, tr),
    N_("answer"): lambda r, tr: f"{shown_token(r.answer_before)} → {shown_token(r.answer_after)}",
    N_("P(reference answer)"): lambda r, tr: (
        f"{shown_token(r.expected)}: {_percent(r.p_expected_before, tr)} → "
        f"{_percent(r.p_expected_after, tr)}"
    ),
}
# The probability column's title when every row follows one kind of reference
# (`experiments.reference_kind`).
REFERENCE_HEADERS = {
    "reference answer": N_("P(reference answer)"),
    "right answer": N_("P(right answer)"),
    "first choice": N_("P(first choice)"),
}
TABLE_CSS = attention_lab_assets.read_text("components", "experiments-table.css")
# A typed text runs in its own direction, whatever the page's (a program in an Arabic page).
TYPED_CSS = attention_lab_assets.read_text("components", "typed-text.css")


def _fixed(x: float, digits: int, tr: Translator) -> str:
    """`f"{x:.{digits}f}"` in `tr`'s language, rounded as Python rounds (not Babel's way)."""
    text = f"{x:.{digits}f}"
    return text if tr.code == "en" else tr.format_decimal(float(text), "0." + "0" * digits)


def _percent(x: float, tr: Translator) -> str:
    """`f"{x:.1%}"` in `tr`'s language, rounded as Python rounds."""
    text = f"{x:.1%}"
    return text if tr.code == "en" else tr.format_percent(float(text[:-1]) / 100, "0.0%")


def example_options(model, tr: Translator = ENGLISH) -> dict[str, str]:
    """The ready-made texts of `model`'s menu: its examples (their titles translated, never
    their texts: the model reads English), and for a language model (one that encodes words)
    repeated random words."""
    _ = tr.gettext
    options = {_("(choose one)"): ""} | {_(title): text for title, text in model.examples.items()}
    if hasattr(model, "encode"):
        options[_(REPEATED_WORDS)] = REPEATED_WORDS_VALUE
    return options


def reference_header(results, tr: Translator = ENGLISH) -> str:
    """The probability column's title: what the rows follow, the grammar's right answer or a
    language model's own first choice (`experiments.reference_kind`)."""
    kinds = {r.reference for r in results}
    kind = kinds.pop() if len(kinds) == 1 else "reference answer"
    return tr.gettext(REFERENCE_HEADERS.get(kind, f"P({kind})"))


def _program_cell(r, tr: Translator) -> str:
    """The program a row ran on; a rewritten copy (a distractor inserted) is named beneath."""
    cell = html.escape(r.text_before)
    if r.rewrote_program:
        _ = tr.gettext
        copy = _("rewritten copy: {program}").format(program=html.escape(r.text_after))
        cell += f'<br><span class="copy">{copy}</span>'
    return cell


def experiments_table(results, tr: Translator = ENGLISH) -> str:
    """The recorded experiments as an escaped HTML table (newest first). In a card narrower
    than its columns each row becomes a list of its columns; the box scrolls when it is long."""
    _ = tr.gettext
    if not results:
        return _("<p>No experiment run yet: pick one and press <b>Run</b>.</p>")
    names = [reference_header(results, tr) if n.startswith("P(") else _(n) for n in TABLE_COLUMNS]
    kinds = [_css(n) for n in TABLE_COLUMNS]  # the classes follow the English names
    head = "".join(
        f'<th class="{k}">{html.escape(n)}</th>' for k, n in zip(kinds, names, strict=True)
    )
    body = []
    for r in reversed(results):
        # Each cell carries its column's name: a card too narrow for the columns shows every
        # row as a list of "name: value" lines (the table's stylesheet).
        cells = "".join(
            f'<td class="{kind}" data-label="{html.escape(name)}">'
            + (_program_cell(r, tr) if kind == "program" else html.escape(cell(r, tr)))
            + "</td>"
            for kind, name, cell in zip(kinds, names, TABLE_COLUMNS.values(), strict=True)
        )
        body.append(f'<tr class="run">{cells}</tr>')
        if r.note:
            span, note = len(TABLE_COLUMNS), html.escape(phrase_text(r.note, tr))
            body.append(f'<tr><td class="note" colspan="{span}">{note}</td></tr>')
    table = f'<table class="lab-experiments"><tr class="head">{head}</tr>{"".join(body)}</table>'
    # Focusable, so a keyboard can scroll it too; a region, so a screen reader names it.
    label = html.escape(_("Experiments table"))
    return (
        '<div class="lab-experiments-scroll" tabindex="0" role="region" '
        f'aria-label="{label}">{table}</div>'
    )


def _css(column: str) -> str:
    return "program" if column == "program" else "p" if column.startswith("P(") else "cell"


class ModelMainView(pn.viewable.Viewer):
    """The model's answer and the experiments table, in the main area."""

    mstate = param.ClassSelector(class_=ModelState, constant=True, doc="the model source")

    def __init__(self, mstate, tr: Translator = ENGLISH, **params):
        super().__init__(mstate=mstate, **params)
        self.tr, _ = tr, tr.gettext
        self.prediction = PredictionView(tr=tr)
        self.experiment = pn.widgets.Select(
            label=_("Experiment on this head"),
            options=self._experiment_options(),
            sizing_mode="stretch_width",
        )
        self.run = pn.widgets.Button(label=_("Run"), color="primary", width=90, align="end")
        self.describe = pn.pane.Markdown(margin=(0, 10))
        self.table = pn.pane.HTML(
            experiments_table([], tr), sizing_mode="stretch_width", stylesheets=[TABLE_CSS]
        )
        self.download = pn.widgets.FileDownload(
            callback=lambda: _csv_file(mstate),
            filename="experiments.csv",
            label=_("Download the table (CSV)"),
            color="light",
        )
        self.clear = pn.widgets.Button(label=_("Clear the table"), color="light")
        self.run.on_click(lambda _e: self._run())
        self.clear.on_click(lambda _e: mstate.clear_experiments())
        self.experiment.param.watch(lambda _e: self._describe(), "value")
        # A watcher, not a dependency: it must run after the state's own reaction to a new
        # model (a dependency would run before it), as the experiments on offer follow it.
        mstate.param.watch(lambda _e: self._model_changed(), "model")
        self._describe()
        respond_at_once(*widgets_of(self))

    def _experiment_options(self) -> dict[str, str]:
        """The experiments that apply to the open model (those naming definitions need the
        binding task's programs)."""
        names = ex.available(self.mstate.loaded)
        return {self.tr.gettext(spec_title(ex.EXPERIMENTS[n])): n for n in names}

    def _model_changed(self) -> None:
        options = self._experiment_options()
        if self.experiment.options != options:
            self.experiment.options = options
            self.experiment.value = next(iter(options.values()))

    def _describe(self) -> None:
        spec = ex.EXPERIMENTS[self.experiment.value]
        self.describe.object = html.escape(self.tr.gettext(spec_description(spec)))

    def _run(self) -> None:
        if not self.mstate.request_experiment(self.experiment.value):
            notify("warning", self.mstate.error_text(self.tr))

    @param.depends("mstate.experiments", watch=True)
    def _table(self) -> None:
        self.table.object = experiments_table(self.mstate.experiments, self.tr)

    def update(self) -> None:
        if self.mstate.prediction is not None:
            self.prediction.update(self.mstate.prediction)

    def __panel__(self):
        # The answer's figure is placed by the page (in the logits' cell), not here.
        return pn.Column(
            pn.Row(self.experiment, self.run, sizing_mode="stretch_width"),
            self.describe,
            self.table,  # its box scrolls both ways (the table's stylesheet)
            pn.Row(self.download, self.clear),
            sizing_mode="stretch_width",
        )


def found_head_note(model, layer: int, head: int, tr: Translator = ENGLISH) -> str:
    """Which head the model opens first and what was measured to find it, beside the open one:
    no role name, since a head found on one text may do something else on the text shown."""
    _, found = tr.gettext, model.retrieval_head
    if (layer, head) == tuple(found):
        note = _("Opened first: {head}, {basis} (measured at load). It is the head open now.")
    else:
        note = _("Opened first: {head}, {basis} (measured at load). The head open now is {open}.")
    return note.format(
        head=head_words(*found, tr),
        basis=model.retrieval_basis,  # the engine's words (not yet translated)
        open=head_words(layer, head, tr),
    )


def patched_words(edits, tr: Translator = ENGLISH) -> str:
    """The heads a lesson patched, and the sentence each output came from, as Markdown."""
    _ = tr.gettext
    said = [
        _("**Patched:** {head}, its output taken from “{sentence}”").format(
            head=head_words(e.layer, e.head, tr), sentence=html.escape(e.source)
        )
        if e.source
        else _("**Patched:** {head}, its output taken from another run").format(
            head=head_words(e.layer, e.head, tr)
        )
        for e in edits
        if isinstance(e, PatchHead)
    ]
    return "\n\n".join(said)


def spec_title(spec) -> str:
    return spec.title if hasattr(spec, "title") else str(spec[0])


def spec_description(spec) -> str:
    return spec.description if hasattr(spec, "description") else str(spec[1])


def _csv_file(mstate):
    import io

    return io.StringIO(mstate.experiments_csv())
