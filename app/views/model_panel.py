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
from engine.head_names import head_name
from engine.heads import HEAD_FINDERS, find_heads, shown_token
from engine.trained import experiments as ex
from engine.trained.edits import PatchHead

from .head_grid import QueryPicker
from .loss_strip import LossStripView
from .notify import notify
from .prediction import PredictionView
from .two_way import Echo, Sent

MODEL_BACKENDS = {
    "NumPy (CPU)": "numpy",
    "torch, CPU": "torch-cpu",
    "torch, GPU (CUDA)": "torch-cuda",
}
# The example menu's entry for a seeded draw of repeated random words (a language model's only):
# its value is no text of the menu, and choosing it draws the text (ModelState's `words`).
REPEATED_WORDS = "Repeated random words"
REPEATED_WORDS_VALUE = "(repeated random words)"
# The head's temperature slider offers a teaching range; the state accepts a wider one
# (tests/app/test_model_panel.py checks that it holds every value the slider offers).
HEAD_TEMPERATURE_SLIDER = (0.25, 8.0)


def head_choices(model) -> dict[str, str]:
    """Every head of `model`, named as the page names it, with its "layer.head" value."""
    return {
        head_name(layer, head): f"{layer}.{head}"
        for layer in range(model.n_layers)
        for head in range(model.n_heads)
    }


class ModelPanel(pn.viewable.Viewer):
    """Sidebar controls of the trained-model source, kept in step with a `ModelState`."""

    mstate = param.ClassSelector(class_=ModelState, constant=True, doc="the model source")
    link_warning = param.Callable(
        default=None, doc="shows a link's warning in the page (a toast if None)"
    )

    def __init__(self, mstate, **params):
        super().__init__(mstate=mstate, **params)
        # While _from_state writes these widgets, what they report is its echo, not a student's.
        self._echo = Echo()
        # A refused program or sentence stays in its box for editing (the plots keep the last
        # valid one and the banner names the problem) until the next valid change.
        self._refused_text: str | None = None
        self._poller = None
        self._make_source_controls()
        self._make_head_controls()
        self._make_intervention_controls()
        self.query = QueryPicker(mstate)  # the query position (app/views/head_grid.py)
        self.loss = LossStripView(mstate)  # under the text: each token's loss
        self._links = self._link()
        self._from_state()
        self._watch_loading()  # a link may have asked for a model that is still loading
        respond_at_once(*widgets_of(self))

    def _make_source_controls(self) -> None:
        """The model, its program or sentence, and how far a model being loaded is."""
        mstate, model = self.mstate, self.mstate.loaded
        choices = model_choices()
        self.model = pn.widgets.Select(
            label=MODEL_FIELDS["model"].label,
            options={title: name for name, title, ok, _ in choices if ok},
            value=mstate.model,
            sizing_mode="stretch_width",
        )
        missing = [f"{title}: {reason}" for _, title, ok, reason in choices if not ok]
        self.about = pn.pane.Markdown("", margin=(0, 10))
        self.missing = pn.pane.Markdown(
            "\n".join(f"- not installed: {html.escape(m)}" for m in missing),
            visible=bool(missing),
            margin=(0, 10),
        )
        self.example = pn.widgets.Select(
            label="Ready-made programs",
            options=example_options(model),
            sizing_mode="stretch_width",
        )
        self.text = pn.widgets.TextInput(
            label=MODEL_FIELDS["text"].label,
            value=mstate.text,
            max_length=MAX_TEXT_CHARS,  # the box takes what the state accepts, no more
            sizing_mode="stretch_width",
        )
        # Shown while the text is a draw of repeated random words: its seed, and a new draw.
        self.words = pn.widgets.IntInput(
            label=MODEL_FIELDS["words"].label, start=0, end=WORDS_SEED_MAX, width=170
        )
        self.new_words = pn.widgets.Button(label="New words", color="primary", align="end")
        self.words_row = pn.Row(self.words, self.new_words, visible=False, margin=0)
        # A language model takes seconds to load: the page shows how far it is meanwhile.
        self.progress = pn.indicators.Progress(
            value=0, max=100, visible=False, sizing_mode="stretch_width", margin=(4, 10)
        )
        self.progress_note = pn.pane.Markdown("", visible=False, margin=(0, 10))
        self.backend = pn.widgets.Select(
            label=MODEL_FIELDS["backend"].label,
            options=MODEL_BACKENDS,
            value=mstate.backend,
            sizing_mode="stretch_width",
        )
        self.ran_on = pn.pane.Markdown("", margin=(0, 10))

    def _make_head_controls(self) -> None:
        """The head open: layer and head, the one found at load, and the finder of heads."""
        self.layer = pn.widgets.Select(
            label=MODEL_FIELDS["layer"].label, sizing_mode="stretch_width"
        )
        self.head = pn.widgets.Select(label=MODEL_FIELDS["head"].label, sizing_mode="stretch_width")
        # Named for what was measured to find it (model.retrieval_basis), not for a role: on
        # another text the same head may do something else.
        self.retrieval = pn.widgets.Button(
            label="Open the head found at load", color="primary", sizing_mode="stretch_width"
        )
        self.head_note = pn.pane.Markdown(margin=(0, 10))
        self.finder = pn.widgets.Select(
            label="Find heads with",
            options={text: key for key, text in HEAD_FINDERS.items()},
            value="on_token",
            sizing_mode="stretch_width",
        )
        self.finder_token = pn.widgets.Select(label="The token", sizing_mode="stretch_width")
        self.found = pn.widgets.Select(
            label="Heads found (pick one to open it)", sizing_mode="stretch_width"
        )

    def _make_intervention_controls(self) -> None:
        """What the student changes inside the open head, and which heads are ablated."""
        model = self.mstate.loaded
        self.temperature = pn.widgets.FloatSlider(
            label=MODEL_FIELDS["head_temperature"].label,
            start=HEAD_TEMPERATURE_SLIDER[0],
            end=HEAD_TEMPERATURE_SLIDER[1],
            step=0.05,
            value=1.0,
            sizing_mode="stretch_width",
        )
        self.rotate = pn.widgets.FloatSlider(
            label=MODEL_FIELDS["rotate"].label,
            start=ROTATE_BOUNDS[0],
            end=ROTATE_BOUNDS[1],
            step=5.0,
            value=0.0,
            sizing_mode="stretch_width",
        )
        self.masked = pn.widgets.MultiChoice(
            label=MODEL_FIELDS["masked"].label, options=[], sizing_mode="stretch_width"
        )
        self.ablated = pn.widgets.MultiChoice(
            label=MODEL_FIELDS["ablated"].label,
            options=head_choices(model),
            sizing_mode="stretch_width",
        )
        # A patched head is named here, as an ablated one is in the box above (a lesson's
        # patch is no control of its own).
        self.patched = pn.pane.Markdown("", visible=False, margin=(0, 10))
        self.clear = pn.widgets.Button(
            label="Clear the intervention", color="light", sizing_mode="stretch_width"
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
        unit = " nats" if self.finder.value == "sharpest" else ""
        options = {"(choose one)": ""} | {
            f"{head_name(layer, head)}: {value:.3f}{unit}": f"{layer}.{head}"
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
                self.link_warning(f"Link: {text}")
            else:
                notify("warning", f"Link: {text}")
        if self.mstate.loading:
            self.progress.value = int(100 * fraction)
            self.progress_note.object = html.escape(
                f"Loading {short_title(self.mstate.loading)} for this server (once, for every "
                f"page): {message}"
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
        m, model = self.mstate, self.mstate.loaded
        with self._echo.writing():
            self.model.value = m.model
            self.about.object = html.escape(getattr(model, "about", ""))
            if not m.error:
                self._refused_text = None
            self.text.value = m.text if self._refused_text is None else self._refused_text
            self.example.label = (
                "Ready-made programs" if m.model == "binding" else "Ready-made sentences"
            )
            self.text.label = (
                "Program (press Enter to run)"
                if m.model == "binding"
                else f"Sentence, up to {getattr(model, 'max_tokens', 48)} tokens (press Enter)"
            )
            self.example.options = example_options(model)
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
            self.layer.options = {f"layer {i}": i for i in range(model.n_layers)}
            self.head.options = {f"head {i}": i for i in range(model.n_heads)}
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
            heads = head_choices(model)
            if self.ablated.options != heads:
                self.ablated.options = heads
            self.ablated.value = list(m.ablated)
            patched = patched_words(m.extra)
            self.patched.param.update(object=patched, visible=bool(patched))
            self.backend.value = m.backend
            self.ran_on.object = f"This run was computed with {m.ran_on}." if m.ran_on else ""
            self.head_note.object = html.escape(found_head_note(model, m.layer, m.head))
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
            group_heading("Intervene inside this head"),
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
TABLE_COLUMNS = {
    "experiment": lambda r: r.title,
    "program": lambda r: r.text_before,
    "edit": lambda r: r.edit,
    "largest weight change": lambda r: f"{r.max_weight_change:.3f}",
    "head output moved": lambda r: f"{r.output_change:.2f}",
    "answer": lambda r: f"{shown_token(r.answer_before)} → {shown_token(r.answer_after)}",
    "P(reference answer)": lambda r: (
        f"{shown_token(r.expected)}: {r.p_expected_before:.1%} → {r.p_expected_after:.1%}"
    ),
}
TABLE_CSS = attention_lab_assets.read_text("components", "experiments-table.css")


def example_options(model) -> dict[str, str]:
    """The ready-made texts of `model`'s menu: its examples, and for a language model (one that
    encodes words) repeated random words."""
    options = {"(choose one)": ""} | dict(model.examples)
    if hasattr(model, "encode"):
        options[REPEATED_WORDS] = REPEATED_WORDS_VALUE
    return options


def reference_header(results) -> str:
    """The probability column's title: what the rows follow, the grammar's right answer or a
    language model's own first choice (`experiments.reference_kind`)."""
    kinds = {r.reference for r in results}
    return f"P({kinds.pop()})" if len(kinds) == 1 else "P(reference answer)"


def _program_cell(r) -> str:
    """The program a row ran on; a rewritten copy (a distractor inserted) is named beneath."""
    cell = html.escape(r.text_before)
    if r.rewrote_program:
        cell += f'<br><span class="copy">rewritten copy: {html.escape(r.text_after)}</span>'
    return cell


def experiments_table(results) -> str:
    """The recorded experiments as an escaped HTML table (newest first). In a card narrower
    than its columns each row becomes a list of its columns; the box scrolls when it is long."""
    if not results:
        return "<p>No experiment run yet: pick one and press <b>Run</b>.</p>"
    names = [reference_header(results) if n.startswith("P(") else n for n in TABLE_COLUMNS]
    head = "".join(f'<th class="{_css(n)}">{html.escape(n)}</th>' for n in names)
    body = []
    for r in reversed(results):
        # Each cell carries its column's name: a card too narrow for the columns shows every
        # row as a list of "name: value" lines (the table's stylesheet).
        cells = "".join(
            f'<td class="{_css(name)}" data-label="{html.escape(name)}">'
            + (_program_cell(r) if name == "program" else html.escape(cell(r)))
            + "</td>"
            for name, cell in zip(names, TABLE_COLUMNS.values(), strict=True)
        )
        body.append(f'<tr class="run">{cells}</tr>')
        if r.note:
            span = len(TABLE_COLUMNS)
            body.append(f'<tr><td class="note" colspan="{span}">{html.escape(r.note)}</td></tr>')
    table = f'<table class="lab-experiments"><tr class="head">{head}</tr>{"".join(body)}</table>'
    # Focusable, so a keyboard can scroll it too; a region, so a screen reader names it.
    return (
        '<div class="lab-experiments-scroll" tabindex="0" role="region" '
        f'aria-label="Experiments table">{table}</div>'
    )


def _css(column: str) -> str:
    return "program" if column == "program" else "p" if column.startswith("P(") else "cell"


class ModelMainView(pn.viewable.Viewer):
    """The model's answer and the experiments table, in the main area."""

    mstate = param.ClassSelector(class_=ModelState, constant=True, doc="the model source")

    def __init__(self, mstate, **params):
        super().__init__(mstate=mstate, **params)
        self.prediction = PredictionView()
        self.experiment = pn.widgets.Select(
            label="Experiment on this head",
            options=self._experiment_options(),
            sizing_mode="stretch_width",
        )
        self.run = pn.widgets.Button(label="Run", color="primary", width=90, align="end")
        self.describe = pn.pane.Markdown(margin=(0, 10))
        self.table = pn.pane.HTML(
            experiments_table([]), sizing_mode="stretch_width", stylesheets=[TABLE_CSS]
        )
        self.download = pn.widgets.FileDownload(
            callback=lambda: _csv_file(mstate),
            filename="experiments.csv",
            label="Download the table (CSV)",
            color="light",
        )
        self.clear = pn.widgets.Button(label="Clear the table", color="light")
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
        return {spec_title(ex.EXPERIMENTS[n]): n for n in names}

    def _model_changed(self) -> None:
        options = self._experiment_options()
        if self.experiment.options != options:
            self.experiment.options = options
            self.experiment.value = next(iter(options.values()))

    def _describe(self) -> None:
        spec = ex.EXPERIMENTS[self.experiment.value]
        self.describe.object = html.escape(spec_description(spec))

    def _run(self) -> None:
        if not self.mstate.request_experiment(self.experiment.value):
            notify("warning", self.mstate.error)

    @param.depends("mstate.experiments", watch=True)
    def _table(self) -> None:
        self.table.object = experiments_table(self.mstate.experiments)

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


def found_head_note(model, layer: int, head: int) -> str:
    """Which head the model opens first and what was measured to find it, beside the open one:
    no role name, since a head found on one text may do something else on the text shown."""
    found = model.retrieval_head
    note = f"Opened first: {head_name(*found)}, {model.retrieval_basis} (measured at load)."
    if (layer, head) == tuple(found):
        return note + " It is the head open now."
    return note + f" The head open now is {head_name(layer, head)}."


def patched_words(edits) -> str:
    """The heads a lesson patched, and the sentence each output came from, as Markdown."""
    said = [
        f"**Patched:** {head_name(e.layer, e.head)}, its output taken from "
        f"“{html.escape(e.source)}”"
        if e.source
        else f"**Patched:** {head_name(e.layer, e.head)}, its output taken from another run"
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
