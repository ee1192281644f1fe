"""The lab's state: every control as a `param` parameter, the address and import/export.

No Panel or Bokeh import: the UI drives this class and so do tests, without a server. Every
valid change asks the pipeline (`app.state.pipeline`, pure and shared by every session of the
process) for the snapshot of the new settings (a frozen bundle of read-only NumPy arrays the
views draw); an invalid change sets `error` and leaves the last valid `snapshot` in place, so
the page never loses its drawing. Values from a URL or an imported file pass the caps in
`app.state.settings_schema` first.

Sessions with the same settings share one snapshot object: the pipeline computes it once per
process (a bounded LRU), so a class of thirty on one lesson step costs one computation.

A torch backend never holds the caller: the change is answered at once with the NumPy engine's
result (`running` names the backend still at work), the torch call runs on a worker thread
(a `jobs.LatestJob` on `pipeline.TORCH_POOL`), and its snapshot replaces the NumPy one through
`handover` if no newer change came first; a torch result some session already computed is shown
at once. The page points `handover` at its session's thread (the model states share it);
`settle()` waits for the torch call in a notebook.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import param

from app.i18n.markers import N_
from app.patches.param_values import check_value
from app.state import jobs, pipeline, settings_schema
from app.state.pipeline import (  # noqa: F401 - re-exported: the lab's public names
    EVERY_KEY_MASKED,
    SWEEP_D_KS,
    TORCH_MISSING,
    BackendChoice,
    Settings,
    available_backends,
    listed_backends,
)
from app.state.setting_params import parameter_for, plain
from engine.messages import Problem
from engine.scenarios import SCENARIOS, get_scenario
from engine.snapshot import SWEEP_TEMPERATURES, TEMPERATURE_RANGE, LabSnapshot  # noqa: F401
from engine.wording import Phrase, worded

DEFAULT_SCENARIO = "basic" if "basic" in SCENARIOS else next(iter(SCENARIOS))
FIELDS = settings_schema.FIELDS  # every setting's declaration, in URL order
INPUTS = tuple(FIELDS)
# What no scenario sets: loading one puts these settings back here.
UNSET_BY_SCENARIOS = {"angle": 0.0, "seed": 0, "normalise": False}


def _scenario_settings(name: str) -> dict[str, object]:
    """Every setting a scenario defines, as validated plain values (the reset target): those it
    stores under their own names (engine/scenarios.py) and those that follow from it."""
    sc = get_scenario(name)
    n = sc.n_keys
    follow = {
        "scenario": name,
        "query_position": n - 1 if sc.query_position is None else sc.query_position,
        "null_route": sc.null_threshold is not None,
        "null_threshold": sc.null_threshold or 0.0,
        "mask": [True] * n if sc.legal is None else sc.legal,
    }
    stored = {key: getattr(sc, key) for key in FIELDS if hasattr(sc, key)}
    settings = UNSET_BY_SCENARIOS | stored | follow
    return {
        key: settings_schema.check_json(FIELDS[key], plain(settings[key]))
        for key in FIELDS
        if key in settings
    }


def default_labels(n: int) -> list[str]:
    return [f"key {i + 1}" for i in range(n)]


_DEFAULTS = _scenario_settings(DEFAULT_SCENARIO) | {"backend": "numpy"}


def _declared(name: str, **kw) -> param.Parameter:
    """Setting `name`'s parameter: its field's kind and bounds, the default scenario's value."""
    return parameter_for(FIELDS[name], _DEFAULTS[name], **kw)


class LabState(param.Parameterized):
    """One session's lab. Set parameters (or call the methods); read `snapshot` and `error`.

    Setting `scenario` resets every other control to that scenario's settings (the backend is
    kept); to load a scenario and change controls in one step use `try_update`, `from_dict` or
    `apply_query_params`. Edits through the methods never raise: a bad argument sets `error`.
    """

    # The settings, declared in app/state/settings_schema.py (make_fields), in URL order.
    scenario = _declared("scenario")
    temperature = _declared("temperature")
    d_k = _declared("d_k")
    scale = _declared("scale")
    angle = _declared("angle", doc="degrees")
    causal = _declared("causal")
    query_position = _declared(
        "query_position", doc="sequence position of the query: causal hides keys after it"
    )
    seed = _declared("seed")
    normalise = _declared("normalise", doc="unit-length query and keys")
    distractors = _declared("distractors")
    distractor_norm = _declared("distractor_norm")
    distractor_similarity = _declared("distractor_similarity")
    null_route = _declared("null_route")
    null_threshold = _declared("null_threshold")
    backend = _declared("backend")
    keys = _declared("keys")
    values = _declared("values")
    mask = _declared("mask", doc="True = the key takes part")
    labels = _declared("labels")

    # Derived, read-only for the UI (watch them to redraw or to notify).
    snapshot = param.Parameter(default=None, constant=True, doc="last valid LabSnapshot")
    error = param.String(default="", constant=True, doc="why the last change was refused")
    running = param.String(
        default="", constant=True, doc="the backend still computing the snapshot shown, or ''"
    )

    def __init__(self, **params):
        settings = _scenario_settings(params.get("scenario", DEFAULT_SCENARIO))
        settings.update(params)
        super().__init__(**settings)
        # How this session's results reach its thread: at once on the worker by default; the
        # page hands them to its session's thread. Its model states share it (`handover`).
        self.handover = jobs.HandOver()
        self._shown: Settings | None = None  # the settings of the snapshot shown
        # Torch calls: one at a time, and a published snapshot makes any under way stale.
        self._torch = jobs.LatestJob(
            pipeline.TORCH_POOL.submit,
            lambda work: self.handover(work),
            failed=lambda failure: self._finish(None, failure),
        )
        self._applying = False
        self.param.watch(self._on_change, list(INPUTS))
        if not self._recompute():
            raise ValueError(f"LabState: the starting configuration is invalid: {self.error}")

    # -------------------------------------------------------------------- change handling

    def _on_change(self, *events):
        if self._applying:
            return
        if any(e.name == "scenario" for e in events):
            # Picking a scenario resets every control to that scenario's settings.
            self._apply(_scenario_settings(self.scenario) | {"backend": self.backend})
        else:
            self._recompute()

    def settings(self) -> dict[str, object]:
        """The current value of every setting (plain Python values)."""
        return {name: plain(getattr(self, name)) for name in INPUTS}

    def frozen_settings(self) -> Settings:
        """The current settings as the pipeline's hashable key."""
        return Settings.of(self.settings())

    def _compute(self, s: Mapping[str, object]) -> tuple[Settings, LabSnapshot]:
        """The pipeline's snapshot for `s` (shared with every session); ValueError if invalid."""
        settings = Settings.of(s)
        return settings, pipeline.snapshot_for(settings)

    def _recompute(self) -> bool:
        try:
            computed = self._compute(self.settings())
        except ValueError as exc:
            self._set_error(worded(exc))
            return False
        except Exception as exc:  # noqa: BLE001 - a bug must not reach the page as a traceback
            self._set_error(f"the lab could not compute this route ({type(exc).__name__}: {exc})")
            return False
        self._publish(computed)
        return True

    def _publish(self, computed: tuple[Settings, LabSnapshot]) -> None:
        """Show the snapshot, and start the background call that will replace it, if any."""
        settings, snap = computed
        backend = pipeline.background_for(settings)
        if backend:
            done = pipeline.finished_background(settings)  # another session's torch result
            if done is not None:
                snap, backend = done, ""
        self._shown = settings
        self._torch.drop()  # a torch result still on its way was for older settings
        with param.edit_constant(self):
            self.param.update(snapshot=snap, error="", running=backend)
        if backend:
            self._torch.submit(self._compute_in_background, settings)

    # -------------------------------------------------------------------- torch, off the thread

    @property
    def deliver(self) -> jobs.Deliver:
        """The hand-over to the session's thread (the page may set its own)."""
        return self.handover

    @deliver.setter
    def deliver(self, to: jobs.Deliver) -> None:
        self.handover.to = to

    def _compute_in_background(self, ticket: jobs.Ticket, settings: Settings) -> None:
        """On the torch pool: the background backend's snapshot, shown unless stale by then."""
        snap, failure = pipeline.background_call(settings)
        ticket.deliver(self._finish, snap, failure)

    def _finish(self, snap: LabSnapshot | None, failure: str) -> None:
        with param.edit_constant(self):
            shown = snap if snap is not None else replace(self.snapshot, notice=failure)
            self.param.update(snapshot=shown, running="")

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until no torch call is running or waiting (a notebook's or a test's way to see
        the torch result); True if the lab is idle."""
        return self._torch.settle(timeout)

    def close(self) -> None:
        """The page closed: drop the torch call under way; nothing more arrives."""
        self._torch.stop()

    def _set_error(self, message: str) -> None:
        with param.edit_constant(self):
            self.error = message

    def _apply(
        self,
        settings: Mapping[str, object],
        computed: tuple[Settings, LabSnapshot] | None = None,
    ):
        """Set many settings as one change: one pipeline run, one snapshot event."""
        self._applying = True
        try:
            self.param.update(**settings)
        finally:
            self._applying = False
        if computed is None:
            self._recompute()
        else:
            self._publish(computed)

    def _refused(self, settings: Mapping[str, object]) -> bool:
        """Check every setting before any is set; a refused one sets `error`."""
        try:
            for name, value in settings.items():
                if name not in FIELDS:
                    raise Problem("{name}: unknown setting", name=name)
                settings_schema.check_number(FIELDS[name], value)
                check_value(self, name, value)
        except ValueError as exc:
            self._set_error(worded(exc))
            return True
        return False

    def try_update(self, **settings) -> bool:
        """Set settings as one change; a refused value sets `error` instead of raising."""
        if self._refused(settings):
            return False
        if "scenario" in settings and settings["scenario"] != self.scenario:
            base = _scenario_settings(settings["scenario"]) | {"backend": self.backend}
            settings = base | dict(settings)
        self._apply(settings)
        return not self.error

    # -------------------------------------------------------------------- edits

    def _refuse(self, message: str) -> None:
        self._set_error(message)

    def _index(self, what: str, i) -> int | None:
        n = len(self.keys)
        if isinstance(i, bool) or not isinstance(i, int | np.integer) or not 0 <= i < n:
            self._refuse(f"{what}: index {i!r} is out of range; there are {n} keys (0..{n - 1})")
            return None
        return int(i)

    def _point(self, what: str, x, y) -> list[float] | None:
        try:
            pair = settings_schema.check_json(
                settings_schema.Field(what, "pairs"), [[plain(x), plain(y)]]
            )
        except ValueError as exc:
            self._refuse(str(exc))
            return None
        return pair[0]

    def swap_values(self, i: int, j: int) -> None:
        """Exchange the values of keys i and j (0-based); the keys stay where they are."""
        i, j = self._index("swap_values", i), self._index("swap_values", j)
        if i is None or j is None:
            return
        values = [list(v) for v in self.values]
        values[i], values[j] = values[j], values[i]
        self._apply({"values": values})

    def set_key(self, i: int, x: float, y: float) -> None:
        self._set_pair("keys", i, x, y)

    def set_value(self, i: int, x: float, y: float) -> None:
        self._set_pair("values", i, x, y)

    def _set_pair(self, name: str, i, x, y) -> None:
        i = self._index(f"{name}", i)
        point = self._point(f"{name}[{i}]", x, y) if i is not None else None
        if point is None:
            return
        pairs = [list(p) for p in getattr(self, name)]
        pairs[i] = point
        self._apply({name: pairs})

    def toggle_mask(self, i: int) -> None:
        """Flip whether key i takes part. Masking the last legal key sets `error`."""
        i = self._index("toggle_mask", i)
        if i is None:
            return
        mask = list(self.mask)
        mask[i] = not mask[i]
        self._apply({"mask": mask})

    def set_label(self, i: int, text: str) -> None:
        i = self._index("set_label", i)
        if i is None:
            return
        try:
            label = settings_schema.clean_label(text, where=f"labels[{i}]")
        except ValueError as exc:
            self._refuse(str(exc))
            return
        labels = list(self.labels)
        labels[i] = label
        self._apply({"labels": labels})

    def add_pair(self, key=(1.0, 0.0), value=(0.0, 1.0), label: str | None = None) -> None:
        """Append a key/value pair (at most `MAX_PAIRS`)."""
        n = len(self.keys)
        if n >= settings_schema.MAX_PAIRS:
            self._refuse(
                f"add_pair: the lab holds at most {settings_schema.MAX_PAIRS} key/value pairs"
            )
            return
        k = self._point(f"keys[{n}]", *key)
        v = self._point(f"values[{n}]", *value) if k is not None else None
        if v is None:
            return
        try:
            label = settings_schema.clean_label(label or f"key {n + 1}", where=f"labels[{n}]")
        except ValueError as exc:
            self._refuse(str(exc))
            return
        self._apply(
            {
                "keys": [list(p) for p in self.keys] + [k],
                "values": [list(p) for p in self.values] + [v],
                "mask": list(self.mask) + [True],
                "labels": list(self.labels) + [label],
                "query_position": n if self.query_position == n - 1 else self.query_position,
            }
        )

    def remove_pair(self, i: int) -> None:
        """Delete pair i (at least one pair always remains)."""
        i = self._index("remove_pair", i)
        if i is None:
            return
        n = len(self.keys)
        if n == 1:
            self._refuse(Phrase(N_("remove_pair: the lab needs at least one key/value pair")))
            return

        def drop(seq):
            return [x for k, x in enumerate(seq) if k != i]

        self._apply(
            {
                "keys": drop(self.keys),
                "values": drop(self.values),
                "mask": drop(self.mask),
                "labels": drop(self.labels),
                "query_position": min(self.query_position, n - 2),
            }
        )

    def permute_pairs(self, order) -> None:
        """Reorder the pairs: new pair i is old pair order[i] (keys, values, mask, labels)."""
        n = len(self.keys)
        try:
            order = [int(i) for i in plain(list(order))]
        except (TypeError, ValueError):
            order = None
        if order is None or sorted(order) != list(range(n)):
            self._refuse(f"permute_pairs: need a reordering of 0..{n - 1}")
            return
        self._apply(
            {
                name: [getattr(self, name)[i] for i in order]
                for name in ("keys", "values", "mask", "labels")
            }
        )

    def load_scenario(self, name: str, **settings) -> None:
        """Reset every control to scenario `name` (the backend choice is kept), then to
        `settings`, as one change: one pipeline run and one redraw (a lesson step's set-up).
        A refused setting sets `error` and changes nothing."""
        if name not in SCENARIOS:
            self._refuse(f"scenario: {str(name)[:40]!r} is not one of {', '.join(SCENARIOS)}")
            return
        if self._refused(settings):
            return
        self._apply(_scenario_settings(name) | {"backend": self.backend} | settings)

    # -------------------------------------------------------------------- analyses

    def run_audit(self) -> list:
        """The engine's audit on the current configuration (the last valid one).

        The torch comparison runs on the chosen torch device (the CPU when numpy is chosen)
        and is reported as not applicable, with the reason, when torch is not available. The null candidate is left out.
        """
        from engine.audit import run_audit

        s = self._shown
        inp = pipeline.inputs_for(s)
        device_backend = s.backend if s.backend != "numpy" else "torch-cpu"
        q_hi, k_hi = pipeline.lift(inp.query, inp.keys, s.d_k, s.seed)
        return run_audit(
            np.array(q_hi),  # writable copies of the shared, read-only lift (torch wraps them)
            np.array(k_hi),
            inp.values,
            mask=inp.legal,
            temperature=s.temperature,
            scale=s.scale,
            torch_check=True,  # when torch is missing the audit says why, rather than "not requested"
            torch_device=device_backend.split("-", 1)[1],
        )

    def diagnose(self):
        """The engine's four-cause diagnosis of the current route (the last valid one)."""
        from engine.diagnosis import diagnose

        s = self._shown
        inp = pipeline.inputs_for(s)
        return diagnose(
            inp.query,
            inp.keys,
            inp.values,
            mask=inp.legal,
            temperature=s.temperature,
            scale=s.scale,
            d_k=s.d_k,
            seed=s.seed,
            labels=inp.labels,
        )

    # -------------------------------------------------------------------- export / import

    def to_dict(self) -> dict[str, object]:
        """The configuration as JSON-ready data (`from_dict` reads it back)."""
        return {"format": settings_schema.FORMAT_TAG} | self.settings()

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False, allow_nan=False)

    def from_dict(self, data: Mapping) -> None:
        """Load a configuration, all or nothing. ValueError names the first bad field.

        Settings the data leaves out take the (imported) scenario's values.
        """
        if not isinstance(data, Mapping):
            raise Problem("import must be a JSON object, got {kind}", kind=type(data).__name__)
        given = settings_schema.check_config(data, FIELDS)
        target = self._target(given)
        try:
            computed = self._compute(target)
        except ValueError as exc:
            raise Problem("import refused: {reason}", reason=worded(exc)) from None
        self._apply(target, computed)

    def from_json(self, text: str | bytes) -> None:
        self.from_dict(settings_schema.load_json(text))

    def to_csv(self) -> str:
        from app.state.snapshot_csv import snapshot_csv

        return snapshot_csv(self.snapshot)

    def _target(self, given: Mapping[str, object]) -> dict[str, object]:
        """The scenario's settings overlaid with `given` (the default backend underneath)."""
        base = _scenario_settings(given.get("scenario", DEFAULT_SCENARIO))
        return base | {"backend": "numpy"} | dict(given)

    # -------------------------------------------------------------------- URL

    def query_params(self) -> dict[str, str]:
        """The settings that differ from the scenario's own, as URL text (booleans true/false)."""
        current = self.settings()
        defaults = _scenario_settings(self.scenario) | {"backend": "numpy"}
        defaults["scenario"] = DEFAULT_SCENARIO
        return settings_schema.format_query(current, defaults, FIELDS)

    def apply_query_params(self, params: Mapping[str, str]) -> list[str]:
        """Restore the lab from URL values. Returns a warning per value it could not use.

        Settings the URL leaves out take the scenario's values; an invalid value falls back to
        that default and is named. The state always ends valid.
        """
        given, warnings = settings_schema.parse_query(params, FIELDS)
        target = self._target(given)
        base = self._target({"scenario": target["scenario"]})
        self._reconcile(target, base, given, warnings)
        try:
            computed = self._compute(target)
        except ValueError as exc:
            warnings.append(f"{exc}; loading the {target['scenario']!r} scenario as it comes")
            target = base
            computed = None
        self._apply(target, computed)
        return warnings

    @staticmethod
    def _reconcile(target: dict, base: dict, given: Mapping, warnings: list[str]) -> None:
        """Make list lengths, the query position, the mask and the size caps agree."""
        n = len(target["keys"])
        if len(target["values"]) != n:
            warnings.append(
                f"keys has {n} pairs but values has {len(target['values'])}; "
                "using the scenario's keys and values"
            )
            for name in ("keys", "values", "mask", "labels"):
                target[name] = base[name]
            n = len(target["keys"])
        same_n = n == len(base["keys"])
        if len(target["mask"]) != n:
            if "mask" in given:
                warnings.append(f"mask has {len(target['mask'])} entries for {n} keys; ignored")
            target["mask"] = base["mask"] if same_n else [True] * n
        if len(target["labels"]) != n:
            if "labels" in given:
                warnings.append(f"labels has {len(target['labels'])} entries for {n} keys; ignored")
            target["labels"] = base["labels"] if same_n else default_labels(n)
        if target["query_position"] >= n:
            if "query_position" in given:
                warnings.append(
                    f"query_position: {target['query_position']} is past the last key; "
                    f"using {n - 1}"
                )
            target["query_position"] = n - 1
        legal = list(target["mask"])
        if target["causal"]:
            legal = [b and i <= target["query_position"] for i, b in enumerate(legal)]
        if not any(legal):
            # TRANSLATORS: a link's warning; {reason} says why the link's mask was not used.
            reason = Phrase(EVERY_KEY_MASKED)
            warnings.append(
                Phrase(N_("mask: {reason}; every key unmasked instead"), {"reason": reason})
            )
            target["mask"] = [True] * n
        total = n + target["distractors"] + 1
        if target["d_k"] * total > settings_schema.MAX_LIFT_ELEMENTS:
            warnings.append(
                f"d_k={target['d_k']} with {target['distractors']} distractors exceeds the "
                f"size limit; using {base['distractors']} distractors"
            )
            target["distractors"] = base["distractors"]
            if target["d_k"] * (n + target["distractors"] + 1) > settings_schema.MAX_LIFT_ELEMENTS:
                target["d_k"] = base["d_k"]
