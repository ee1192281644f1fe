"""A page's model runs and maps off the session's thread (issue 45): `ModelState.request` names a
refusal at once and computes a forward on the worker, the newest request wins and arrives
through `deliver`; one forward per run for the whole process, even one too large to keep; the
maps' worker serves sessions in turn, and a session's new map replaces its older one."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from app.state import model_runs
from app.state.causal_state import CausalState, MapTurns
from app.state.model_state import ModelState
from app.state.pipeline import BoundedCache
from engine import trained

PROGRAM = "a=5; b=7; a=3; ?a"
OTHER = "a=1; b=2; ?b"
THIRD = "x=4; y=6; x=8; ?x"


@pytest.fixture
def page():
    """A model source as a page holds it: results wait in `held` until the page's turn."""
    m = ModelState(text=PROGRAM)
    held: list = []
    m.deliver = held.append
    return m, held


def _arrive(m, held) -> None:
    """Run what reached the page until nothing more comes (an arrival may ask again)."""
    while True:
        assert m.settle(60)
        if not held:
            return
        held.pop(0)()


@pytest.fixture
def gated(monkeypatch):
    """model_runs.runs, recording which thread and text each call off the caller's thread ran
    on; the first of them says it `started` and waits for `gate`."""
    calls: list[tuple[str, str]] = []
    gate, started = threading.Event(), threading.Event()
    real = model_runs.runs
    test = threading.current_thread()

    def runs(model, text, *args, **kwargs):
        if threading.current_thread() is not test:
            calls.append((threading.current_thread().name, text))
            if len(calls) == 1:
                started.set()
                assert gate.wait(60)
        return real(model, text, *args, **kwargs)

    monkeypatch.setattr(model_runs, "runs", runs)
    return calls, gate, started


def test_a_request_runs_its_forward_on_the_worker_and_arrives_on_the_page(page, gated):
    m, held = page
    calls, gate, _ = gated
    assert m.request(text=OTHER)
    # Nothing changed yet but what the page asked for: the head shown stays whole.
    assert m.text == PROGRAM and m.run.text == PROGRAM
    assert m.wanted()["text"] == OTHER and m.query_params()["text"] == OTHER
    n = len(trained.load("binding").check(OTHER))
    assert m.running.endswith(f"is reading {n} tokens")
    gate.set()
    _arrive(m, held)
    assert calls and all(name.startswith("lab-model") for name, _ in calls)
    assert m.text == OTHER and m.run.text == OTHER and m.running == "" and m.error == ""
    assert m.prediction.answer_after == trained.load("binding").run(OTHER).answer


def test_the_newest_request_wins(page, gated):
    m, held = page
    calls, gate, started = gated
    assert m.request(text=OTHER)
    assert started.wait(60)  # in flight (waits for the gate)
    assert m.request(text=THIRD)  # queued...
    assert m.request(layer=0, head=1)  # ...and replaced by this one (on THIRD)
    gate.set()
    _arrive(m, held)
    # The first call ran (it was under way); the replaced one never did.
    assert [text for _, text in calls] == [OTHER, THIRD]
    assert (m.text, m.layer, m.head) == (THIRD, 0, 1) and m.run.text == THIRD


def test_a_refused_request_is_named_at_once_and_nothing_runs(page, gated):
    m, held = page
    calls, _, _ = gated
    shown = m.snapshot
    assert not m.request(masked=[40])
    assert "masked" in m.error and m.running == "" and m.snapshot is shown
    assert not m.request(text="a=5; ?")
    assert m.error and m.text == PROGRAM
    assert calls == [] and held == []


def test_a_forward_that_fails_is_named_and_the_head_stays(page, monkeypatch):
    m, held = page

    def no_backend(*args, **kwargs):
        raise RuntimeError("torch is not installed")

    monkeypatch.setattr(model_runs, "runs", no_backend)
    shown = m.snapshot
    assert m.request(text=OTHER)
    _arrive(m, held)
    assert m.error == "backend: torch is not installed"
    assert m.snapshot is shown and m.text == PROGRAM and m.running == ""


def test_a_backend_that_fails_is_dropped_and_the_rest_of_the_request_applies(page, monkeypatch):
    m, held = page
    real = model_runs.runs

    def runs(model, text, query, backend, *args, **kwargs):
        if backend != "numpy":
            raise RuntimeError("no CUDA device here")
        return real(model, text, query, backend, *args, **kwargs)

    monkeypatch.setattr(model_runs, "runs", runs)
    # A link's settings, each checked at once, then one request for all of them.
    assert m.request(text=OTHER) and m.request(backend="torch-cuda")
    _arrive(m, held)
    assert m.text == OTHER and m.backend == "numpy" and m.run.text == OTHER
    assert m.running == "" and m.query_params()["text"] == OTHER


def test_what_needs_no_forward_is_shown_at_once(page, gated):
    m, held = page
    calls, _, _ = gated
    model_runs.clear()  # a long text's run is not kept: the page's own run still serves
    other = 1 - m.head
    assert m.request(head=other)
    assert m.head == other and m.snapshot.labels and m.running == ""
    assert calls == [] and held == []


def test_the_page_says_what_the_model_is_computing_until_it_answers(gated):
    from app.state.lab_state import LabState
    from app.state.sources import MODEL, SourceSwitch
    from app.views.status import StatusView

    calls, gate, _ = gated
    sources = SourceSwitch(LabState())
    held: list = []
    sources.deliver = held.append
    status = StatusView(sources)
    sources.source = MODEL
    m = sources.model
    assert m.request(text=OTHER)
    n = len(trained.load("binding").check(OTHER))
    assert sources.computing == m.running and status.running.visible
    assert f"is reading {n} tokens" in status.running.object
    gate.set()
    _arrive(m, held)
    assert sources.computing == "" and not status.running.visible
    assert sources.snapshot is m.snapshot and m.text == OTHER


def test_try_update_still_computes_at_once_on_a_page(page):
    m, held = page
    assert m.try_update(text=OTHER)  # a lesson step measures right after its set-up
    assert m.text == OTHER and m.run.text == OTHER and held == []


def test_an_experiment_on_a_page_arrives_with_its_edit(page):
    m, held = page
    assert m.request_experiment("swap_values")
    assert m.experiments == [] and "swap_values" in m.running
    _arrive(m, held)
    (row,) = m.experiments
    assert list(m.extra) == list(row.edits) and m.running == ""
    assert m.prediction.answer_after == row.answer_after


def test_two_sessions_asking_one_uncomputed_run_share_its_forward(monkeypatch):
    pages = []
    for _ in range(2):
        m = ModelState(text=PROGRAM)
        m.deliver = (held := []).append
        pages.append((m, held))
    model = trained.load("binding")
    forwards = []
    gate = threading.Event()
    real = type(model).run

    def slow(self, text, *args, **kwargs):
        forwards.append(text)
        assert gate.wait(60)
        return real(self, text, *args, **kwargs)

    monkeypatch.setattr(type(model), "run", slow)
    for m, _ in pages:
        assert m.request(text=OTHER)
    gate.set()
    for m, held in pages:
        _arrive(m, held)
    assert forwards == [OTHER]
    assert pages[0][0].run is pages[1][0].run


def test_a_shared_computation_too_large_to_keep_is_still_done_once():
    cache = BoundedCache("t", max_entries=4, max_bytes=10, size=lambda v: 100, one_flight=True)
    started, gate, done = threading.Event(), threading.Event(), []

    def compute():
        done.append(1)
        started.set()
        assert gate.wait(60)
        return np.zeros(3)

    got = []
    first = threading.Thread(target=lambda: got.append(cache.get_or_compute("k", compute)))
    first.start()
    assert started.wait(60)
    second = threading.Thread(target=lambda: got.append(cache.get_or_compute("k", compute)))
    second.start()
    gate.set()
    first.join(60)
    second.join(60)
    assert done == [1] and got[0] is got[1] and len(cache) == 0  # shared, and not kept


# ------------------------------------------------------------------------------ the maps


def test_the_maps_worker_serves_sessions_in_turn():
    turns = MapTurns(slots=1)
    order, gate, finished = [], threading.Event(), threading.Semaphore(0)
    alice, bob = object(), object()

    def task(name, wait=False):
        if wait:
            assert gate.wait(60)
        order.append(name)
        finished.release()

    turns.submit(alice, task, "alice 1", True)
    turns.submit(alice, task, "alice 2")
    turns.submit(alice, task, "alice 3")
    turns.submit(bob, task, "bob's only map")
    gate.set()
    for _ in range(4):
        assert finished.acquire(timeout=60)
    # Bob's only map does not wait behind Alice's queue.
    assert order == ["alice 1", "bob's only map", "alice 2", "alice 3"]


def test_a_long_map_gives_the_worker_up_between_its_steps():
    turns = MapTurns(slots=1)
    order, queued, finished = [], threading.Event(), threading.Semaphore(0)
    alice, bob = object(), object()

    def long_map():
        for step in range(3):
            order.append(f"alice step {step}")
            if step == 0:
                assert queued.wait(60)
            turns.pause(alice)  # between two layers
        finished.release()

    def short_map():
        order.append("bob")
        finished.release()

    turns.submit(alice, long_map)
    turns.submit(bob, short_map)
    queued.set()
    for _ in range(2):
        assert finished.acquire(timeout=60)
    assert order == ["alice step 0", "bob", "alice step 1", "alice step 2"]


def test_a_new_map_replaces_the_sessions_older_one():
    from app.state.causal_state import TURNS

    m = ModelState(text=PROGRAM)
    c = CausalState(m)
    assert c.settle(60)
    held: list = []
    c.deliver = held.append
    gate = threading.Event()
    TURNS.submit(object(), gate.wait, 60)  # the worker is busy with another session's map
    c.measure()
    c.patch()  # a second map from the same page: the first one is stopped, never run
    assert c.running == "patching"
    gate.set()
    assert c.settle(60)
    for finish in held:
        finish()
    assert c.causal is None and c.patching is not None and c.running == "" and c.error == ""


# ------------------------------------------------------------------------------ one hand-over


def test_one_hand_over_serves_the_sessions_model_its_maps_and_its_receipt():
    from app.state.causal_state import LOOKING
    from app.state.lab_state import LabState
    from app.state.receipt_state import ReceiptState
    from app.state.sources import SourceSwitch

    lab = LabState()
    sources = SourceSwitch(lab)
    held: list = []
    lab.handover.to = held.append  # the page's one wiring
    m = sources.model
    c, r = CausalState(m), ReceiptState(m, following=True)
    assert m.handover is c.handover is r.handover is lab.handover
    first = m.text
    assert m.request(text=OTHER)  # served: its forward runs on the worker
    assert m.settle(60) and c.settle(60) and r.settle(60)
    assert m.text == first and c.change == LOOKING and r.amap is None and held
    while held:
        held.pop(0)()
        for state in (m, c, r):
            assert state.settle(60)
    assert m.text == OTHER and c.change != LOOKING and r.complete


def test_a_closed_page_is_handed_nothing_more(page, gated):
    m, held = page
    _, gate, _ = gated
    assert m.request(text=OTHER)
    m.close()
    gate.set()
    assert m.settle(60)
    assert held == [] and m.text == PROGRAM


def test_a_closed_pages_maps_and_suggestion_hand_nothing_over():
    from app.state.causal_state import LOOKING, TURNS

    m = ModelState(text=PROGRAM)
    gate = threading.Event()
    TURNS.submit(object(), gate.wait, 60)  # the worker is busy with another session's map
    c = CausalState(m)
    held: list = []
    c.deliver = held.append
    c.measure()
    c.close()
    gate.set()
    assert c.settle(60)
    assert held == [] and c.change == LOOKING and c.causal is None
