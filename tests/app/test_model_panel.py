"""The trained-model controls and their state (app/views/model_panel.py): each control's change
reaches the state once, the state's redraw of the controls is never sent back, and the sliders
offer only values the state accepts."""

from __future__ import annotations

import pytest

from app.state.model_state import ModelState
from app.views.model_panel import HEAD_TEMPERATURE_SLIDER, ModelPanel


@pytest.fixture
def panel_and_requests(monkeypatch):
    """A panel on the binding model, and every request its controls made of the state."""
    mstate = ModelState()
    requests = []
    request = mstate.request

    def counted(**settings):
        requests.append(settings)
        return request(**settings)

    monkeypatch.setattr(mstate, "request", counted)
    return ModelPanel(mstate), requests


def test_the_head_temperature_slider_offers_only_values_the_state_accepts():
    low, high = ModelState.param.head_temperature.bounds
    panel = ModelPanel(ModelState())
    assert (panel.temperature.start, panel.temperature.end) == HEAD_TEMPERATURE_SLIDER
    assert low <= panel.temperature.start < panel.temperature.end <= high
    assert ModelState.param.rotate.bounds == (panel.rotate.start, panel.rotate.end)


def test_a_control_change_reaches_the_state_once(panel_and_requests):
    panel, requests = panel_and_requests
    mstate = panel.mstate
    panel.temperature.value = 2.0
    panel.masked.value = [1, 0]
    layer = 1 - mstate.layer
    panel.layer.value = layer
    assert requests == [{"head_temperature": 2.0}, {"masked": [0, 1]}, {"layer": layer}]
    assert (mstate.head_temperature, mstate.masked, mstate.layer) == (2.0, [0, 1], layer)


def test_the_states_redraw_of_the_controls_is_not_sent_back(panel_and_requests):
    panel, requests = panel_and_requests
    mstate = panel.mstate
    text = next(t for t in mstate.loaded.examples.values() if t != mstate.text)
    assert mstate.try_update(text=text, head_temperature=3.0, rotate=45.0)
    assert (panel.text.value, panel.temperature.value, panel.rotate.value) == (text, 3.0, 45.0)
    assert panel.example.value == text
    assert requests == []


def test_a_refused_text_stays_in_its_box_and_the_rest_shows_the_state(panel_and_requests):
    panel, requests = panel_and_requests
    mstate = panel.mstate
    shown = mstate.text
    panel.text.value = "not a program"
    assert requests == [{"text": "not a program"}]
    assert mstate.error and mstate.text == shown
    assert panel.text.value == "not a program"  # kept for editing
    panel.rotate.value = 30.0  # the next valid change brings the box back to the state's text
    assert mstate.error == "" and panel.text.value == shown


def test_a_head_picked_among_those_found_opens_it(panel_and_requests):
    panel, requests = panel_and_requests
    panel.finder.value = "sharpest"
    choices = [v for v in panel.found.options.values() if v]
    assert choices and panel.found.value == ""  # listing the heads opened none
    layer, head = (int(x) for x in choices[-1].split("."))
    panel.found.value = choices[-1]
    assert requests == [{"layer": layer, "head": head}]
    assert (panel.mstate.layer, panel.mstate.head) == (layer, head)
    assert panel.found.value == ""  # the list is made again for the head opened
