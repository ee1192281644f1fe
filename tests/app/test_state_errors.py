"""Bad input and failing backends: a clear message, the last valid snapshot kept, no raise."""

import threading
from concurrent import futures

import numpy as np
import pytest

import app.state.lab_state as state_mod
from app.state import settings_schema as us
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
    assert list(choices) == list(us.BACKENDS)
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
    assert lab.error == ""
    assert lab.snapshot.backend_used == "numpy"
    assert "torch-cpu failed (RuntimeError: device lost)" in lab.snapshot.notice


def test_slow_torch_call_times_out_and_the_page_keeps_working(lab, monkeypatch):
    _pretend_torch_is_there(monkeypatch)
    release = threading.Event()

    def hung(*args, **kwargs):
        release.wait(10)
        raise RuntimeError("released")

    monkeypatch.setattr(state_mod, "_torch_attention", hung)
    lab.backend_timeout = 0.05
    try:
        lab.backend = "torch-cpu"
        assert lab.snapshot.backend_used == "numpy"
        assert "took longer than 0.05 s" in lab.snapshot.notice
        lab.temperature = 0.5  # still responsive
        assert lab.snapshot.temperature == 0.5 and lab.error == ""
    finally:
        release.set()
        # Leave the worker idle for the next test: until the released call has finished, the
        # lab rightly reports torch as still busy (CI once caught that window).
        stuck = state_mod._OVERDUE.get("cpu")
        if stuck is not None:
            futures.wait([stuck], timeout=10)


@pytest.mark.torch
def test_torch_cpu_backend_matches_numpy(lab):
    pytest.importorskip("torch")
    numpy_snap = lab.snapshot
    lab.backend_timeout = 60.0  # the first torch call imports and warms up
    lab.backend = "torch-cpu"
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
