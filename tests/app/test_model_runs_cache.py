"""One forward per (model, text, edits, query position, backend) per process: every session
on the same trained-model step shares one run, and the cache of runs is bounded."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from app.lessons.model_lessons import MODEL_LESSONS
from app.state import model_runs
from app.state.model_state import ModelState
from app.state.pipeline import BoundedCache
from engine import trained

BINDING_STEPS = [s for s in MODEL_LESSONS if s.model == "binding"]


@pytest.fixture
def forwards(monkeypatch):
    """Counts the binding model's forwards (a plain run and every intervention)."""
    model = trained.load("binding")
    calls = []
    real = model.forward_one

    def counted(*args, **kwargs):
        calls.append(kwargs.get("start", 0))
        return real(*args, **kwargs)

    monkeypatch.setattr(model, "forward_one", counted)
    return calls


def test_two_sessions_on_the_same_settings_share_one_run(forwards):
    a, b = ModelState(), ModelState()
    assert a.run is b.run and len(forwards) == 1
    a.try_update(head_temperature=0.5)
    b.try_update(head_temperature=0.5)
    assert a.run is b.run and a.run.edits and len(forwards) == 2
    c = ModelState()
    c.try_update(head_temperature=0.7)
    assert c.run is not a.run and len(forwards) == 3


def test_a_shared_run_cannot_be_changed_by_a_session():
    run = ModelState().run
    arrays = [run.logits, run._p, *run._pass.resid]
    for rec in run._pass.heads.values():
        arrays += [getattr(rec, f.name) for f in dataclasses.fields(rec)]
    arrays = [a for a in arrays if isinstance(a, np.ndarray)]
    assert len(arrays) > 10
    assert not any(a.flags.writeable for a in arrays)


@pytest.mark.parametrize("step", BINDING_STEPS, ids=[s.title for s in BINDING_STEPS])
def test_a_model_step_opened_by_thirty_sessions_runs_the_model_once(step, forwards):
    states = [ModelState() for _ in range(30)]
    step.start(states[0])
    first = len(forwards)
    for m in states[1:]:
        step.start(m)
        assert m.run is states[0].run
    assert len(forwards) == first, "a follower on the same step ran the model again"


def test_equal_edits_are_one_key_even_with_arrays():
    out = np.ones((3, 4), dtype=np.float32)
    a, b = trained.PatchHead(1, 0, out), trained.PatchHead(1, 0, out.copy())
    assert model_runs.edit_key(a) == model_runs.edit_key(b)  # by value, not by object
    assert hash(model_runs.edit_key(a)) == hash(model_runs.edit_key(b))
    assert model_runs.edit_key(a) != model_runs.edit_key(trained.PatchHead(1, 1, out))


def test_the_run_cache_is_bounded_and_recomputes_what_it_evicted(monkeypatch, forwards):
    small = BoundedCache("runs", max_entries=2, max_bytes=1 << 30, size=model_runs.run_nbytes)
    monkeypatch.setattr(model_runs, "RUNS", small)
    m = ModelState()
    m.try_update(head_temperature=0.5)
    first, count = m.run, len(forwards)
    m.try_update(head_temperature=0.6)  # the plain run is used again, so 0.5's run goes
    assert len(small) == 2 and small.info()["evictions"] == 1
    m.try_update(head_temperature=0.5)
    assert m.run is not first and len(forwards) == count + 2  # evicted: computed again
    np.testing.assert_array_equal(m.run.logits, first.logits)
    assert 0 < model_runs.run_nbytes(m.run) < 1 << 20


def test_the_real_run_cache_has_a_byte_budget():
    assert model_runs.RUNS.max_bytes == model_runs.RUN_CACHE_MB * (1 << 20) <= 1 << 30
