"""The links between widgets and a state's settings (app/views/two_way.py): both ways, mapped,
refusals shown, and no echo."""

from __future__ import annotations

import math

import panel as pn
import param

from app.views.two_way import Echo, Sent, TwoWay


class Settings(param.Parameterized):
    """A state as the links see it: `try_update` refuses what the bounds refuse."""

    level = param.Number(default=1.0, bounds=(0.01, 100.0))
    sent = param.Integer(default=0, doc="how many updates reached the state")

    def try_update(self, **settings) -> bool:
        self.sent += 1
        try:
            self.param.update(**settings)
        except ValueError:
            return False
        return True


def test_a_widget_change_reaches_the_state_through_the_mapping():
    state, slider = Settings(), pn.widgets.FloatSlider(start=-2, end=2, value=0.0)
    TwoWay(state, "level", slider, to_widget=math.log10, to_state=lambda v: 10**v)
    slider.value = 1.0
    assert state.level == 10.0
    assert state.sent == 1  # the state's change did not come back as a second update


def test_a_state_change_reaches_the_widget_without_echo():
    state, slider = Settings(), pn.widgets.FloatSlider(start=-2, end=2, value=0.0)
    TwoWay(state, "level", slider, to_widget=math.log10, to_state=lambda v: 10**v)
    state.level = 100.0
    assert slider.value == 2.0
    assert state.sent == 0  # written by the link: not sent back as a student's change


def test_a_refused_value_leaves_the_widget_on_the_value_kept():
    state, box = Settings(), pn.widgets.FloatInput(value=1.0)
    TwoWay(state, "level", box)
    box.value = -5.0
    assert state.level == 1.0
    assert box.value == 1.0


def test_an_emptied_widget_sends_nothing():
    state, box = Settings(), pn.widgets.FloatInput(value=1.0)
    TwoWay(state, "level", box)
    box.value = None
    assert state.sent == 0


def test_links_sharing_an_echo_stay_quiet_while_the_view_writes():
    echo, got = Echo(), []
    a, b = pn.widgets.TextInput(), pn.widgets.TextInput()
    Sent(a, "a", lambda **s: got.append(s), echo=echo, to_state=str.strip)
    Sent(b, "b", lambda **s: got.append(s), echo=echo)
    with echo.writing():
        a.value, b.value = "drawn", "drawn"
        with echo.writing():  # a write inside a write
            pass
        b.value = "still drawn"
    assert got == []
    a.value = " typed "
    assert got == [{"a": "typed"}]
    assert not echo.active
