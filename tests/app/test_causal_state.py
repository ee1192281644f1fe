"""The maps' session source: measured off the session thread, with progress and Stop, dropped
when the sentence changes, and refusals named."""

from __future__ import annotations

import threading

import pytest

from app.state.causal_state import CausalState
from app.state.model_state import ModelState
from engine import trained

PROGRAM = "a=5; b=7; a=3; ?a"


@pytest.fixture
def states():
    m = ModelState(text=PROGRAM)
    return m, CausalState(m)


def test_measure_gives_the_engine_map_of_the_open_sentence(states):
    m, c = states
    seen = []
    c.param.watch(lambda e: seen.append(e.new), "progress")
    c.measure()
    assert c.settle(60)
    assert c.running == "" and c.error == ""
    assert c.causal == trained.load("binding").causal_map(PROGRAM)
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)


def test_a_suggested_change_and_the_patching_map(states):
    m, c = states
    assert c.settle(60)  # the suggestion is looked for on the worker
    assert c.corrupted == "a=5; b=7; a=0; ?a" and "a=3 became a=0" in c.change
    c.patch()
    assert c.settle(60)
    pmap = c.patching
    assert (pmap.clean_answer, pmap.corrupted_answer) == ("3", "0")
    best = pmap.restoring(1)[0]
    assert (best.layer, best.head) == trained.load("binding").retrieval_head


def test_a_refused_change_is_named_and_keeps_the_page(states):
    m, c = states
    assert c.settle(60)
    c.corrupted = "a=5; ?a"
    c.patch()
    assert c.settle(60)
    assert c.patching is None and "same length" in c.error and c.running == ""


def test_a_new_sentence_drops_the_maps_and_a_late_result_is_ignored(states):
    m, c = states
    held = []
    c.deliver = held.append  # results wait here, as on a page until its next tick
    c.measure()
    assert c.settle(60)
    assert m.try_update(text="a=1; b=2; ?b")
    assert c.settle(60)
    *old, suggestion = held  # the old map's reports, then the new sentence's suggestion
    for finish in old:
        finish()  # the old sentence's map arrives after the change
    assert c.causal is None and c.running == ""
    assert c.corrupted == "" and "looking" in c.change
    suggestion()
    assert c.corrupted == "a=1; b=0; ?b"


def test_stop_cancels_a_map_at_work():
    lm = pytest.importorskip("tokenizers") and trained.smollm.status()[0]
    if not lm:
        pytest.skip("smollm2 is not installed")
    m = ModelState(model="smollm2-135m", text="The capital of Italy is")
    c = CausalState(m)
    started = threading.Event()

    def deliver(finish):
        started.set()
        finish()

    c.deliver = deliver
    c.measure()
    assert started.wait(120)  # the first progress report: the map is under way
    c.stop()
    assert c.settle(120)
    assert c.causal is None and c.message == "stopped" and c.error == ""
