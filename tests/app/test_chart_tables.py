"""The remaining plots in words (app/state/chart_tables.py): the d_k sweep, the Jacobian, every
head's grid, the model's answer, the estimate grid and receipt, and the class's votes. Each
table's numbers are the engine's, computed here on their own, and each view writes its table
into its hidden pane from the rows it draws."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from app.state.chart_tables import (
    ALL_OTHERS,
    MAX_HEAD_ROWS,
    answer_table,
    dimension_table,
    estimate_table,
    head_grid_table,
    jacobian_block,
    jacobian_table,
    receipt_table,
    votes_table,
)
from app.state.lab_state import LabState
from app.state.model_state import ModelState
from app.state.pipeline import SWEEP_D_KS
from app.views.class_panel import VotesChart, vote_rows
from app.views.dimension_sweep import DimensionView
from app.views.jacobian import MAX_SIDE, JacobianView
from app.views.lesson_panel import ALL_LESSONS
from app.views.prediction import PredictionView
from engine import dimension, trained
from engine.scenarios import get_scenario

PROGRAM = "a=5; b=7; a=3; ?a"
ANGLE, TEMPERATURE, D_K = 40.0, 0.5, 64


def cells(table, column: str) -> list[float]:
    """One column as numbers ('42.4%' -> 0.424, '+0.120' -> 0.12)."""
    j = table.columns.index(column) if isinstance(column, str) else column
    out = []
    for row in table.rows:
        text = row[j].removesuffix(" (now)")
        out.append(float(text[:-1]) / 100 if text.endswith("%") else float(text))
    return out


def shown_in(pane, table) -> bool:
    """The view's hidden pane holds the table: its plot's name and every row's first cell."""
    html = pane.object
    return f'data-plot="{table.name}"' in html and all(str(r[0])[:8] in html for r in table.rows)


@pytest.fixture(scope="module")
def lab():
    state = LabState()
    assert state.try_update(angle=ANGLE, temperature=TEMPERATURE, d_k=D_K)
    return state


def test_the_dimension_table_is_the_engines_sweep(lab):
    snap = lab.snapshot
    table = dimension_table(snap.dimension_sweep, snap.d_k)
    sweep = dimension.sweep(
        SWEEP_D_KS, n_keys=max(2, len(lab.keys)), seed=lab.seed, temperature=TEMPERATURE
    )
    assert [int(r[0].removesuffix(" (now)")) for r in table.rows] == list(SWEEP_D_KS)
    assert f"{D_K} (now)" in [r[0] for r in table.rows]
    for column, values in (
        ("spread unscaled", sweep.logit_std_unscaled),
        ("spread scaled", sweep.logit_std_scaled),
        ("√d_k theory", np.sqrt(SWEEP_D_KS)),
        ("entropy unscaled (nats)", sweep.entropy_unscaled),
        ("entropy scaled (nats)", sweep.entropy_scaled),
    ):
        np.testing.assert_allclose(cells(table, column), values, atol=5e-4)
    assert "0.500" in table.description
    view = DimensionView()
    view.update(snap, snap.d_k)
    assert shown_in(view.text.pane, table)


def test_the_jacobian_table_is_the_softmax_derivative(lab):
    snap = lab.snapshot
    sc = get_scenario(lab.scenario)
    # d_k 64 lifts the geometry: check the derivative against a finite difference of the
    # softmax of the snapshot's own scaled scores, divided by the temperature.
    s = np.asarray(snap.scaled, dtype=float)

    def soft(x):
        z = np.exp(x / TEMPERATURE - np.max(x / TEMPERATURE))
        return z / z.sum()

    h, steps = 1e-6, np.eye(len(s))
    numeric = np.column_stack(
        [(soft(s + h * steps[j]) - soft(s - h * steps[j])) / (2 * h) for j in range(len(s))]
    )
    table = jacobian_table(jacobian_block(snap, MAX_SIDE))
    assert table.columns[1:] == tuple(f"s {label}" for label in snap.labels)
    got = np.array([[float(c) for c in row[1:]] for row in table.rows])
    np.testing.assert_allclose(got, numeric, atol=5e-5)
    assert len(sc.keys) == len(table.rows)
    view = JacobianView()
    view.update(snap)
    assert shown_in(view.text.pane, table)
    np.testing.assert_allclose(view.source.data["value"], got.ravel(), atol=5e-5)


def test_many_keys_the_jacobian_lists_the_heaviest_as_drawn_and_says_so():
    state = LabState()
    assert state.try_update(distractors=40)
    snap = state.snapshot
    block = jacobian_block(snap, MAX_SIDE)
    table = jacobian_table(block)
    assert len(table.rows) == MAX_SIDE
    heaviest = set(np.argsort(-np.asarray(snap.weights))[:MAX_SIDE])
    assert set(block.keep) == heaviest
    assert f"the {MAX_SIDE} heaviest of {len(snap.labels)} keys" in table.description
    view = JacobianView()
    view.update(snap)
    assert list(view.source.data["row_label"][::MAX_SIDE]) == list(block.labels)


def test_the_head_grid_table_has_each_heads_strongest_key():
    m = ModelState(text=PROGRAM)
    model = trained.load("binding")
    run = model.run(PROGRAM)
    table = head_grid_table(m.head_grid(), m.open_head)
    assert len(table.rows) == model.n_layers * model.n_heads
    layer, head = m.open_head
    focus = int(np.argmax(run.head(layer, head).weights))
    for row in table.rows:
        li, hi = (int(x) for x in row[0].removesuffix(" (open)").split()[1::2])
        w = np.asarray(run.head(li, hi).weights)
        top = int(np.argmax(w))
        assert row[1].endswith(f"(position {top})")
        assert float(row[2]) == pytest.approx(w[top], abs=5e-4)
        assert float(row[4]) == pytest.approx(w[focus], abs=5e-4)
        assert row[0].endswith("(open)") == ((li, hi) == (layer, head))


def test_a_large_grid_lists_the_sharpest_heads_and_says_so():
    n = 60
    rng = np.random.default_rng(0)
    rows = {
        "layer": [i // 6 for i in range(n)],
        "head": [i % 6 for i in range(n)],
        "top_key": [1] * n,
        "top_token": ["x"] * n,
        "top_weight": list(rng.uniform(0.1, 1, n)),
        "entropy": [0.5] * n,
        "on_focus": [0.1] * n,
        "focus_key": [1] * n,
    }
    table = head_grid_table(rows, (0, 0))
    assert len(table.rows) == MAX_HEAD_ROWS
    weights = cells(table, "its weight")
    assert weights == sorted(weights, reverse=True)
    assert weights[0] == pytest.approx(max(rows["top_weight"]), abs=5e-4)
    assert f"the {MAX_HEAD_ROWS} sharpest" in table.description


def test_the_answer_table_is_the_models_run_with_and_without_the_edit():
    m = ModelState(text=PROGRAM)
    model = trained.load("binding")
    top = int(np.argmax(m.snapshot.weights))
    assert m.try_update(masked=[top])
    plain = model.run(PROGRAM)
    edited = model.run(PROGRAM, edits=[trained.MaskPosition(m.layer, m.head, top)])
    table = answer_table(m.prediction)
    listed = [r for r in table.rows if not r[0].startswith(ALL_OTHERS)]
    assert listed, table
    for row, before, now in zip(
        listed, cells(table, "before the intervention"), cells(table, "with it (now)"), strict=False
    ):
        token = row[0].removesuffix(" (right)")
        assert before == pytest.approx(plain.probs.get(token, 0.0), abs=5e-4)
        assert now == pytest.approx(edited.probs.get(token, 0.0), abs=5e-4)
    assert sum(cells(table, "with it (now)")) == pytest.approx(1.0, abs=5e-3)
    assert [r[0] for r in table.rows if r[0].endswith("(right)")] == [f"{plain.expected} (right)"]
    assert f"The model answers {edited.answer}" in table.description
    view = PredictionView()
    view.update(m.prediction)
    assert shown_in(view.text.pane, table)
    np.testing.assert_allclose(
        view.source.data["probability"], cells(table, "with it (now)"), atol=5e-4
    )


def test_the_estimate_and_receipt_tables_are_the_attribution_maps():
    model = trained.load("binding")
    amap = model.attribution_map(PROGRAM, verify=2)
    estimate = estimate_table(amap)
    ranked = amap.ranked()
    assert [r[0] for r in estimate.rows] == [f"layer {r.layer} head {r.head}" for r in ranked]
    np.testing.assert_allclose(cells(estimate, 1), [r.estimate for r in ranked], atol=5e-5)
    checked = [r for r in ranked if r.exact is not None]
    assert len(checked) == 2
    assert sum(row[2] != "not checked" for row in estimate.rows) == 2
    receipt = receipt_table(amap)
    assert {r[0] for r in receipt.rows} == {f"layer {r.layer} head {r.head}" for r in checked}
    exact = {f"layer {r.layer} head {r.head}": r.exact for r in checked}
    for row in receipt.rows:
        assert float(row[2]) == pytest.approx(exact[row[0]], abs=5e-4)
        assert float(row[3]) == pytest.approx(float(row[2]) - float(row[1]), abs=2e-3)
    misses = [abs(float(r[3])) for r in receipt.rows]
    assert misses == sorted(misses, reverse=True)


def test_the_votes_table_counts_each_choice_as_the_chart_draws_it():
    step = 3
    tally = SimpleNamespace(counts={0: 4, 2: 1})
    chart = VotesChart()
    chart.update(step, tally, mark_answer=True)
    rows = vote_rows(step, tally, mark_answer=True)
    table = votes_table(step, rows, revealed=True)
    choices = ALL_LESSONS[step - 1].choices
    assert len(table.rows) == len(choices)
    assert [int(r[1]) for r in table.rows] == [tally.counts.get(i, 0) for i in range(len(choices))]
    right = ALL_LESSONS[step - 1].answer
    assert table.rows[right][0] == f"{choices[right]} (right)"
    assert "5 in all" in table.description and f"is {choices[right]}" in table.description
    assert shown_in(chart.text.pane, table)
    hidden = votes_table(step, vote_rows(step, tally, mark_answer=False), revealed=False)
    assert "(right)" not in "".join(r[0] for r in hidden.rows)
    assert "right answer" not in hidden.description
