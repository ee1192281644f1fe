"""What a map of every head costs, in words (app/state/map_cost.py): pure, no clock."""

from __future__ import annotations

import math

import pytest

from app.state.map_cost import (
    PACE_FROM,
    MapCost,
    duration,
    price_words,
    running_words,
    time_left,
)
from engine import trained
from engine.trained import causal


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (0.0, "under a second"),
        (0.4, "under a second"),
        (1.2, "about 1 s"),
        (12.4, "about 12 s"),
        (59.4, "about 59 s"),
        (60.0, "about 1 min"),
        (272.0, "about 4 min 30 s"),
        (595.0, "about 10 min"),
        (1730.0, "about 29 min"),
    ],
)
def test_a_duration_in_a_students_words(seconds, words):
    assert duration(seconds) == words


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_a_duration_must_be_a_time(bad):
    with pytest.raises(ValueError, match="finite number of seconds"):
        duration(bad)


def test_the_price_is_the_forwards_times_one_forward():
    # The 441-token text: 139.5 forwards of 1.95 s each (the 272 s measured in Chromium).
    cost = MapCost(causal.map_forwards(trained.load("smollm2-135m")), 1.95)
    assert cost.forwards == 139.5 and cost.seconds == pytest.approx(272.0, abs=0.1)
    said = price_words(cost, 270)
    assert "each of the 270 heads" in said and "about 140 runs of the model" in said
    assert "one took 1.9 s here" in said or "one took 2.0 s here" in said
    assert "about 4 min 30 s" in said and "you can stop at any time" in said


def test_a_short_map_is_priced_without_a_warning_and_an_unmeasured_one_without_a_time():
    binding = MapCost(causal.map_forwards(trained.load("binding")), 0.004)
    assert binding.forwards == 3.0
    said = price_words(binding, 4)
    assert "under a second" in said and "stop" not in said and "one took" not in said
    unknown = price_words(MapCost(139.5, None), 270)
    assert unknown.endswith("about 140 runs of the model on this text.")


def test_the_time_left_follows_the_price_then_the_maps_own_pace():
    # Before the map has done PACE_FROM of its work: the price less the time spent.
    assert time_left(10.0, 0.0, 272.0) == pytest.approx(262.0)
    assert time_left(300.0, 0.01, 272.0) == 0.0  # late: never below zero
    assert time_left(5.0, 0.0, None) is None
    # Then its own pace: a tenth done in 50 s leaves 450 s, whatever the price said.
    assert time_left(50.0, 0.1, 272.0) == pytest.approx(450.0)
    assert time_left(50.0, 0.1, None) == pytest.approx(450.0)
    assert time_left(1.0, PACE_FROM, 999.0) == pytest.approx((1 - PACE_FROM) / PACE_FROM)


def test_the_note_while_a_map_runs():
    said = running_words("causal", 0.35, 170.0)
    assert said.startswith("Measuring every head (causal): 35% done, about 2 min 50 s left.")
    assert "Stop" in said
    assert "left" not in running_words("patching", 0.0, None)


def test_a_cached_map_is_priced_at_what_reading_it_takes():
    """Issue 40: a map already measured was priced at its forwards (about 4 min) and came in
    1.6 s: the price says it is cached and how long it takes then."""
    cached = MapCost(139.5, 1.95, cached_s=1.6)
    assert cached.seconds == 1.6
    said = price_words(cached, 270)
    assert "measured already (the map is cached)" in said and "about 2 s" in said
    assert "min" not in said and "runs of the model" not in said


def test_the_tab_knows_when_the_engine_has_the_map():
    from app.state.causal_state import CausalState
    from app.state.model_state import ModelState

    m = ModelState(text="a=5; b=7; a=3; ?a")
    c = CausalState(m)
    assert c.settle(60)
    causal.clear_cache(m.loaded)
    assert c.cost().cached_s is None  # nothing measured: priced in forwards
    c.measure()
    assert c.settle(60) and c.causal is not None
    cost = c.cost()
    assert cost.cached_s is not None and cost.seconds == cost.cached_s < 60
    assert "measured already" in price_words(cost, 4)
