"""One computation per class action: the pipeline is a pure function of the settings, cached once
per process and bounded, so every session on the same settings holds the same snapshot."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest

from app.lessons.lab_lessons import LESSONS
from app.state import pipeline
from app.state.lab_state import INPUTS, LabState
from app.state.pipeline import BoundedCache, Settings


@pytest.fixture
def runs(monkeypatch):
    """Counts the pipeline's real (uncached) runs."""
    calls = []
    real = pipeline._numpy_snapshot

    def counted(settings):
        calls.append(settings)
        return real(settings)

    monkeypatch.setattr(pipeline, "_numpy_snapshot", counted)
    return calls


def test_settings_are_the_urls_fields_and_round_trip():
    lab = LabState(scenario="contest")
    assert tuple(f.name for f in dataclasses.fields(Settings)) == tuple(INPUTS)
    s = lab.frozen_settings()
    assert s.as_dict() == lab.settings()
    assert Settings.of(s.as_dict()) == s and hash(Settings.of(s.as_dict())) == hash(s)
    # Equal values in other types (an int for a float, tuples for lists) are the same key.
    plain = lab.settings() | {"temperature": 1, "keys": tuple(map(tuple, lab.keys))}
    assert Settings.of(plain) == Settings.of(lab.settings() | {"temperature": 1.0})


def test_two_labs_with_the_same_settings_share_one_snapshot(runs):
    a, b = LabState(), LabState()
    assert a.snapshot is b.snapshot
    a.temperature = b.temperature = 0.5
    assert a.snapshot is b.snapshot and a.snapshot.temperature == 0.5
    assert len(runs) == 2  # the default settings, then temperature 0.5: once each


def test_different_settings_give_different_snapshots():
    a, b = LabState(), LabState()
    b.temperature = 0.5
    assert a.snapshot is not b.snapshot
    assert a.snapshot.temperature == 1.0 and b.snapshot.temperature == 0.5
    b.set_label(0, "renamed")  # labels are part of the key: the drawing names them
    c = LabState()
    c.temperature = 0.5
    assert c.snapshot is not b.snapshot and c.snapshot.labels[0] != "renamed"


def _arrays(obj, where=""):
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        if isinstance(v, np.ndarray):
            yield f"{where}{f.name}", v
        elif dataclasses.is_dataclass(v):
            yield from _arrays(v, f"{where}{f.name}.")


@pytest.mark.parametrize("settings", [{}, {"distractors": 200, "null_route": True, "d_k": 64}])
def test_a_shared_snapshot_cannot_be_changed_by_a_session(settings):
    snap = LabState(**settings).snapshot
    found = dict(_arrays(snap))
    assert {"weights", "keys", "jacobian", "temperature_sweep.entropy"} <= set(found)
    for name, a in found.items():
        assert not a.flags.writeable, f"{name} of a shared snapshot is writeable"
        with pytest.raises(ValueError):
            a.flat[0] = a.flat[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        snap.temperature = 2.0  # type: ignore[misc]


def test_the_cached_lift_is_read_only():
    lab = LabState(d_k=64)
    inp = pipeline.inputs_for(lab.frozen_settings())
    assert not inp.q_hi.flags.writeable and not inp.k_hi.flags.writeable


def test_an_invalid_change_is_not_cached_and_keeps_the_shared_snapshot(runs):
    a, b = LabState(), LabState()
    kept = a.snapshot
    a.mask = [False, False, False]
    assert "every key is masked" in a.error and a.snapshot is kept is b.snapshot
    a.mask = [True, False, True]
    assert a.error == "" and a.snapshot is not kept
    refused = [s for s in runs if not any(s.mask)]
    assert len(refused) == 1 and refused[0] not in pipeline.SNAPSHOTS  # errors are not cached
    assert len(pipeline.SNAPSHOTS) == 2


@pytest.mark.parametrize("step", LESSONS, ids=[s.slug for s in LESSONS])
def test_a_lesson_step_opened_by_thirty_labs_runs_the_pipeline_once(step, runs):
    labs = [LabState() for _ in range(30)]
    before = step.start(labs[0])
    first = len(runs)
    for lab in labs[1:]:
        assert step.start(lab) is before
    assert len(runs) == first, "a follower on the same step ran the pipeline again"
    assert first <= 3  # the default lab, the step's scenario, the step's settings


def test_bounded_cache_evicts_the_least_recently_used():
    cache = BoundedCache("test", max_entries=3, max_bytes=10**6, size=lambda v: 1)
    for k in "abc":
        cache.get_or_compute(k, lambda k=k: k.upper())
    assert cache.get("a") == "A"  # a is now the most recent
    cache.get_or_compute("d", lambda: "D")
    assert "b" not in cache and all(k in cache for k in "acd")
    assert len(cache) == 3 and cache.info()["evictions"] == 1


def test_bounded_cache_holds_a_byte_budget():
    cache = BoundedCache("test", max_entries=100, max_bytes=100, size=len)
    cache.get_or_compute("a", lambda: "x" * 60)
    cache.get_or_compute("b", lambda: "y" * 30)
    assert cache.nbytes == 90
    cache.get_or_compute("c", lambda: "z" * 30)  # 120 > 100: the oldest goes
    assert "a" not in cache and "b" in cache and "c" in cache and cache.nbytes == 60
    big = cache.get_or_compute("d", lambda: "w" * 500)  # larger than the budget: not kept
    assert big == "w" * 500 and "d" not in cache and cache.nbytes == 60


def test_the_snapshot_cache_is_bounded_and_recomputes_what_it_evicted(monkeypatch, runs):
    small = BoundedCache("snapshots", max_entries=4, max_bytes=64 << 20, size=lambda s: 1)
    monkeypatch.setattr(pipeline, "SNAPSHOTS", small)
    lab = LabState()
    first = lab.snapshot
    for t in (0.5, 0.6, 0.7, 0.8):
        lab.temperature = t
    assert len(small) == 4
    lab.temperature = 1.0
    assert lab.snapshot is not first  # evicted, so computed again: a new object
    np.testing.assert_array_equal(lab.snapshot.weights, first.weights)
    assert len(runs) == 6 and len(small) == 4


def test_the_real_caches_have_bounds():
    for cache in pipeline.CACHES:
        assert 0 < cache.max_entries <= 1024 and 0 < cache.max_bytes <= 128 << 20


def _pretend_torch(monkeypatch, calls, hold=None):
    monkeypatch.setattr(
        pipeline, "_backend_choice", lambda name: pipeline.BackendChoice(name, True, "")
    )

    def fake_torch(q, k, v, device, kw):
        calls.append(kw["temperature"])
        if hold is not None:
            hold.wait(30)
        return pipeline.attention(q, k, v, backend="numpy", **kw).to_numpy()

    monkeypatch.setattr(pipeline, "_torch_attention", fake_torch)


def test_a_torch_result_is_computed_once_and_shown_at_once_to_the_next_lab(monkeypatch):
    calls = []
    _pretend_torch(monkeypatch, calls)
    a = LabState(backend="torch-cpu")
    assert a.settle(30) and a.snapshot.backend_used == "torch-cpu"
    b = LabState(backend="torch-cpu")  # the same settings: no second call, no wait
    assert b.running == "" and b.snapshot is a.snapshot
    assert calls == [1.0]


def test_labs_waiting_for_the_same_torch_call_share_it(monkeypatch):
    calls = []
    release = threading.Event()
    _pretend_torch(monkeypatch, calls, hold=release)
    labs = [LabState(backend="torch-cpu") for _ in range(2)]
    assert all(lab.running == "torch-cpu" for lab in labs)
    release.set()
    assert all(lab.settle(30) for lab in labs)
    assert calls == [1.0], "two labs on the same settings made two torch calls"
    assert labs[0].snapshot is labs[1].snapshot and labs[0].snapshot.backend_used == "torch-cpu"
