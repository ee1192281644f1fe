"""Bad input and failing backends: a clear message, the last valid snapshot kept, no raise."""

import threading

import numpy as np
import pytest

import app.state.pipeline as state_mod
from app.state import settings_schema
from app.state.lab_state import LabState, available_backends
from engine.snapshot import JACOBIAN_MAX


@pytest.fixture
def lab():
    return LabState()


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda s: s.swap_values(0, 3), "index 3 is out of range"),
        (lambda s: s.swap_values(-1, 0), "index -1 is out of range"),
        (lambda s: s.set_key(0, float("nan"), 0.0), "not a finite number"),
        (lambda s: s.set_value(1, 0.0, float("inf")), "not a finite number"),
        (lambda s: s.set_key(0, 1e6, 0.0), "coordinate limit"),
        (lambda s: s.set_key(0, "1", 0.0), "expected numbers"),
        (lambda s: s.set_key(True, 1.0, 0.0), "out of range"),
        (lambda s: s.toggle_mask(7), "out of range"),
        (lambda s: s.set_label(0, "x" * 41), "at most 40"),
        (lambda s: s.set_label(0, "a\x00b"), "control character"),
        (lambda s: s.set_label(0, "   "), "may not be empty"),
        (lambda s: s.load_scenario("nope"), "is not one of"),
        (lambda s: s.remove_pair(5), "out of range"),
        (lambda s: s.add_pair(key=(float("nan"), 0.0)), "not a finite number"),
    ],
)
def test_bad_edits_set_error_and_change_nothing(lab, call, fragment):
    before_snap, before = lab.snapshot, lab.settings()
    call(lab)
    assert fragment in lab.error
    assert lab.snapshot is before_snap
    assert lab.settings() == before


def test_error_clears_on_the_next_valid_change(lab):
    lab.swap_values(0, 9)
    assert lab.error
    lab.swap_values(0, 1)
    assert lab.error == ""


def test_removing_the_last_pair_is_refused():
    lab = LabState()
    lab.remove_pair(0)
    lab.remove_pair(0)
    kept = lab.snapshot
    lab.remove_pair(0)
    assert "at least one" in lab.error and lab.snapshot is kept


@pytest.mark.parametrize(
    "name, value",
    [
        ("temperature", 0.0),
        ("temperature", 25.0),
        ("temperature", float("nan")),
        ("d_k", 1),
        ("d_k", 4097),
        ("distractors", 4097),
        ("angle", 181.0),
        ("keys", [[0.0, 0.0]] * 9),
        ("keys", [[float("nan"), 0.0]]),
        ("mask", []),
        ("labels", ["<b>" * 20]),
        ("backend", "cuda"),
        ("scenario", "../etc"),
    ],
)
def test_parameters_refuse_out_of_range_values(lab, name, value):
    with pytest.raises(ValueError):
        setattr(lab, name, value)
    kept = lab.snapshot
    assert lab.try_update(**{name: value}) is False
    assert name in lab.error and lab.snapshot is kept


def test_try_update_applies_valid_settings_as_one_change(lab):
    assert lab.try_update(temperature=0.5, d_k=16)
    assert (lab.temperature, lab.d_k, lab.snapshot.d_k) == (0.5, 16, 16)
    assert lab.try_update(bogus=1) is False and "bogus: unknown setting" in lab.error


def test_mismatched_list_lengths_name_both(lab):
    kept = lab.snapshot
    lab.keys = [[1.0, 0.0], [0.0, 1.0]]
    assert "has 3 entries but keys has 2" in lab.error
    assert lab.snapshot is kept


def test_size_cap_on_d_k_times_keys(lab):
    lab.distractors = 4096
    assert lab.error == "" and len(lab.snapshot.weights) == 4099
    kept = lab.snapshot
    lab.d_k = 4096
    assert "limit" in lab.error and "d_k=4096" in lab.error
    assert lab.snapshot is kept


def test_jacobian_is_capped_for_many_keys(lab):
    lab.distractors = 500
    snap = lab.snapshot
    assert snap.jacobian.shape == (JACOBIAN_MAX, JACOBIAN_MAX)
    w = snap.weights[:JACOBIAN_MAX]
    np.testing.assert_allclose(snap.jacobian, np.diag(w) - np.outer(w, w))


def test_available_backends_lists_each_with_a_reason():
    choices = {c.name: c for c in available_backends()}
    assert list(choices) == list(settings_schema.BACKENDS)
    assert choices["numpy"].available
    for c in choices.values():
        assert c.available or c.reason  # every unavailable backend says why


def test_unavailable_backend_falls_back_to_numpy_with_a_notice(lab, monkeypatch):
    monkeypatch.setattr(
        state_mod,
        "_backend_choice",
        lambda name: state_mod.BackendChoice(name, name == "numpy", "no GPU in this test"),
    )
    numpy_weights = lab.snapshot.weights
    lab.backend = "torch-cuda"
    snap = lab.snapshot
    assert lab.error == "" and snap.backend_used == "numpy"
    assert "torch-cuda is not available here (no GPU in this test)" in snap.notice
    np.testing.assert_array_equal(snap.weights, numpy_weights)


def _pretend_torch_is_there(monkeypatch):
    monkeypatch.setattr(
        state_mod, "_backend_choice", lambda name: state_mod.BackendChoice(name, True, "")
    )


def test_failing_torch_call_falls_back_with_a_notice(lab, monkeypatch):
    _pretend_torch_is_there(monkeypatch)

    def broken(*args, **kwargs):
        raise RuntimeError("device lost")

    monkeypatch.setattr(state_mod, "_torch_attention", broken)
    lab.backend = "torch-cpu"
    assert lab.settle(30)
    assert lab.error == "" and lab.running == ""
    assert lab.snapshot.backend_used == "numpy"
    assert "torch-cpu failed (RuntimeError: device lost)" in lab.snapshot.notice


def test_a_held_torch_call_never_holds_the_lab(lab, monkeypatch):
    """The change returns while the torch call is still blocked (the event is only set after),
    shows numpy's result, says torch is running, and later changes wait as one queued call."""
    _pretend_torch_is_there(monkeypatch)
    release = threading.Event()
    started = threading.Event()
    calls = []

    def held(q, k, v, device, kw):
        calls.append(kw["temperature"])
        started.set()
        release.wait(60)
        return state_mod.attention(q, k, v, backend="numpy", **kw).to_numpy()

    monkeypatch.setattr(state_mod, "_torch_attention", held)
    try:
        lab.backend = "torch-cpu"  # returns although the call it started is held
        assert started.wait(30)
        assert lab.running == "torch-cpu" and lab.snapshot.backend_used == "numpy"
        lab.temperature = 0.5  # still responsive, and exact: numpy's result meanwhile
        lab.temperature = 0.7
        assert lab.snapshot.temperature == 0.7 and lab.error == ""
        assert lab.snapshot.backend_used == "numpy" and lab.running == "torch-cpu"
        assert calls == [1.0], "a second call started while the first was held"
    finally:
        release.set()
    assert lab.settle(30)
    # The held call's result was stale and dropped; of the two changes made meanwhile only the
    # last was computed on torch, and its snapshot replaced numpy's.
    assert calls == [1.0, 0.7]
    assert lab.running == "" and lab.snapshot.backend_used == "torch-cpu"
    assert lab.snapshot.temperature == 0.7 and lab.snapshot.notice == ""


def test_choosing_numpy_drops_a_torch_result_still_on_its_way(lab, monkeypatch):
    _pretend_torch_is_there(monkeypatch)
    release = threading.Event()

    def held(q, k, v, device, kw):
        release.wait(60)
        return state_mod.attention(q, k, v, backend="numpy", **kw).to_numpy()

    monkeypatch.setattr(state_mod, "_torch_attention", held)
    lab.backend = "torch-cpu"
    lab.backend = "numpy"
    assert lab.running == ""
    release.set()
    assert lab.settle(30)
    assert lab.snapshot.backend_used == "numpy" and lab.running == ""


@pytest.mark.torch
def test_torch_cpu_backend_matches_numpy(lab):
    pytest.importorskip("torch")
    numpy_snap = lab.snapshot
    lab.backend = "torch-cpu"
    assert lab.settle(120)  # the first torch call imports and warms up
    snap = lab.snapshot
    assert snap.backend_used == "torch-cpu", snap.notice
    np.testing.assert_allclose(snap.weights, numpy_snap.weights, rtol=1e-6)
    np.testing.assert_allclose(snap.output, numpy_snap.output, rtol=1e-6)


def test_internal_failure_is_reported_not_raised(lab, monkeypatch):
    def boom(*args, **kwargs):
        raise ZeroDivisionError("bug")

    monkeypatch.setattr(state_mod, "attention", boom)
    kept = lab.snapshot
    lab.temperature = 2.0
    assert "could not compute" in lab.error and "ZeroDivisionError" in lab.error
    assert lab.snapshot is kept
