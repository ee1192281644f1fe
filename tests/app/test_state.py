"""Each control moves the snapshot the way the mathematics says (no server, no Panel)."""

import math

import numpy as np
import pytest

from app.state.lab_state import EVERY_KEY_MASKED, LabState
from engine import attention, interventions
from engine.snapshot import LabSnapshot, entropy_of


@pytest.fixture
def lab():
    state = LabState()
    assert state.error == ""
    return state


def test_default_is_the_basic_scenario_and_matches_the_engine(lab):
    snap = lab.snapshot
    assert isinstance(snap, LabSnapshot)
    assert lab.scenario == "basic" and snap.labels == ("A", "B", "C")
    q = np.array([1.0, 0.0])
    k = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
    v = np.array([[10.0, 0.0], [0.0, 10.0], [-5.0, 5.0]])
    ref = attention(q, k, v)
    np.testing.assert_allclose(snap.weights, ref.weights)
    np.testing.assert_allclose(snap.output, ref.output)
    np.testing.assert_allclose(snap.scores, q @ k.T)
    np.testing.assert_allclose(snap.scaled, q @ k.T / math.sqrt(2))
    np.testing.assert_allclose(snap.logits, q @ k.T / math.sqrt(2))
    np.testing.assert_allclose(snap.contributions, snap.weights[:, None] * v)
    np.testing.assert_allclose(snap.contribution_norms, np.linalg.norm(snap.contributions, axis=1))
    np.testing.assert_allclose(snap.contributions.sum(axis=0), snap.output)
    assert snap.entropy == pytest.approx(float(entropy_of(snap.weights)))
    assert snap.effective_keys == pytest.approx(math.exp(snap.entropy))
    w = snap.weights
    np.testing.assert_allclose(snap.jacobian, np.diag(w) - np.outer(w, w))
    assert snap.null_weight is None and snap.backend_used == "numpy" and snap.notice == ""


def test_snapshot_arrays_are_read_only(lab):
    with pytest.raises(ValueError):
        lab.snapshot.weights[0] = 1.0


def test_swap_values_keeps_weights_and_changes_contributions(lab):
    before = lab.snapshot
    lab.swap_values(0, 1)
    after = lab.snapshot
    assert lab.error == ""
    np.testing.assert_array_equal(after.weights, before.weights)
    assert not np.allclose(after.contributions, before.contributions)
    assert np.linalg.norm(after.output - before.output) > 0.5
    np.testing.assert_array_equal(after.values[[1, 0, 2]], before.values)


def test_rotating_the_query_changes_weights(lab):
    before = lab.snapshot
    lab.angle = 90.0
    after = lab.snapshot
    np.testing.assert_allclose(after.query, [0.0, 1.0], atol=1e-12)
    assert np.max(np.abs(after.weights - before.weights)) > 0.1
    assert after.winner == 2 and before.winner == 0  # now C (0, 1) is the best aligned key


def test_lower_temperature_keeps_ranking_and_lowers_entropy(lab):
    before = lab.snapshot
    lab.temperature = 0.25
    after = lab.snapshot
    assert list(np.argsort(after.weights)) == list(np.argsort(before.weights))
    assert after.entropy < before.entropy
    assert after.weights.max() > before.weights.max()
    np.testing.assert_allclose(after.logits, before.logits * 4)
    np.testing.assert_allclose(after.jacobian.sum(axis=1), 0, atol=1e-12)


def test_d_k_up_without_scale_lowers_entropy_across_seeds():
    # The hidden components are random: average over seeds rather than trust one draw.
    low, high = [], []
    for seed in range(8):
        lab = LabState(scale=False, seed=seed)
        low.append(lab.snapshot.entropy)
        lab.d_k = 512
        assert lab.error == ""
        high.append(lab.snapshot.entropy)
    assert np.mean(high) < np.mean(low) - 0.5


def test_scale_on_tracks_d_k_growth_of_logits():
    lab = LabState(d_k=1024, scale=False, seed=3)
    unscaled = lab.snapshot.logits.copy()
    lab.scale = True
    np.testing.assert_allclose(lab.snapshot.logits, unscaled / 32.0)
    np.testing.assert_allclose(lab.snapshot.scores, unscaled)
    assert lab.snapshot.scale_factor == pytest.approx(1 / 32)


def test_same_seed_same_hidden_components_and_new_seed_differs():
    a, b = LabState(d_k=64, seed=5), LabState(d_k=64, seed=5)
    np.testing.assert_array_equal(a.snapshot.scores, b.snapshot.scores)
    b.seed = 6
    assert not np.allclose(a.snapshot.scores, b.snapshot.scores)


def test_masking_a_key_gives_it_weight_zero(lab):
    lab.toggle_mask(0)
    snap = lab.snapshot
    assert lab.error == "" and lab.mask == [False, True, True]
    assert snap.weights[0] == 0.0 and snap.logits[0] == -np.inf
    assert not snap.legal[0]
    assert snap.weights.sum() == pytest.approx(1.0)
    assert "1 key masked" in snap.summary
    lab.toggle_mask(0)  # and back: the route is the unmasked one again, exactly
    assert lab.mask == [True, True, True]
    np.testing.assert_array_equal(lab.snapshot.weights, LabState().snapshot.weights)


def test_masking_equals_deleting_the_key(lab):
    lab.toggle_mask(1)
    masked = lab.snapshot
    other = LabState()
    other.remove_pair(1)
    np.testing.assert_allclose(masked.output, other.snapshot.output)
    np.testing.assert_allclose(masked.weights[[0, 2]], other.snapshot.weights)


def test_masking_every_key_sets_error_and_keeps_the_snapshot(lab):
    lab.toggle_mask(0)
    lab.toggle_mask(1)
    kept = lab.snapshot
    lab.toggle_mask(2)
    assert lab.error == EVERY_KEY_MASKED
    assert "unmask at least one key" in lab.error
    assert lab.snapshot is kept
    assert lab.mask == [False, False, False]  # the toggles show what the user did
    lab.toggle_mask(1)
    assert lab.error == "" and lab.snapshot.weights[1] == pytest.approx(1.0)


def test_causal_hides_keys_after_the_query_position():
    lab = LabState(scenario="bank")
    assert lab.query_position == 2 and not lab.causal
    assert lab.snapshot.weights[3:].sum() > 0
    lab.causal = True
    snap = lab.snapshot
    np.testing.assert_array_equal(snap.legal, [True, True, True, False, False])
    np.testing.assert_array_equal(snap.weights[3:], 0.0)
    lab.query_position = 0
    assert lab.snapshot.weights[0] == pytest.approx(1.0)


def test_causal_with_the_only_visible_key_masked_names_the_cause():
    lab = LabState(scenario="bank", causal=True, query_position=0)
    kept = lab.snapshot
    lab.toggle_mask(0)
    assert lab.error.startswith(EVERY_KEY_MASKED) and "causal" in lab.error
    assert lab.snapshot is kept


def test_set_key_moves_the_route_and_set_value_only_the_output(lab):
    before = lab.snapshot
    lab.set_value(2, 3.0, -4.0)
    mid = lab.snapshot
    np.testing.assert_array_equal(mid.weights, before.weights)
    np.testing.assert_allclose(mid.contributions[2], mid.weights[2] * np.array([3.0, -4.0]))
    lab.set_key(2, 5.0, 0.0)
    after = lab.snapshot
    assert after.winner == 2 and after.weights[2] > 0.5
    assert lab.keys[2] == [5.0, 0.0]


def test_normalise_makes_unit_vectors_and_breaks_a_norm_driven_route():
    lab = LabState(scenario="sharp")
    assert lab.snapshot.winner == 1  # the long key wins on norm
    lab.normalise = True
    snap = lab.snapshot
    np.testing.assert_allclose(np.linalg.norm(snap.keys, axis=1), 1.0)
    assert np.linalg.norm(snap.query) == pytest.approx(1.0)
    assert snap.winner == 0  # the aligned key wins once lengths are equal


def test_normalise_with_a_zero_key_is_an_error_that_keeps_the_snapshot(lab):
    lab.set_key(1, 0.0, 0.0)
    kept = lab.snapshot
    lab.normalise = True
    assert "zero length" in lab.error and "key 2" in lab.error
    assert lab.snapshot is kept


def test_distractors_take_weight_from_an_unchanged_score():
    lab = LabState(scenario="long_context")
    with_64 = lab.snapshot
    assert len(with_64.weights) == 4 + 64 and with_64.n_pairs == 4
    assert with_64.labels[4] == "d1"
    lab.distractors = 0
    alone = lab.snapshot
    assert alone.scores[0] == with_64.scores[0]
    assert alone.weights[0] > with_64.weights[0]
    assert with_64.weights.sum() == pytest.approx(1.0)


def test_null_route_takes_the_refused_share():
    lab = LabState(scenario="null_route")
    snap = lab.snapshot
    assert lab.null_route and snap.null_weight is not None and snap.null_weight > 0.5
    assert snap.weights.sum() + snap.null_weight == pytest.approx(1.0)
    assert snap.null_logit == pytest.approx(lab.null_threshold / lab.temperature)
    assert "null route takes" in snap.summary
    lab.null_route = False
    assert lab.snapshot.null_weight is None
    assert lab.snapshot.weights.sum() == pytest.approx(1.0)
    # A lower threshold refuses less.
    lab.param.update(null_route=True, null_threshold=-2.0)
    assert lab.snapshot.null_weight < snap.null_weight


def test_null_route_respects_the_mask():
    lab = LabState(scenario="null_route")
    lab.toggle_mask(0)
    snap = lab.snapshot
    assert snap.weights[0] == 0.0
    assert snap.weights.sum() + snap.null_weight == pytest.approx(1.0)


def test_temperature_sweep_marks_the_current_point(lab):
    sweep = lab.snapshot.temperature_sweep
    assert sweep.temperatures[0] == pytest.approx(0.05)
    assert sweep.temperatures[-1] == pytest.approx(20.0)
    assert np.all(np.diff(sweep.entropy) >= -1e-12)  # broader as temperature rises
    assert sweep.current_entropy == pytest.approx(lab.snapshot.entropy)
    at_one = np.interp(1.0, sweep.temperatures, sweep.entropy)
    assert at_one == pytest.approx(lab.snapshot.entropy, abs=0.02)
    lab.temperature = 0.1
    assert lab.snapshot.temperature_sweep.current_temperature == 0.1
    np.testing.assert_array_equal(lab.snapshot.temperature_sweep.entropy, sweep.entropy)


def test_dimension_sweep_is_cached_across_d_k_and_follows_temperature(lab):
    first = lab.snapshot.dimension_sweep
    assert list(first.d_k) == [2**p for p in range(1, 13)]
    lab.d_k = 256
    assert lab.snapshot.dimension_sweep is first  # not recomputed for a new d_k
    lab.set_key(0, 0.5, 0.5)
    assert lab.snapshot.dimension_sweep is first
    lab.temperature = 2.0
    assert lab.snapshot.dimension_sweep is not first
    assert lab.snapshot.dimension_sweep.temperature == 2.0
    # Unscaled entropy falls with d_k; scaled stays roughly level.
    unscaled = first.entropy_unscaled
    assert unscaled[-1] < unscaled[0] - 0.5
    assert abs(first.entropy_scaled[-1] - first.entropy_scaled[0]) < 0.3


def test_load_scenario_resets_every_control():
    lab = LabState()
    lab.param.update(temperature=3.0, d_k=64, angle=45.0, normalise=True, seed=9)
    lab.swap_values(0, 2)
    lab.load_scenario("sharp")
    assert lab.scenario == "sharp"
    assert (lab.temperature, lab.d_k, lab.angle, lab.normalise, lab.seed, lab.scale) == (
        0.5,
        2,
        0.0,
        False,
        0,
        False,
    )
    assert lab.labels == ["aligned", "long key", "side", "opposite"]
    lab.load_scenario("basic")
    assert lab.values == [[10.0, 0.0], [0.0, 10.0], [-5.0, 5.0]]


def test_setting_the_scenario_parameter_loads_it(lab):
    lab.temperature = 4.0
    lab.scenario = "contest"
    assert lab.temperature == 1.0 and not lab.scale and lab.error == ""
    np.testing.assert_allclose(lab.snapshot.logits, [2.0, 1.0, 0.0])
    np.testing.assert_allclose(lab.snapshot.weights, [0.665, 0.245, 0.090], atol=1e-3)


def test_one_change_gives_one_snapshot_event(lab):
    seen = []
    lab.param.watch(lambda e: seen.append(e.new), "snapshot")
    lab.load_scenario("bank")
    assert len(seen) == 1
    lab.swap_values(0, 1)
    assert len(seen) == 2


def test_add_and_remove_pairs(lab):
    lab.add_pair(key=(0.0, -1.0), value=(1.0, 1.0), label="D")
    assert lab.error == "" and len(lab.snapshot.weights) == 4
    assert lab.snapshot.labels[-1] == "D" and lab.query_position == 3
    for _ in range(4):
        lab.add_pair()
    assert len(lab.keys) == 8
    kept = lab.snapshot
    lab.add_pair()
    assert "at most 8" in lab.error and lab.snapshot is kept and len(lab.keys) == 8
    lab.remove_pair(0)
    assert lab.error == "" and len(lab.snapshot.weights) == 7
    assert lab.snapshot.labels[0] == "B"


def test_summary_names_the_winner_with_weight_and_norm_share():
    lab = LabState(scenario="contest")
    lab.set_value(0, 0.01, 0.0)  # the winner carries almost nothing
    text = lab.snapshot.summary
    assert text.startswith("logit 2 gets 67% of the weight but only 2% of the contribution norm")
    assert "effective keys" in text


def test_permuting_pairs_keeps_the_output_and_moves_the_weights(lab):
    before = lab.snapshot
    lab.permute_pairs([2, 0, 1])
    after = lab.snapshot
    assert after.labels == ("C", "A", "B")
    np.testing.assert_allclose(after.output, before.output, atol=1e-12)
    np.testing.assert_array_equal(after.weights, before.weights[[2, 0, 1]])
    kept = lab.snapshot
    lab.permute_pairs([0, 0, 1])
    assert "reordering of 0..2" in lab.error and lab.snapshot is kept


def test_run_audit_passes_on_the_current_configuration():
    lab = LabState(scenario="bank", causal=True, d_k=16)
    checks = lab.run_audit()
    names = [c.name for c in checks]
    assert any("sum to 1" in n for n in names) and any("masked" in n for n in names)
    assert all(c.passed for c in checks), [c for c in checks if not c.passed]
    masked = next(c for c in checks if "masked keys" in c.name)
    assert masked.applicable  # the causal mask is passed to the audit


def test_diagnose_implicates_norm_and_temperature_on_the_sharp_scenario():
    lab = LabState(scenario="sharp")
    report = lab.diagnose()
    assert report.winner == 1 and report.max_weight == pytest.approx(lab.snapshot.weights.max())
    found = {f.cause: f.implicated for f in report.findings}
    assert found["key_norm"] and found["temperature"] and not found["dimension_scale"]


def test_analyses_use_the_last_valid_configuration(lab):
    lab.toggle_mask(0)
    lab.toggle_mask(1)
    lab.toggle_mask(2)
    assert lab.error
    assert lab.diagnose().winner == 2  # the configuration the snapshot shows: only C legal
    assert all(c.passed for c in lab.run_audit())


def test_an_invalid_starting_configuration_is_refused():
    with pytest.raises(ValueError, match="every key is masked"):
        LabState(mask=[False, False, False])


def test_normalise_also_applies_to_distractors():
    lab = LabState(distractors=20, distractor_norm=5.0, distractor_similarity=0.5)
    before = lab.snapshot.keys[3:]
    lengths = np.linalg.norm(before, axis=1)
    assert np.all(np.abs(lengths - 5.0) <= 5.0 * interventions.DISTRACTOR_NORM_SPREAD + 1e-9)
    cos = before @ lab.snapshot.query / (lengths * np.linalg.norm(lab.snapshot.query))
    lab.normalise = True
    keys = lab.snapshot.keys
    np.testing.assert_allclose(np.linalg.norm(keys, axis=1), 1.0)
    np.testing.assert_allclose(keys[3:] @ lab.snapshot.query, cos)  # each similarity kept


def test_state_layer_never_imports_panel_or_bokeh():
    import subprocess
    import sys

    code = (
        "import sys, app.state.lab_state, app.state.settings_schema, app.state.snapshot_csv, app.lessons.lab_lessons; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('panel', 'bokeh')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("share", "shown"),
    [
        (0.0, "0%"),
        (0.0004, "under 0.1%"),
        (0.003, "0.3%"),
        (0.0123, "1%"),
        (0.67, "67%"),
        (0.994, "99.4%"),
        (0.99996, "over 99.9%"),
        (1.0, "100%"),
    ],
)
def test_summary_percentages_never_round_a_real_share_away(share, shown):
    from engine.snapshot import share_percent

    assert share_percent(share) == shown


def test_summary_with_thousands_of_keys_names_a_nonzero_winner_share():
    lab = LabState(distractors=4096, distractor_norm=0.5)
    text = lab.snapshot.summary
    assert " gets 0% of the weight" not in text, text


def test_temperature_can_be_typed_and_a_refused_value_snaps_back():
    # 0.25 took 120 key presses on the log slider; the typed entry is bound to the same setting.
    from app.views.controls import ControlsPanel

    state = LabState()
    panel = ControlsPanel(state, scenario_titles={"basic": "One query"})
    entry, slider = panel.temperature_entry, panel.temperature
    entry.value = 0.25
    assert state.temperature == 0.25 and state.error == ""
    assert slider.value == pytest.approx(math.log10(0.25))  # the slider follows
    for bad in (-1.0, 0.0):
        entry.value = bad
        assert state.temperature == 0.25 and "temperature" in state.error  # refused, named
        assert entry.value == 0.25  # and the entry shows the value kept
    state.temperature = 2.0
    assert entry.value == 2.0
