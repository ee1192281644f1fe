"""The control column: every LabState setting as a keyboard-reachable widget.

Most widgets come from `Widget.from_param`, so Panel keeps widget and state in step both ways.
Two need a mapping in between: temperature moves on a log scale, and d_k steps through powers of
two (while still showing any whole number that arrived from a link or an import).

Each widget's label and range come from its setting's declaration (`settings_schema.FIELDS`); a
slider may offer a narrower teaching range, never a wider one (tests/app/test_settings_declared.py).
"""

from __future__ import annotations

import math

import panel as pn
import param
from babel.numbers import get_decimal_symbol
from bokeh.models import CustomJSTickFormatter

from app import js
from app.i18n.markers import N_
from app.i18n.translator import ENGLISH, Translator
from app.patches.panel_events import respond_at_once, widgets_of
from app.patches.panel_links import forget_js_callbacks
from app.state.lab_state import LabState
from app.state.settings_schema import FIELDS
from app.views.headings import group_heading
from app.views.two_way import TwoWay

# The sidebar's group headings.
ROUTE, REGIME, CANDIDATES, ENGINE = N_("Route"), N_("Regime"), N_("Candidates"), N_("Engine")
# TRANSLATORS: the box beside the temperature slider where the value is typed.
TYPE_IT = N_("τ (type it)")
# The sliders' value readouts: the two log-scale ones, and a decimal one with the page's decimal
# sign (app/js/slider_ticks.js).
_TICKS = js.sections("slider_ticks.js")


class ControlsPanel(pn.viewable.Viewer):
    """The first settings, grouped the way the lessons use them: the route and the regime (the
    candidates and the engine are in CandidateControls)."""

    state = param.ClassSelector(class_=LabState, constant=True, doc="the lab they set")

    def __init__(self, state, *, scenario_titles: dict, tr: Translator = ENGLISH, **params):
        super().__init__(state=state, **params)
        p, self._ = state.param, tr.gettext
        _ = self._
        self.scenario = pn.widgets.Select.from_param(
            p.scenario,
            name=_(FIELDS["scenario"].label),
            options={_(t): n for n, t in scenario_titles.items()},
            sizing_mode="stretch_width",
        )
        self.reset = pn.widgets.Button(
            label=_("Reset this scenario"), color="light", sizing_mode="stretch_width"
        )
        self.reset.on_click(lambda _event: state.load_scenario(state.scenario))
        self.angle = pn.widgets.FloatSlider.from_param(
            p.angle,
            name=_(FIELDS["angle"].label),
            start=FIELDS["angle"].low,
            end=FIELDS["angle"].high,
            step=1,
            sizing_mode="stretch_width",
            **decimal_readout(tr),
        )
        low, high = (math.log10(x) for x in FIELDS["temperature"].bounds)
        self.temperature = pn.widgets.FloatSlider(
            label=_(FIELDS["temperature"].label),
            start=low,
            end=high,
            step=0.005,
            value=math.log10(state.temperature),
            sizing_mode="stretch_width",
            format=readout("temperature", tr),
        )
        # The same temperature typed: 0.25 took 120 key presses on the slider. No bounds of its
        # own: the state checks a typed value like any other (and refuses 0 or less).
        self.temperature_entry = pn.widgets.FloatInput(
            label=_(TYPE_IT),
            value=state.temperature,
            step=0.05,
            format="0[.]00[0]",
            width=105,
        )
        self._links = [
            TwoWay(
                state,
                "temperature",
                self.temperature,
                to_widget=math.log10,
                to_state=lambda v: float(f"{10**v:.4g}"),
            ),
            TwoWay(state, "temperature", self.temperature_entry),
        ]
        # d_k moves in powers of two (the slider holds log2 d_k); a whole number that is not a
        # power of two (from a link or an import) still shows exactly.
        self.d_k = pn.widgets.FloatSlider(
            label=_(FIELDS["d_k"].label),
            start=math.log2(FIELDS["d_k"].low),
            end=math.log2(FIELDS["d_k"].high),
            step=1,
            value=math.log2(state.d_k),
            sizing_mode="stretch_width",
            format=CustomJSTickFormatter(code=_TICKS["d_k"]),
        )
        self._links.append(
            TwoWay(
                state,
                "d_k",
                self.d_k,
                # Live while the handle moves: Panel merges the changes that arrive while the
                # server computes, so a busy server skips to the latest d_k, never queues.
                event="value",
                to_widget=math.log2,
                to_state=lambda v: int(round(2**v)),
            )
        )
        self.scale = pn.widgets.Checkbox.from_param(p.scale, name=_(FIELDS["scale"].label))
        self.normalise = pn.widgets.Checkbox.from_param(
            p.normalise, name=_(FIELDS["normalise"].label)
        )
        respond_at_once(*widgets_of(self))

    def __panel__(self):
        return pn.Column(
            self.scenario,
            self.reset,
            heading(self._(ROUTE)),
            self.angle,
            self.normalise,
            heading(self._(REGIME)),
            pn.Row(self.temperature, self.temperature_entry, sizing_mode="stretch_width"),
            self.d_k,
            self.scale,
            sizing_mode="stretch_width",
            css_classes=["lab-controls"],
        )


class CandidateControls(pn.viewable.Viewer):
    """The rest of the settings: which keys compete (causal order, distractors, the null route)
    and the engine. Built when the sidebar's "More settings" is first opened."""

    state = param.ClassSelector(class_=LabState, constant=True, doc="the lab they set")

    def __init__(
        self,
        state,
        *,
        backend_notes: dict[str, str],
        unchecked: tuple[str, ...] = (),
        tr: Translator = ENGLISH,
        **params,
    ):
        super().__init__(state=state, **params)
        p, _ = state.param, tr.gettext
        self._headings = (_(CANDIDATES), _(ENGINE))
        self.causal = pn.widgets.Checkbox.from_param(p.causal, name=_(FIELDS["causal"].label))
        self.query_position = pn.widgets.IntSlider.from_param(
            p.query_position,
            name=_(FIELDS["query_position"].label),
            start=FIELDS["query_position"].low,
            end=max(1, len(state.keys) - 1),  # the pairs there are (_pairs_changed)
            sizing_mode="stretch_width",
        )
        # live while dragging (see d_k above: changes merge, never queue)
        self.distractors = editable_slider(p, "distractors", tr, step=1, throttled=False)
        # From 0.05, not the declared 0.01, so that the slider's steps are round numbers (a
        # smaller norm can still be typed).
        self.distractor_norm = editable_slider(
            p, "distractor_norm", tr, start=0.05, end=5.0, step=0.05, throttled=False
        )
        self.distractor_similarity = editable_slider(
            p, "distractor_similarity", tr, step=0.05, throttled=False
        )
        self.null_route = pn.widgets.Checkbox.from_param(
            p.null_route, name=_(FIELDS["null_route"].label)
        )
        self.null_threshold = editable_slider(
            p, "null_threshold", tr, start=-5.0, end=5.0, step=0.1, throttled=True
        )
        self.seed = pn.widgets.IntInput.from_param(
            p.seed,
            name=_(FIELDS["seed"].label),
            start=FIELDS["seed"].low,
            end=FIELDS["seed"].high,
            sizing_mode="stretch_width",
        )
        # Unavailable backends stay selectable (a link or an import may name one): the state
        # then runs numpy and says so. Their option text carries the warning up front.
        self.backend = pn.widgets.Select.from_param(
            p.backend,
            name=_(FIELDS["backend"].label),
            options={
                backend_text(name, backend_notes, unchecked, tr): name for name in p.backend.objects
            },
            sizing_mode="stretch_width",
        )
        notes = backend_notes_text(backend_notes, unchecked, tr)
        self.backend_note = pn.pane.Markdown(
            "  \n".join(notes),
            visible=bool(notes),
            css_classes=["lab-note"],
            sizing_mode="stretch_width",
        )
        respond_at_once(*widgets_of(self))

    def release(self) -> None:
        """Forget the browser-side links Panel registered for this panel's editable sliders.

        Panel 1.9 files each editable slider's JS callback in a process-wide registry keyed by
        the slider's text box, and the callback leads back to that box, so the entry never
        expires: without this, every closed page stayed in memory (about 2 MB each). Call it
        when the session ends; the page no longer exists in any browser by then.
        """
        editable = (pn.widgets.EditableIntSlider, pn.widgets.EditableFloatSlider)
        for widget in widgets_of(self):
            if isinstance(widget, editable):
                forget_js_callbacks(widget)  # app/patches/panel_links.py

    @param.depends("state.keys", watch=True)
    def _pairs_changed(self) -> None:
        end = max(1, len(self.state.keys) - 1)  # a slider needs start < end
        if self.query_position.end != end:
            self.query_position.end = end

    def __panel__(self):
        return pn.Column(
            heading(self._headings[0]),
            self.causal,
            self.query_position,
            self.distractors,
            self.distractor_norm,
            self.distractor_similarity,
            self.null_route,
            self.null_threshold,
            heading(self._headings[1]),
            self.seed,
            self.backend,
            self.backend_note,
            sizing_mode="stretch_width",
            css_classes=["lab-controls"],
        )


def editable_slider(p, name: str, tr: Translator = ENGLISH, *, start=None, end=None, **kw):
    """Setting `name`'s slider with a box to type in: the box takes the declared range, the
    slider that range or a narrower teaching one (`start`, `end`)."""
    field = FIELDS[name]
    kind = pn.widgets.EditableIntSlider if field.kind == "int" else pn.widgets.EditableFloatSlider
    return kind.from_param(
        p[name],
        name=tr.gettext(field.label),
        start=field.low if start is None else start,
        end=field.high if end is None else end,
        fixed_start=field.low,
        fixed_end=field.high,
        sizing_mode="stretch_width",
        **kw,
    )


def readout(script: str, tr: Translator = ENGLISH) -> CustomJSTickFormatter:
    """A slider's value readout (a script of app/js/slider_ticks.js) written with the page's
    decimal sign: 0,25 in Spanish."""
    return CustomJSTickFormatter(
        code=_TICKS[script], args={"sign": get_decimal_symbol(tr.language.numbers)}
    )


def decimal_readout(tr: Translator = ENGLISH) -> dict:
    """A slider's `format` that writes its value with the page's decimal sign; none (Bokeh's
    own readout, as before) where that sign is a point."""
    if get_decimal_symbol(tr.language.numbers) == ".":
        return {}
    return {"format": readout("decimal", tr)}


def heading(text: str):
    return group_heading(text)


def backend_text(
    name: str, notes: dict[str, str], unchecked: tuple[str, ...], tr: Translator = ENGLISH
) -> str:
    """A backend's option in the picker, its warning up front in the page's language."""
    _ = tr.gettext
    if notes.get(name):
        # TRANSLATORS: an option of the backend picker; {backend} is a name such as torch-cpu.
        return _("{backend} (not available here)").format(backend=name)
    if name in unchecked:
        # TRANSLATORS: an option of the backend picker: the device is looked for when picked.
        return _("{backend} (checked when picked)").format(backend=name)
    return name


def backend_notes_text(
    notes: dict[str, str], unchecked: tuple[str, ...], tr: Translator = ENGLISH
) -> list[str]:
    """The lines under the backend picker: why a backend is unavailable (`notes`: the reason,
    as the state words it), and which ones are checked only once picked."""
    _ = tr.gettext
    # TRANSLATORS: under the backend picker; {reason} is why (e.g. torch is not installed).
    lines = [
        _("**{backend}** is not available here: {reason}").format(backend=name, reason=note)
        for name, note in notes.items()
        if note
    ]
    # Checking a GPU means importing torch (~180 MB per server process); the lab does that
    # only once someone picks it, and says so here.
    lines += [
        _(
            "**{backend}** is checked when picked: without that device the lab runs numpy and "
            "says so."
        ).format(backend=name)
        for name in unchecked
        if not notes.get(name)
    ]
    return lines
