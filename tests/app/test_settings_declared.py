"""Every setting is declared once (app/state/settings_schema.py), and what is made from that
declaration agrees with it: the state's parameter has the field's bounds, the widget offers no
wider range, the page shows the field's label and lists its control where the field says."""

from __future__ import annotations

import dataclasses
import typing

import panel as pn
import param
import pytest

from app.page import lab_page
from app.state import settings_schema
from app.state.lab_state import LabState
from app.state.model_state import ModelState
from app.state.pipeline import Settings
from app.state.setting_params import ListSetting
from app.state.settings_schema import FIELDS, FIRST_SCREEN, MORE_SETTINGS, Field
from app.views.controls import CandidateControls, ControlsPanel
from app.views.head_grid import HeadGridView
from app.views.model_panel import ModelPanel

MODEL_FIELDS = settings_schema.make_model_fields(())
# A slider that holds another scale than its setting's: its ends, mapped back to the setting's.
SCALES = {"temperature": lambda x: 10**x, "d_k": lambda x: 2**x}
# What each kind of setting is as a parameter.
PARAMETER_KINDS = {
    "float": param.Number,
    "int": param.Integer,
    "bool": param.Boolean,
    "text": param.String,
    "positions": param.List,
    "heads": param.List,
}


def _check_parameter(parameter: param.Parameter, field: Field) -> None:
    if field.kind in ("float", "int"):
        assert type(parameter) is PARAMETER_KINDS[field.kind], field.name
        assert tuple(parameter.bounds) == field.bounds, field.name
    elif field.kind == "choice" and field.choices:
        assert list(parameter.objects) == list(field.choices), field.name
    elif field.kind == "choice":  # the models: known once loaded
        assert type(parameter) is param.String, field.name
    elif field.kind in PARAMETER_KINDS:
        assert isinstance(parameter, PARAMETER_KINDS[field.kind]), field.name
    else:  # pairs, bools, labels: checked as an import is
        assert isinstance(parameter, ListSetting) and parameter.field == field, field.name


@pytest.mark.parametrize("name", list(FIELDS))
def test_the_labs_parameters_are_their_declarations(name):
    _check_parameter(LabState.param[name], FIELDS[name])


@pytest.mark.parametrize("name", list(MODEL_FIELDS))
def test_a_models_parameters_are_their_declarations(name):
    _check_parameter(ModelState.param[name], MODEL_FIELDS[name])
    assert name in ModelState.INPUTS


def test_the_pipelines_key_has_one_field_per_setting_in_url_order():
    hints = typing.get_type_hints(Settings)
    assert [f.name for f in dataclasses.fields(Settings)] == list(FIELDS)
    scalar = {"float": float, "int": int, "bool": bool, "choice": str}
    for name, field in FIELDS.items():
        if field.kind in scalar:
            assert hints[name] is scalar[field.kind], name
    plain = LabState().settings()
    key = Settings.of(plain | {"temperature": 1, "keys": [tuple(p) for p in plain["keys"]]})
    assert key == Settings.of(plain) and hash(key) == hash(Settings.of(plain))
    assert key.as_dict() == plain


def _offered(widget, name: str) -> tuple[float, float]:
    """The widest range a widget lets a student give (typed or slid), in the setting's units."""
    low = getattr(widget, "fixed_start", None)
    high = getattr(widget, "fixed_end", None)
    low = widget.start if low is None else low
    high = widget.end if high is None else high
    to_setting = SCALES.get(name, lambda x: x)
    return to_setting(low), to_setting(high)


def _lab_widgets():
    state = LabState()
    first = ControlsPanel(state, scenario_titles={n: n for n in FIELDS["scenario"].choices})
    more = CandidateControls(state, backend_notes={})
    return {FIRST_SCREEN: first, MORE_SETTINGS: more}


@pytest.mark.parametrize("group", [FIRST_SCREEN, MORE_SETTINGS])
def test_each_control_shows_its_label_and_offers_no_wider_range(group):
    panel = _lab_widgets()[group]
    controls = settings_schema.controls_in(group)
    assert controls, group
    for name, field in controls.items():
        widget = getattr(panel, name)
        assert widget.label == field.label, name
        if field.kind in ("float", "int"):
            low, high = _offered(widget, name)
            assert low >= field.low - 1e-9 and high <= field.high * (1 + 1e-9), (name, low, high)
        if field.kind == "choice":
            assert set(widget.values) <= set(field.choices), name


def test_an_editable_slider_types_the_whole_declared_range():
    """The box beside a slider takes every value the setting takes (the slider may be
    narrower): the distractor norm's box began at 0.0, which the state refused."""
    more = _lab_widgets()[MORE_SETTINGS]
    for name in ("distractors", "distractor_norm", "distractor_similarity", "null_threshold"):
        widget = getattr(more, name)
        assert (widget.fixed_start, widget.fixed_end) == FIELDS[name].bounds, name
        assert FIELDS[name].low <= widget.start < widget.end <= FIELDS[name].high, name


def test_the_pages_lists_come_from_the_declarations():
    more = settings_schema.controls_in(MORE_SETTINGS)
    assert set(lab_page.CANDIDATE_SETTINGS) == set(more) - {"query_position"}
    labels = {field.short_label for field in more.values()}
    assert labels <= lab_page.MORE_SETTINGS_NAMES
    assert "Distractor norm" in labels and "Temperature τ" not in labels
    first = {field.short_label for field in settings_schema.controls_in(FIRST_SCREEN).values()}
    assert not first & lab_page.MORE_SETTINGS_NAMES


def test_every_setting_has_a_place_and_a_labelled_setting_a_unique_label():
    for fields in (FIELDS, MODEL_FIELDS):
        assert all(f.group for f in fields.values())
        labels = [f.label for f in fields.values() if f.label]
        assert len(labels) == len(set(labels))


def test_a_models_controls_show_their_labels_and_offer_no_wider_range():
    panel = ModelPanel(ModelState())
    widgets = {name: getattr(panel, name, None) for name in MODEL_FIELDS}
    widgets["head_temperature"] = panel.temperature
    widgets["query"] = panel.query.slider
    widgets["find"] = HeadGridView(panel.mstate).scores.control  # the head grid's own
    for name, field in MODEL_FIELDS.items():
        widget = widgets[name]
        assert isinstance(widget, pn.widgets.Widget), name
        assert widget.label == field.label, name
        if field.kind == "float":
            assert field.low <= widget.start < widget.end <= field.high, name
    assert panel.text.max_length <= MODEL_FIELDS["text"].high
    assert set(panel.backend.values) <= set(MODEL_FIELDS["backend"].choices)
