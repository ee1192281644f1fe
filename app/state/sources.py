"""Which source draws the lab: the hand-made scenarios or a trained model's head.

No Panel or Bokeh import. Both sources produce the same `LabSnapshot`; this switch holds one of
each (the model's only once it is first asked for, so a page that never opens a model pays
nothing for it) and presents the active one's snapshot and URL text to the page. A link that
names `model=` opens the model source; any other link is the scenarios' own.
"""

from __future__ import annotations

from collections.abc import Mapping

import param

from app.state.lab_state import FIELDS, LabState
from app.state.settings_schema import parse_query

SCENARIOS = "scenarios"
MODEL = "model"


class SourceSwitch(param.Parameterized):
    source = param.Selector(default=SCENARIOS, objects=[SCENARIOS, MODEL])
    snapshot = param.Parameter(default=None, constant=True, doc="the active source's snapshot")
    error = param.String(default="", constant=True, doc="the active source's refusal, if any")
    loading = param.String(
        default="", constant=True, doc="the model the shown model source waits for, if any"
    )
    load_fraction = param.Number(default=0.0, constant=True, doc="how far `loading` is")
    computing = param.String(
        default="", constant=True, doc="what the shown model source is still computing, if any"
    )

    def __init__(self, lab: LabState, **params):
        super().__init__(**params)
        self.lab = lab
        self._model = None
        # The page's hand-over to its session's thread, given to the model source when it is
        # made: its forwards then run off that thread (ModelState.request). None: at once.
        self.deliver = None
        lab.param.watch(self._follow, ["snapshot", "error"])
        self.param.watch(self._follow, "source")
        self._follow()

    @property
    def model(self):
        """The trained-model source, created on first use."""
        if self._model is None:
            from app.state.model_state import ModelState

            self._model = ModelState(handover=self.lab.handover)  # the session's one hand-over
            if self.deliver is not None:  # a hand-over of the model's own (the page's, until it
                self._model.deliver = self.deliver  # points the lab's `handover` at its thread)
            self._model.param.watch(self._follow, ["snapshot", "error"])
            self._model.param.watch(self._follow_loading, ["loading", "load_fraction", "running"])
        return self._model

    @property
    def model_ready(self) -> bool:
        return self._model is not None

    @property
    def active(self):
        return self.model if self.source == MODEL else self.lab

    def _follow(self, *events) -> None:
        active = self.active
        with param.edit_constant(self):
            self.param.update(snapshot=active.snapshot, error=active.error)
        self._follow_loading()

    def _follow_loading(self, *events) -> None:
        """While the model source is shown and waits for a model, its snapshot is another
        model's: the page says which model is coming and how far it is. While it computes the
        runs of a newer request, the page says so (`computing`)."""
        shown = self._model is not None and self.source == MODEL
        loading = self._model.loading if shown else ""
        fraction = self._model.load_fraction if loading else 0.0
        computing = self._model.running if shown else ""
        with param.edit_constant(self):
            self.param.update(loading=loading, load_fraction=fraction, computing=computing)

    def query_params(self) -> dict[str, str]:
        return self.active.query_params()

    def apply_query_params(self, params: Mapping[str, str]) -> list[str]:
        if "model" in params:
            from app.state.model_state import URL_KEYS

            # A hand-made setting in a model link is not the model's: it is checked against
            # its own limits (a bad value is named as such) and said to be unused.
            hand_made = {k: v for k, v in params.items() if k in FIELDS and k not in URL_KEYS}
            unknown = _model_problem(params["model"])
            if unknown:
                # A model the lab cannot open: say so and leave the page where it was (it once
                # opened the default model and its first lesson step instead).
                warnings = [f"{unknown}; the page stays as it was"]
            else:
                warnings = self.model.apply_query_params(
                    {k: v for k, v in params.items() if k not in hand_made}
                )
            _, problems = parse_query(hand_made, FIELDS)
            bad = {problem.split(":", 1)[0] for problem in problems}
            unused = "a model link ignores this hand-made-vectors setting"
            warnings += [f"{p.removesuffix('; using the default')}; {unused}" for p in problems]
            warnings += [
                f"{key} is a hand-made-vectors setting; a model link ignores it"
                for key in hand_made
                if key not in bad
            ]
            if not unknown:
                self.source = MODEL
            return warnings
        self.source = SCENARIOS
        return self.lab.apply_query_params(params)


def _model_problem(name: str) -> str:
    """Why a link's ``model=name`` cannot be opened ("" when it can), in ModelState's words."""
    from app.state.model_state import model_choices

    known = {entry[0]: entry for entry in model_choices()}
    if name not in known:
        return f"model: {name[:40]!r} is not one of {', '.join(known)}"
    if not known[name][2]:
        return f"model: {name} is not installed ({known[name][3]})"
    return ""
