"""The plots in words (app/state/scene_tables.py, head_tables.py): each table's numbers are the
engine's for a setting that is not the default, the tables follow a change, long rows are cut
to the heaviest keys and say so, and the page's HTML escapes what links can carry."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.state.head_tables import causal_top_table, patching_top_table, pattern_row_table
from app.state.lab_state import LabState
from app.state.scene_tables import (
    MAX_ROWS,
    address_table,
    entropy_table,
    first_screen,
    logits_table,
    number,
    payload_table,
    weights_table,
)
from app.views.plot_text import table_html
from engine import attention, trained
from engine.interventions import rotate
from engine.scenarios import get_scenario
from engine.snapshot import SWEEP_TEMPERATURES, entropy_curve

ANGLE, TEMPERATURE = 40.0, 0.5
PROGRAM = "a=5; b=7; a=3; ?a"


def cells(table, column: str) -> list[float]:
    """One column of a table as numbers ('42.4%' -> 0.424)."""
    j = table.columns.index(column)
    out = []
    for row in table.rows:
        text = row[j].removesuffix(" (now)")
        out.append(float(text[:-1]) / 100 if text.endswith("%") else float(text))
    return out


@pytest.fixture(scope="module")
def engine_route():
    """The default scenario with its query turned 40 degrees at temperature 0.5, by the engine."""
    state = LabState()
    sc = get_scenario(state.scenario)
    q = rotate(np.asarray(sc.query, dtype=float), math.radians(ANGLE))
    result = attention(q, sc.keys, sc.values, scale=True, temperature=TEMPERATURE)
    assert state.try_update(angle=ANGLE, temperature=TEMPERATURE)
    return state.snapshot, sc, q, result


def test_every_table_holds_the_engines_numbers(engine_route):
    snap, sc, q, r = engine_route
    weights = np.asarray(r.weights)
    address = address_table(snap)
    np.testing.assert_allclose(cells(address, "x"), [q[0], *sc.keys[:, 0]], atol=5e-4)
    np.testing.assert_allclose(cells(address, "y"), [q[1], *sc.keys[:, 1]], atol=5e-4)
    w = weights_table(snap)
    np.testing.assert_allclose(cells(w, "weight"), weights, atol=5e-4)
    norms = np.linalg.norm(weights[:, None] * sc.values, axis=1)
    np.testing.assert_allclose(cells(w, "share of |w·v|"), norms / norms.sum(), atol=5e-4)
    logits = logits_table(snap)
    np.testing.assert_allclose(cells(logits, "q·k"), sc.keys @ q, atol=5e-4)
    np.testing.assert_allclose(cells(logits, "after temperature"), r.logits, atol=5e-4)
    payload = payload_table(snap)
    contributions = weights[:, None] * sc.values
    np.testing.assert_allclose(cells(payload, "w·v x")[:-1], contributions[:, 0], atol=5e-4)
    assert payload.rows[-1][0] == "output"
    np.testing.assert_allclose(cells(payload, "w·v y")[-1], np.asarray(r.output)[1], atol=5e-4)
    entropy = entropy_table(snap)
    rows = {row[0]: float(row[1]) for row in entropy.rows}
    now = float(-(weights * np.log(weights)).sum())
    assert rows[f"{TEMPERATURE:.3f} (now)"] == pytest.approx(now, abs=5e-4)
    curve = entropy_curve(np.asarray(r.logits) * TEMPERATURE)  # the logits at temperature 1
    assert rows[number(SWEEP_TEMPERATURES[0])] == pytest.approx(curve[0], abs=5e-4)
    assert rows[number(SWEEP_TEMPERATURES[-1])] == pytest.approx(curve[-1], abs=5e-4)
    assert "0.500" in entropy.description and "nats" in entropy.description


def test_the_tables_follow_a_change():
    state = LabState()
    before = first_screen(state.snapshot)
    assert state.try_update(temperature=3.0)
    after = first_screen(state.snapshot)
    assert weights_table(state.snapshot) == after[2] != before[2]
    assert "3.000" in after[3].description


def test_many_keys_list_the_heaviest_and_say_how_many():
    state = LabState()
    assert state.try_update(distractors=40)
    snap = state.snapshot
    table = weights_table(snap)
    assert len(table.rows) == MAX_ROWS
    assert f"the {MAX_ROWS} heaviest of {len(snap.labels)} keys" in table.description
    shown = cells(table, "weight")
    assert shown == sorted(shown, reverse=True)
    assert shown[0] == pytest.approx(float(np.max(snap.weights)), abs=5e-4)


def test_a_masked_key_and_the_null_route_are_named():
    state = LabState()
    assert state.try_update(mask=[True, False, True], null_route=True)
    snap = state.snapshot
    assert logits_table(snap).rows[1][-1] == "masked"
    assert weights_table(snap).rows[-1][0] == "null route"


def test_the_html_escapes_labels_and_names_its_plot():
    state = LabState()
    assert state.try_update(labels=["<b>A</b>", "B", "C"])
    text = table_html(weights_table(state.snapshot))
    assert "<b>A</b>" not in text and "&lt;b&gt;A&lt;/b&gt;" in text
    assert text.startswith('<table data-plot="weights"><caption>')
    assert '<th scope="col">weight</th>' in text


def test_the_open_heads_row_and_the_maps_top_heads_are_the_engines():
    model = trained.load("binding")
    run = model.run(PROGRAM)
    q = run.query_position
    layer, head = model.retrieval_head
    table = pattern_row_table(run.tokens, run.head(layer, head).all_weights, q, layer, head)
    row = np.asarray(run.head(layer, head).all_weights)[q, : q + 1]
    order = np.argsort(-row, kind="stable")[: len(table.rows)]
    np.testing.assert_allclose(cells(table, "weight"), row[order], atol=5e-4)
    assert f"position {order[0]}" in table.rows[0][0]
    cmap = model.causal_map(PROGRAM)
    causal = causal_top_table(cmap)
    decisive = cmap.decisive(len(causal.rows))
    assert [r[0] for r in causal.rows] == [f"layer {d.layer} head {d.head}" for d in decisive]
    np.testing.assert_allclose(
        cells(causal, causal.columns[2]), [d.effect for d in decisive], atol=5e-4
    )
    pmap = model.patching_map(PROGRAM, "a=5; b=7; a=0; ?a")
    patching = patching_top_table(pmap)
    strongest = pmap.strongest(len(patching.rows))
    np.testing.assert_allclose(
        cells(patching, "share brought back"), [s.recovered for s in strongest], atol=5e-4
    )
