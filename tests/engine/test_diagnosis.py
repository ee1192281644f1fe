"""Diagnosis: each cause is tested by its own perturbation and the numbers are the measured ones."""

import re

import numpy as np
import pytest

from engine import attention, interventions
from engine.diagnosis import CAUSES, MEANINGFUL_DROP, Finding, SharpnessReport, diagnose
from engine.dimension import lift
from engine.scenarios import SCENARIOS

BASIC = SCENARIOS["basic"]
SHARP = SCENARIOS["sharp"]


def report_for(s, **kw):
    args = dict(mask=s.legal_mask(), temperature=s.temperature, scale=s.scale, d_k=s.d_k) | kw
    return diagnose(s.query, s.keys, s.values, **args)


def test_report_shape_and_headline_numbers():
    r = report_for(SHARP)
    assert isinstance(r, SharpnessReport)
    assert [f.cause for f in r.findings] == list(CAUSES)
    assert all(isinstance(f, Finding) and f.note and f.perturbation for f in r.findings)
    w = attention(SHARP.query, SHARP.keys, SHARP.values, scale=False, temperature=0.5).weights
    assert r.winner == int(np.argmax(w)) and r.max_weight == pytest.approx(w.max())
    assert r.entropy == pytest.approx(float(-(w * np.log(w)).sum()))
    assert r.finding("key_norm") is r.findings[1]
    assert f"{r.max_weight:.3f}" in r.summary and "key_norm" in r.summary
    with pytest.raises(ValueError, match="unknown cause 'mood'"):
        r.finding("mood")


def test_sharp_scenario_blames_norm_and_temperature():
    r = report_for(SHARP)
    assert r.max_weight > 0.95
    assert set(r.implicated) >= {"key_norm", "temperature"}
    assert "dimension_scale" not in r.implicated
    norm = r.finding("key_norm")
    unit = attention(
        interventions.normalise(SHARP.query),
        interventions.normalise(SHARP.keys),
        SHARP.values,
        scale=False,
        temperature=0.5,
    ).weights
    assert norm.after == pytest.approx(unit.max()) and norm.before == pytest.approx(r.max_weight)
    assert f"{norm.before:.3f} -> {norm.after:.3f}" in norm.note
    temp = r.finding("temperature")
    hot = attention(SHARP.query, SHARP.keys, SHARP.values, scale=False, temperature=2.0).weights
    assert temp.after == pytest.approx(hot.max()) and "same ranking" in temp.note


def test_unit_geometry_clears_key_norm():
    f = report_for(BASIC).finding("key_norm")
    assert not f.implicated and f.before == pytest.approx(f.after)


def test_zero_key_survives_normalisation():
    keys = np.array([[2.0, 0.0], [0.0, 0.0], [0.0, 1.0]])
    f = diagnose([1.0, 0.0], keys, np.eye(3)[:, :2]).finding("key_norm")
    assert np.isfinite(f.after)


def test_dimension_is_implicated_only_without_scaling():
    unscaled = report_for(BASIC, scale=False, d_k=256).finding("dimension_scale")
    q, k = lift(BASIC.query, BASIC.keys, 256, seed=0)
    lifted = attention(q, k, BASIC.values, scale=False).weights
    assert unscaled.before == pytest.approx(lifted.max()) and unscaled.before > 0.9
    assert unscaled.implicated and unscaled.before - unscaled.after >= MEANINGFUL_DROP
    assert "With 1/sqrt(d_k) scaling at d_k=256" in unscaled.note
    scaled = report_for(BASIC, scale=True, d_k=256).finding("dimension_scale")
    assert not scaled.implicated and "already cancels" in scaled.note
    flat = report_for(BASIC).finding("dimension_scale")
    assert not flat.implicated and "no hidden dimensions" in flat.note


def test_temperature_implicated_only_when_low():
    cold = report_for(BASIC, temperature=0.1).finding("temperature")
    assert cold.implicated and cold.before > cold.after + MEANINGFUL_DROP
    neutral = report_for(SHARP, temperature=1.0).finding("temperature")
    assert neutral.before - neutral.after >= MEANINGFUL_DROP and not neutral.implicated
    assert "temperature-sensitive" in neutral.note


def test_alignment_follows_the_query_unless_a_bias_pins_the_winner():
    free = report_for(BASIC).finding("alignment")
    assert free.implicated and "Direction picks the winner" in free.note
    pinned = diagnose(BASIC.query, BASIC.keys, BASIC.values, mask=np.array([0.0, 0.0, 6.0]))
    f = pinned.finding("alignment")
    assert pinned.winner == 2 and not f.implicated and "Inspect key norms" in f.note
    assert f.after > 0.9


def test_mask_forcing_a_single_key():
    r = diagnose(BASIC.query, BASIC.keys, BASIC.values, mask=np.array([False, False, True]))
    assert r.winner == 2 and r.max_weight == 1.0
    assert r.implicated == []


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_scenario_can_be_diagnosed(name):
    r = report_for(SCENARIOS[name], d_k=16)
    assert 0 < r.max_weight <= 1 and len(r.findings) == 4


def test_errors():
    with pytest.raises(ValueError, match="diagnose expects one query"):
        diagnose(np.ones((2, 2)), BASIC.keys, BASIC.values)
    with pytest.raises(ValueError, match="diagnose expects one query"):
        diagnose([1.0], [[1.0]], [[1.0]])
    with pytest.raises(ValueError, match="d_k must be between 2"):
        diagnose(BASIC.query, BASIC.keys, BASIC.values, d_k=1)
    with pytest.raises(ValueError, match="temperature"):
        diagnose(BASIC.query, BASIC.keys, BASIC.values, temperature=0.0)


def test_notes_name_keys_by_label_and_the_deciding_cause_comes_first():
    labels = SHARP.labels
    r = report_for(SHARP, labels=labels)
    assert r.winner_label == "long key"
    notes = " ".join(f.note for f in r.findings)
    assert "from long key to aligned" in notes and "long key stays on top" in notes
    assert not re.search(r"\bkey \d\b", notes)  # no bare index names
    first = r.ranked[0]
    assert first.cause == "key_norm" and first.decides and first.implicated
    assert "length decides which key wins" in first.note
    assert r.summary.startswith("long key takes 0.979") and "strongest first: key_norm" in r.summary
    # The implicated causes that do not hand the route elsewhere follow by measured effect.
    rest = [f for f in r.ranked[1:] if f.implicated]
    assert [f.effect for f in rest] == sorted((f.effect for f in rest), reverse=True)


def test_unlabelled_keys_are_named_from_one():
    r = report_for(SHARP)
    assert r.labels == ("key 1", "key 2", "key 3", "key 4") and r.winner_label == "key 2"
    with pytest.raises(ValueError, match="2 labels for 4 keys"):
        report_for(SHARP, labels=("a", "b"))


def test_perturbations_that_change_nothing_are_marked_untested():
    flat = report_for(SHARP)  # d_k 2: no hidden dimensions to drop
    assert not flat.finding("dimension_scale").tested
    assert "dimension_scale" not in [f.cause for f in flat.ranked]
    unit = report_for(BASIC)  # the query and every key already have unit length
    assert (
        not unit.finding("key_norm").tested and "changes nothing" in unit.finding("key_norm").note
    )
    lifted = report_for(BASIC, d_k=64)
    assert lifted.finding("dimension_scale").tested


def test_dimension_that_picks_the_winner_is_said_to_decide():
    r = report_for(BASIC, scale=False, d_k=512, labels=BASIC.labels)
    f = r.finding("dimension_scale")
    flat = attention(BASIC.query, BASIC.keys, BASIC.values, scale=False).weights
    assert r.winner != int(np.argmax(flat))  # with seed 0 the hidden components pick B over A
    assert f.decides and "they decide the winner" in f.note
    assert r.ranked[0].cause == "dimension_scale"
