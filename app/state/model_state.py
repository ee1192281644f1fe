"""The trained-model source of the lab's snapshot: a program, a head, and what was done to it.

No Panel or Bokeh import (a notebook can drive it). Like `LabState`, every valid change
recomputes `snapshot` (a `LabSnapshot` of the chosen head at the question position, built by
`engine.heads.head_snapshot`), and a refused change sets `error` and keeps the last valid one.
It adds what only a model has: the answer distribution before and after the current
intervention (`prediction`), and a table of the seed's experiments run on this head
(`experiments`).

The head controls are the lab's own interventions applied inside the real model: the head's
temperature, a rotation of its query, masked positions and ablating the head. They become
`engine.trained` edits, so later layers see their effect and the answer can change.

A page's forwards never run on the server's event loop. `try_update` computes at once (a
notebook, a test, a lesson step that measures right after). `request` is the page's way: the
same checks at once (a refusal is named at once), and when the change needs a forward that is
not cached (SmolLM2 on a 441-token text: two seconds), it runs on `model_runs.POOL` through a
`jobs.LatestJob`, as a lab's torch backend does. Meanwhile the settings wait as the
newest request (`wanted()`; the address already names them), `running` says what is computed,
and the head shown stays whole; the runs then come back through `handover` to the session's own
thread and are shown, unless a newer request came first (the newest wins). `settle()` waits
for the worker. An experiment on a page runs the same way (`request_experiment`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import param

from app.i18n.markers import N_
from app.i18n.said import Said
from app.i18n.translator import ENGLISH, Translator
from app.patches.param_values import check_value
from app.state import head_patterns, jobs, loss_tables, model_runs, settings_schema
from app.state.pipeline import dimension_sweep_of
from app.state.setting_params import parameter_for
from app.state.settings_schema import MODEL_FIELDS
from engine import trained
from engine.heads import head_snapshot, token_probability
from engine.messages import Problem
from engine.trained import repeated_words

MAX_TEXT_CHARS = settings_schema.MODEL_TEXT_CHARS
ROTATE_BOUNDS = settings_schema.MODEL_ROTATE_RANGE
# The address's keys, in order; their grammar is the scenarios' (app/state/settings_schema.py).
URL_KEYS = tuple(MODEL_FIELDS)
# The lab's backend names (the scenarios' and a model's, one vocabulary: settings_schema's
# BACKENDS) and the engine's for a model's run.
ENGINE_BACKENDS = dict(
    zip(settings_schema.BACKENDS, ("numpy", "torch:cpu", "torch:cuda"), strict=True)
)
BACKEND_WORDS = {"numpy": N_("NumPy on the CPU"), "torch:cpu": N_("torch on the CPU")}
BACKEND_WORDS["torch:cuda"] = N_("torch on the GPU (CUDA)")


@dataclass(frozen=True)
class Prediction:
    """The answer distribution without and with the current intervention."""

    tokens: tuple[str, ...]  # the answer vocabulary, in the model's order
    before: tuple[float, ...]
    after: tuple[float, ...]
    expected: str | None
    answer_before: str
    answer_after: str


@dataclass(frozen=True, eq=False)
class _Asked:
    """One request's runs, as the worker computes them: the run of `text` with `edits` (the
    head controls', then `extra`) and, for an experiment, the seed's experiment first (its
    edits then take `extra`'s place)."""

    model: str
    text: str
    query: int  # the position (never None or -1)
    backend: str  # the engine's name ("numpy", "torch:cpu", ...)
    controls: tuple  # the head controls' edits
    extra: tuple
    tokens: int
    layer: int
    head: int
    experiment: str = ""
    plain: object = None  # the session's plain run of this text, when it holds one

    @property
    def edits(self) -> tuple:
        return self.controls + self.extra

    @property
    def where(self) -> tuple:
        return (self.model, self.text, self.query, self.backend)


def _runs_of(asked: _Asked, extra: tuple | None = None) -> tuple:
    """(plain, edited) for `asked` (blocking); ValueError naming the setting that failed."""
    edits = asked.controls + (asked.extra if extra is None else tuple(extra))
    try:
        return model_runs.runs(*asked.where, edits, plain=asked.plain)
    except RuntimeError as exc:  # EngineUnavailable (no torch, no CUDA) or torch's own
        raise ValueError(f"backend: {exc}") from exc


def _call(asked: _Asked) -> tuple[object, str | Said]:
    """On the worker: the request's runs (and its experiment's row), or None and why."""
    from engine.trained import experiments as ex

    result = None
    if asked.experiment:
        try:
            loaded = trained.load(asked.model)
            result = ex.run_experiment(
                loaded, asked.text, asked.experiment, asked.layer, asked.head
            )
        except ValueError as exc:  # translated where shown, as `run_experiment`'s refusal
            return None, Said("{name}: {problem}", name=asked.experiment, problem=said_of(exc))
    try:
        runs = _runs_of(asked, None if result is None else tuple(result.edits))
    except ValueError as exc:
        # An experiment's row stands even when its edit cannot be shown (as `run_experiment`).
        return (None if result is None else (result, None)), str(exc)
    for run in runs:  # the loss strip's numbers, here rather than on the session's thread
        loss_tables.token_losses(run)
    return (result, runs), ""


def _edits_of(values: Mapping[str, object]) -> tuple:
    """The head controls in `values` as edits on the chosen head (`extra` not included)."""
    layer, head = values["layer"], values["head"]
    out = [trained.MaskPosition(layer, head, p) for p in values["masked"]]
    if not math.isclose(values["head_temperature"], 1.0):
        out.append(trained.HeadTemperature(layer, head, float(values["head_temperature"])))
    if values["rotate"]:
        out.append(trained.RotateQuery(layer, head, float(values["rotate"])))
    for tag in values["ablated"]:
        out.append(trained.AblateHead(*(int(x) for x in tag.split("."))))
    return tuple(out)


def _same_edits(a, b) -> bool:
    return len(a) == len(b) and all(
        model_runs.edit_key(x) == model_runs.edit_key(y) for x, y in zip(a, b, strict=True)
    )


def _fields() -> dict[str, settings_schema.Field]:
    return settings_schema.make_model_fields([entry[0] for entry in model_choices()])


def model_choices() -> list[tuple[str, str, bool, str]]:
    """(name, title, installed, reason) for every model the lab knows."""
    return [tuple(entry) for entry in trained.available()]


def short_title(name: str) -> str:
    """A model's title without its bracketed note ("SmolLM2-135M"), for a line of text."""
    titles = {entry[0]: entry[1] for entry in trained.available()}
    return titles.get(name, name).split(" (")[0].strip()


class ModelState(param.Parameterized):
    """One session's trained-model source. Set parameters; read `snapshot`, `prediction`."""

    # The settings, declared in app/state/settings_schema.py (make_model_fields), in URL order.
    # A layer, a head and a query position are checked against the model once it is known.
    model = parameter_for(MODEL_FIELDS["model"], "binding")
    text = parameter_for(MODEL_FIELDS["text"], "")
    layer = parameter_for(MODEL_FIELDS["layer"], 0)
    head = parameter_for(MODEL_FIELDS["head"], 0)
    query = parameter_for(
        MODEL_FIELDS["query"],
        None,
        allow_None=True,
        doc="the query position the planes and the answer are for (None or -1: the last token)",
    )
    head_temperature = parameter_for(MODEL_FIELDS["head_temperature"], 1.0)
    rotate = parameter_for(MODEL_FIELDS["rotate"], 0.0, doc="degrees, in the drawn plane")
    masked = parameter_for(MODEL_FIELDS["masked"], [], doc="positions hidden from this head")
    ablated = parameter_for(MODEL_FIELDS["ablated"], [], doc='heads whose output is zeroed, "L.H"')
    backend = parameter_for(MODEL_FIELDS["backend"], "numpy", doc="where it runs")
    find = parameter_for(MODEL_FIELDS["find"], "patterns", doc="what the head grid's cells show")
    words = parameter_for(
        MODEL_FIELDS["words"],
        None,
        allow_None=True,
        doc="the seed of the repeated random words `text` is (None: the text is not a draw)",
    )
    # Not in the address: the edits a lesson step or an experiment adds.
    extra = param.List(default=[], doc="edits set by a lesson or an experiment, applied last")

    snapshot = param.Parameter(default=None, constant=True)
    prediction = param.Parameter(default=None, constant=True)
    run = param.Parameter(default=None, constant=True, doc="the run with the intervention")
    experiments = param.List(default=[], constant=True, doc="ExperimentResult rows, newest last")
    error = param.String(default="", constant=True)
    running = param.String(
        default="",
        constant=True,
        doc="what the model is computing for the newest request ('' when it is the one shown)",
    )
    loading = param.String(
        default="", constant=True, doc="a model this session waits for (loading in the background)"
    )
    load_fraction = param.Number(
        default=0.0, bounds=(0.0, 1.0), constant=True, doc="how far `loading` is, as last polled"
    )

    INPUTS = (*MODEL_FIELDS, "extra")

    def __init__(self, *, handover: jobs.HandOver | None = None, **params):
        name = params.get("model", "binding")
        model = trained.load(name)
        base = {
            "model": name,
            "text": next(iter(model.examples.values())),
            "layer": model.retrieval_head[0],
            "head": model.retrieval_head[1],
        }
        super().__init__(**(base | params))
        # How a request's runs reach the state, shared with the session's lab: until a page
        # points it at its session's thread, runs are computed at once on the caller's thread
        # (a notebook, a test); once it does, `request` runs forwards on the worker.
        self.handover = handover or jobs.HandOver()
        self._busy = False
        self._pending: dict[str, object] = {}
        self._pending_link = False
        self._link_warnings: list[str] = []
        self._grid_cache: dict[str, tuple] = {}
        # The newest request while its runs are computed (settings, as `try_update` takes them).
        self._asked: dict[str, object] | None = None
        # (model, text, query, backend) and the plain run of the head shown: a long text's run
        # is too large for the process's cache, and another head of it needs no new forward.
        self._held = None
        # The request's runs: one at a time, and a run shown meanwhile makes them stale.
        self._runs = jobs.LatestJob(
            model_runs.POOL.submit,
            lambda work: self.handover(work),
            failed=lambda failure: self._arrived(None, failure),
        )
        self.param.watch(self._on_change, list(self.INPUTS))
        if not self._recompute():
            raise ValueError(f"ModelState: the starting configuration is invalid: {self.error}")

    @property
    def loaded(self):
        return trained.load(self.model)

    # ---------------------------------------------------------------- changes

    def _on_change(self, *events):
        if not self._busy:
            self._recompute()

    def values(self) -> dict[str, object]:
        """The settings of the head shown."""
        return {name: getattr(self, name) for name in self.INPUTS}

    def wanted(self) -> dict[str, object]:
        """The settings asked for last: those shown, or the newest request while its runs are
        being computed (`running`)."""
        return self.values() | (self._asked or {})

    def try_update(self, **settings) -> bool:
        """Set settings as one change, computed now; a refused value sets `error` instead of
        raising."""
        return self._update(settings, off_loop=False)

    def request(self, **settings) -> bool:
        """`try_update` for a page: refused values are named at once, and a change that needs a
        forward not yet computed runs it off the session's thread (once a page serves
        `handover`). True when the change is shown or on its way."""
        return self._update(settings, off_loop=self.handover.served)

    def _update(self, settings: Mapping[str, object], *, off_loop: bool) -> bool:
        current = self.wanted()
        try:
            for name, value in settings.items():
                if name not in self.INPUTS:
                    raise ValueError(f"{name}: unknown model setting")
                if name in ("layer", "head") and "model" not in settings:
                    problem = self._head_problem(name, value, trained.load(current["model"]))
                    if problem is not None:
                        raise problem
                check_value(self, name, value)
        except ValueError as exc:
            self._set_error(exc)
            return False
        if "model" in settings and settings["model"] != current["model"]:
            if not self._ready(settings["model"]):
                return self._wait_for(settings)
            # A new model: its own example and retrieval head unless the caller says otherwise.
            model = trained.load(settings["model"])
            base = {
                "text": next(iter(model.examples.values())),
                "layer": model.retrieval_head[0],
                "head": model.retrieval_head[1],
                "query": None,
            }
            settings = self.fresh() | base | dict(settings)
        try:
            settings = self._with_words(settings, current)
        except ValueError as exc:
            self._set_error(exc)
            return False
        if "text" in settings and settings["text"] != current["text"]:
            # Positions refer to the old program; a query position the new one lacks goes back
            # to its last token.
            reset = {"masked": [], "extra": []} | self._query_for(settings, current)
            settings = reset | dict(settings)
        return self._ask(dict(settings), current | dict(settings), off_loop=off_loop)

    def _with_words(self, settings: Mapping[str, object], current: Mapping[str, object]) -> dict:
        """`settings` with the text of the random words they ask for, or (a text of their own,
        a new model) without the seed of words no longer shown; ValueError if refused."""
        settings = dict(settings)
        model = trained.load(settings.get("model", current["model"]))
        seed = settings.get("words", current["words"])
        if seed is None:
            return settings
        if "words" in settings and not hasattr(model, "encode"):
            raise ValueError(
                f"words: {short_title(model.name)} reads programs, not words; repeated random "
                "words are for a language model"
            )
        drawn = repeated_words.draw(model.encode, seed).text if hasattr(model, "encode") else ""
        if "words" in settings:
            settings["text"] = drawn
        elif "text" in settings and settings["text"] != drawn:
            settings["words"] = None  # a text of the student's own
        return settings

    def words_drawn(self):
        """The draw `text` is (a `RepeatedWords`, its copies' positions), or None."""
        if self.words is None:
            return None
        return repeated_words.draw(self.loaded.encode, self.words)

    def _ask(self, settings: dict, values: dict, *, off_loop: bool, experiment: str = "") -> bool:
        """Show `values` (reached by applying `settings` to what was asked before) now, or
        send its runs to the worker; False (and `error`) when they are refused."""
        try:
            asked = self._asked_for(values, experiment)
            runs = None if experiment else self._runs_now(asked, compute=not off_loop)
        except ValueError as exc:
            self._set_error(exc)
            return False
        if runs is None:
            # The settings wait with the earlier request's (one request: the newest wins).
            self._asked = (self._asked or {}) | settings
            self._runs.submit(self._compute_runs, asked)
            words = self._running_words(asked)
            if self.running != words:
                with param.edit_constant(self):
                    self.running = words
            return True
        try:
            # With the earlier request's settings, if one waits: `values` includes them.
            self._show((self._asked or {}) | settings, values, asked, runs)
        except ValueError as exc:
            self._set_error(exc)
            return False
        return True

    # ---------------------------------------------------------------- runs off the thread

    @property
    def deliver(self) -> jobs.Deliver | None:
        """The hand-over to the session's thread; None until a page sets one."""
        return self.handover if self.handover.served else None

    @deliver.setter
    def deliver(self, to: jobs.Deliver | None) -> None:
        # This state's own hand-over from now on (the session's lab keeps its own).
        self.handover = jobs.HandOver(to)

    def _compute_runs(self, ticket: jobs.Ticket, asked: _Asked) -> None:
        """On the worker: the request's runs, handed to the session's thread."""
        ticket.deliver(self._arrived, *_call(asked))

    def _arrived(self, result, failure: str | Said) -> None:
        """On the session's thread: show the newest request's runs (a stale one never comes:
        a newer request, or a change shown since, dropped it)."""
        settings, self._asked = self._asked or {}, None
        with param.edit_constant(self):
            self.running = ""
        row, runs = result if result is not None else (None, None)
        if row is not None:
            with param.edit_constant(self):
                self.experiments = [*self.experiments, row]
            settings = settings | {"extra": list(row.edits)}
        if runs is None:
            self._set_error(failure)  # the head shown stays: the last valid settings
            rest = {k: v for k, v in settings.items() if k != "backend"}
            if str(failure).startswith("backend:") and rest and rest != settings:
                # As for a link's bad value: the backend is dropped, the rest still applies.
                self._ask(rest, self.values() | rest, off_loop=True)
            return
        values = self.values() | settings
        try:
            self._show(settings, values, self._asked_for(values), runs)
        except ValueError as exc:
            self._set_error(exc)

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until no request's runs are being computed (a test's or a notebook's way to
        see them); True if idle. Their hand-over to the session's thread may still be queued."""
        return self._runs.settle(timeout)

    def close(self) -> None:
        """The page closed: drop the runs under way; nothing more arrives."""
        self._runs.stop()

    @staticmethod
    def _running_words(asked: _Asked) -> str:
        """What the worker computes, in words ("SmolLM2-135M is reading 441 tokens")."""
        title = short_title(asked.model)
        if asked.experiment:
            return f"{title} runs the experiment {asked.experiment!r} on {asked.tokens} tokens"
        return f"{title} is reading {asked.tokens} tokens"

    # ---------------------------------------------------------------- models still loading

    @staticmethod
    def _ready(name: str) -> bool:
        return name == "binding" or trained.loading_status(name)[2]

    def _wait_for(self, settings: Mapping[str, object], *, link: bool = False) -> bool:
        """Start loading the model in the background (shared by the whole process) and keep
        these settings until it is ready; `poll` applies them. The page keeps working."""
        name = settings["model"]
        trained.start_loading(name)
        self._drop_request()  # this is the newest request now
        self._pending, self._pending_link = dict(settings), link
        fraction = trained.loading_status(name)[0]
        with param.edit_constant(self):
            self.param.update(loading=name, load_fraction=fraction, error="")
        return True

    def _drop_request(self) -> None:
        """Forget the request whose runs are being computed (its result will be dropped)."""
        if self._asked is not None:
            self._asked = None
            self._runs.drop()
            with param.edit_constant(self):
                self.running = ""

    def poll(self) -> tuple[float, str]:
        """While a model loads: (fraction, message); applies the waiting settings once ready."""
        if not self.loading:
            return 1.0, ""
        fraction, message, ready, error = trained.loading_status(self.loading)
        if not ready and not error:
            if fraction != self.load_fraction:
                with param.edit_constant(self):
                    self.load_fraction = fraction
            return fraction, message
        pending, name = self._pending, self.loading
        self._pending = {}
        # Who waited on `loading` (a lesson step) may apply its own settings when it clears.
        with param.edit_constant(self):
            self.param.update(loading="", load_fraction=0.0 if error else 1.0)
        if error:
            failed = Said("model: {name} could not be loaded ({error})", name=name, error=error)
            self._set_error(failed)
        elif self._pending_link:
            # The link's values are checked only now: the page names each bad one, as it does
            # for a link read when the page opened (`take_link_warnings`).
            self._link_warnings += self.apply_query_params(pending)
        elif any(getattr(self, key) != value for key, value in pending.items()):
            self.request(**pending)  # (not again when a waiting lesson step applied them)
        return 1.0, "ready" if not error else "failed"

    def cancel_loading(self) -> None:
        """Stop waiting for the model that loads (it still loads, for the whole process): the
        settings kept for it are dropped and the head drawn stays (a lesson step left)."""
        self._pending, self._pending_link = {}, False
        with param.edit_constant(self):
            self.param.update(loading="", load_fraction=0.0)

    def take_link_warnings(self) -> list[str]:
        """The problems of a link applied once its model had loaded (`poll`), each once."""
        warnings, self._link_warnings = self._link_warnings, []
        return warnings

    def _query_for(self, settings: Mapping[str, object], current: Mapping[str, object]) -> dict:
        """{"query": None} when the new text has no position `query` (else nothing)."""
        query = current["query"]
        if "query" in settings or query in (None, -1):
            return {}
        try:
            n = len(trained.load(settings.get("model", current["model"])).check(settings["text"]))
        except ValueError:
            return {}  # a refused text: the refusal names its own problem
        return {} if query < n else {"query": None}

    def _set(self, settings: Mapping[str, object]) -> None:
        self._busy = True
        try:
            self.param.update(**settings)
        finally:
            self._busy = False

    @staticmethod
    def fresh() -> dict[str, object]:
        """The head controls with no intervention."""
        return {"head_temperature": 1.0, "rotate": 0.0, "masked": [], "ablated": [], "extra": []}

    def clear_intervention(self) -> None:
        self.request(**self.fresh())

    def edits(self) -> list:
        """The head controls as edits on the chosen head, then `extra`."""
        return [*_edits_of(self.values()), *self.extra]

    def _head_problem(self, name: str, value, model=None) -> Problem | None:
        """What is wrong with `value` as this model's layer or head (None when nothing), as a
        `Problem` the page shows in the student's language."""
        model = model or self.loaded
        count = model.n_layers if name == "layer" else model.n_heads
        if isinstance(value, Integral) and not isinstance(value, bool) and 0 <= value < count:
            return None
        shown, last = str(value)[:20], count - 1
        if name == "layer":
            return Problem(
                "layer: {value} is not a layer of this model (0..{last})", value=shown, last=last
            )
        return Problem(
            "head: {value} is not a head of this model (0..{last})", value=shown, last=last
        )

    def _check(self, values: Mapping[str, object]):
        model = trained.load(values["model"])
        text = values["text"]
        if len(text) > MAX_TEXT_CHARS:
            raise Problem(
                "text: {count} characters; the lab takes at most {most}",
                count=len(text),
                most=MAX_TEXT_CHARS,
            )
        for name in ("layer", "head"):
            problem = self._head_problem(name, values[name], model)
            if problem is not None:
                raise problem
        for tag in values["ablated"]:
            parts = tag.split(".")
            ok = len(parts) == 2 and all(p.isdigit() for p in parts)
            if not ok or not (int(parts[0]) < model.n_layers and int(parts[1]) < model.n_heads):
                raise Problem(
                    "ablated: {tag} is not a head of this model (layer.head)", tag=repr(tag[:20])
                )
        return model

    def _asked_for(self, values: Mapping[str, object], experiment: str = "") -> _Asked:
        """What `values` ask the model for, checked without running it (ValueError if refused:
        the text, a head, a masked position, an edit that does not fit the text)."""
        model = self._check(values)
        n = len(model.check(values["text"]))
        query = head_patterns.query_position(values["query"], n)
        bad = [p for p in values["masked"] if not 0 <= p < n]
        if bad:
            raise Problem(
                "masked: position {position} is past the last token ({last})",
                position=bad[0],
                last=n - 1,
            )
        controls = _edits_of(values)
        model.check_edits(controls + tuple(values["extra"]), n)
        where = (model.name, values["text"], query, ENGINE_BACKENDS[values["backend"]])
        held = self._held
        return _Asked(
            *where,
            controls=controls,
            extra=tuple(values["extra"]),
            tokens=n,
            layer=values["layer"],
            head=values["head"],
            experiment=experiment,
            plain=held[1] if held is not None and held[0] == where else None,
        )

    def _runs_now(self, asked: _Asked, *, compute: bool):
        """(plain, edited) for `asked`: the run shown, the process's cache, or (`compute`) a
        forward now; None when only a forward has them and it must not run here."""
        if asked.plain is not None:
            edits = asked.edits
            if not edits:
                return asked.plain, asked.plain
            run = self.run
            if run is not None and _same_edits(run.edits, edits) and run.text == asked.text:
                return asked.plain, run
        found = model_runs.cached_runs(*asked.where, asked.edits)
        if found is not None or not compute:
            return found
        return _runs_of(asked)

    def _recompute(self) -> bool:
        values = self.values()
        try:
            asked = self._asked_for(values)
            self._show({}, values, asked, self._runs_now(asked, compute=True))
        except ValueError as exc:
            self._set_error(exc)
            return False
        return True

    def _show(self, settings, values, asked: _Asked, runs) -> None:
        """Show `runs` for `values` (`settings` being what changes)."""
        plain, edited = runs
        # The planes draw the query row's own keys: those after it are in its future.
        seen = head_patterns.up_to_query(edited)
        # The dimension view keeps its synthetic sweep, at this head's number of candidates.
        temperature = float(values["head_temperature"])
        sweep = dimension_sweep_of(0, max(2, len(seen.tokens)), temperature)
        snap = head_snapshot(
            seen,
            values["layer"],
            values["head"],
            dimension_sweep=sweep,
            patched=patched_from(values["extra"], values["layer"], values["head"]),
        )
        self._held = (asked.where, plain)
        self._set(settings)
        self._publish(plain, edited, snap)

    @property
    def plain_run(self):
        """The run of the text shown without any edit (the run shown when there is none)."""
        return self._held[1] if self._held is not None else None

    @property
    def ran_on(self) -> str:
        """Where the run on screen was computed, in words."""
        run = self.run
        return BACKEND_WORDS.get(run.backend, run.backend) if run is not None else ""

    def _publish(self, plain, edited, snap) -> None:
        # A language model lists only its likeliest next tokens: take both runs' lists, and
        # ask each run for any token the other listed.
        vocab = tuple(dict.fromkeys([*plain.probs, *edited.probs]))
        prediction = Prediction(
            tokens=vocab,
            before=tuple(token_probability(plain, t) for t in vocab),
            after=tuple(token_probability(edited, t) for t in vocab),
            expected=plain.expected,
            answer_before=plain.answer,
            answer_after=edited.answer,
        )
        # Shown now: a request still computed for older settings is dropped when it arrives.
        self._runs.drop()
        self._asked = None
        with param.edit_constant(self):
            self.param.update(
                snapshot=snap, prediction=prediction, run=edited, error="", running=""
            )

    def _set_error(self, message: str | Said | ValueError) -> None:
        """`error` in English; `error_text(tr)` in a session's language (an engine's `Problem`
        and a `Said` are translated, any other message is shown as written)."""
        self._error_said = said_of(message)
        with param.edit_constant(self):
            self.error = str(self._error_said)

    def error_text(self, tr: Translator = ENGLISH) -> str:
        """The refusal shown now (`error`), in `tr`'s language."""
        said = getattr(self, "_error_said", None)
        if said is None or str(said) != self.error:  # set directly: no template kept
            return self.error
        return said.text(tr)

    # ---------------------------------------------------------------- every head, every row

    @property
    def query_position(self) -> int:
        """The position the planes and the answer are for (the run's, so never -1)."""
        return self.run.query_position

    def _cached(self, kind: str, key, make):
        hit = self._grid_cache.get(kind)
        if hit is not None and hit[0] == key:
            return hit[1]
        value = make()
        self._grid_cache[kind] = (key, value)
        return value

    def head_grid(self) -> dict[str, list]:
        """One row per head of the run on screen (layer-major): its query row's strongest key,
        that key's weight, the row's entropy and its weight on the open head's strongest key
        (`head_patterns.grid_rows`)."""
        run, model = self.run, self.loaded
        return self._cached(
            "rows",
            (run, self.layer, self.head),
            lambda: head_patterns.grid_rows(run, model.n_layers, model.n_heads, *self.open_head),
        )

    def head_grid_image(self) -> head_patterns.GridImage:
        """Every head's whole pattern, pooled, in one mosaic (`head_patterns.grid_image`). It
        depends on the text and the edits only, not on the query row or the open head."""
        run, model = self.run, self.loaded
        # A rotated query acts on the question row only: then the row matters too.
        key = (model.name, run.text, run.edits, run.query_position if run.edits else None)
        return self._cached(
            "image", key, lambda: head_patterns.grid_image(run, model.n_layers, model.n_heads)
        )

    def pattern(self) -> np.ndarray:
        """The open head's whole matrix (query rows x keys, float32, NaN above the diagonal)."""
        run = self.run
        return self._cached(
            "pattern", (run, *self.open_head), lambda: head_patterns.pattern(run, *self.open_head)
        )

    @property
    def open_head(self) -> tuple[int, int]:
        return self.layer, self.head

    # ---------------------------------------------------------------- experiments

    def run_experiment(self, name: str):
        """Run one of the seed's experiments on this program and head; record its row.

        Every experiment starts from the program the student chose (`text`). One that rewrites
        the program (inserting a distractor) reports on its rewritten copy in its row and
        leaves `text` alone, so the next experiment runs on the student's program again."""
        from engine.trained import experiments as ex

        try:
            result = ex.run_experiment(self.loaded, self.text, name, self.layer, self.head)
        except ValueError as exc:
            self._set_error(Said("{name}: {problem}", name=name, problem=said_of(exc)))
            return None
        with param.edit_constant(self):
            self.experiments = [*self.experiments, result]
            self.error = ""
        # The views show an edit's "after": its edit on top of the head controls' own ("Clear
        # the intervention" goes back). A rewritten copy is the row's alone: the views keep the
        # student's program, without an earlier experiment's edit.
        self.try_update(extra=list(result.edits))
        return result

    def request_experiment(self, name: str) -> bool:
        """`run_experiment` for a page: with `handover` served, the experiment and the run of its
        edit are computed off the session's thread, and its row and its edit are shown together
        when they arrive (a newer request replaces it, as any request). False when refused."""
        if not self.handover.served:
            return self.run_experiment(name) is not None
        values = self.wanted()
        return self._ask({}, values, off_loop=True, experiment=name)

    def clear_experiments(self) -> None:
        with param.edit_constant(self):
            self.experiments = []

    def experiments_csv(self) -> str:
        import csv
        import io

        rows = [r.as_row() for r in self.experiments]
        out = io.StringIO()
        if rows:
            writer = csv.DictWriter(out, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        return out.getvalue()

    # ---------------------------------------------------------------- URL

    def query_params(self) -> dict[str, str]:
        """The model settings as URL text (the head controls only when they intervene).

        While a model loads, the address already names what will open (a reload then asks
        for the same model, not for the head shown meanwhile)."""
        if self.loading:
            if self._pending_link:
                return {k: str(v) for k, v in self._pending.items()}
            return {"model": self.loading}
        # While a request's runs are computed, the address names it, as for a model loading.
        want = self.wanted()
        said = {key: want[key] for key in ("model", "text", "layer", "head")}
        if want["query"] not in (None, -1):
            said["query"] = want["query"]
        if not math.isclose(want["head_temperature"], 1.0):
            said["head_temperature"] = want["head_temperature"]
        for name in ("rotate", "masked", "ablated"):
            if want[name]:
                said[name] = want[name]
        if want["backend"] != "numpy":
            said["backend"] = want["backend"]
        if want["find"] != "patterns":
            said["find"] = want["find"]
        if want["words"] is not None:
            said["words"] = want["words"]  # after the text: a link's seed draws its text again
        fields = _fields()
        return {k: settings_schema.format_text(fields[k], v) for k, v in said.items()}

    def apply_query_params(self, params: Mapping[str, str]) -> list[str]:
        """Restore from URL values; a bad value is named and left at its default."""
        warnings = [
            f"unknown model setting {str(key)[:40]!r} ignored"
            for key in params
            if key not in URL_KEYS
        ]
        fields = _fields()
        given: dict[str, object] = {}
        name = params.get("model", self.model)
        known = {entry[0]: entry for entry in model_choices()}
        if name not in known:
            warnings.append(f"model: {name[:40]!r} is not one of {', '.join(known)}")
            name = self.model
        elif not known[name][2]:
            warnings.append(f"model: {name} is not installed ({known[name][3]})")
            name = self.model
        given["model"] = name
        if not self._ready(name):
            # The page opens the model source now and the link's head once the model is in.
            self._wait_for({k: v for k, v in params.items() if k in URL_KEYS}, link=True)
            return warnings
        model = trained.load(name)
        defaults = dict(zip(("layer", "head"), model.retrieval_head, strict=True))
        # The grammar first (settings_schema, as for the scenarios), then what this model allows.
        for key in URL_KEYS[1:]:
            if key not in params or (key in ("masked", "ablated") and not params[key]):
                continue
            try:
                value = settings_schema.parse_text(fields[key], params[key])
            except ValueError as exc:
                warnings.append(str(exc))
                continue
            problem = self._head_problem(key, value, model) if key in defaults else None
            if problem is not None:
                warnings.append(f"{problem}; using {key} {defaults[key]}")
            else:
                given[key] = value
        start = {
            "model": name,
            "text": next(iter(model.examples.values())),
            "layer": model.retrieval_head[0],
            "head": model.retrieval_head[1],
            "query": None,
        } | self.fresh()
        # On a page (`handover` served) the runs of the link's head are computed off the session's
        # thread: each setting below is still checked, and refused, at once.
        self.request(**start)
        # The program first (positions and heads refer to it), then each setting on its own, so
        # one bad value is named and dropped while the others still apply.
        keys = (
            "text",
            "words",  # its draw's text replaces the text: before the positions in it
            "layer",
            "head",
            "query",
            "masked",
            "head_temperature",
            "rotate",
            "ablated",
            "backend",
            "find",
        )
        for key in keys:
            if key in given and not self.request(**{key: given[key]}):
                error = self.error if self.error.startswith(key) else f"{key}: {self.error}"
                warnings.append(f"{error}; using the default")
        self._set_error("")
        return warnings


AS_WRITTEN = "{text}"  # a message with no template: not a catalogue entry (not a literal)


def said_of(message: str | Said | ValueError) -> Said:
    """A refusal as a `Said`: an engine's `Problem` keeps its template and values; any other
    message is its own text (no catalogue entry: shown as written)."""
    if isinstance(message, Said):
        return message
    template, values = getattr(message, "template", None), getattr(message, "values", None)
    if isinstance(template, str) and isinstance(values, dict):
        return Said(template, **values)
    return Said(AS_WRITTEN, text=str(message))


def patched_from(edits, layer: int, head: int) -> str:
    """The sentence head (layer, head)'s output is patched in from by one of `edits`
    ("another sentence" when the patch does not say; "" when the head is not patched)."""
    for edit in edits:
        if isinstance(edit, trained.PatchHead) and (edit.layer, edit.head) == (layer, head):
            return edit.source or "another sentence"
    return ""
