"""The plots in words, read in Chromium: each plot's table is in the page's accessibility tree
with the engine's numbers for a setting that is not the default, and follows a change made by
keyboard (app/views/plot_text.py, app/state/scene_tables.py)."""

from __future__ import annotations

import math
from urllib.parse import parse_qs, quote

import numpy as np
import pytest

from app.state.lab_state import LabState
from app.state.pipeline import SWEEP_D_KS
from engine import attention, trained
from engine.interventions import rotate
from engine.scenarios import get_scenario
from engine.snapshot import SWEEP_TEMPERATURES, entropy_curve

pytestmark = pytest.mark.browser

TEMPERATURE = 0.5
PROGRAM = "a=5; b=7; a=3; ?a"
# Every table the page holds, shadow roots included: name -> {caption, rows of cell texts}.
READ_TABLES = """() => {
  const out = {};
  (function walk(root) {
    for (const el of root.querySelectorAll('*')) {
      if (el.tagName === 'TABLE' && el.dataset.plot) {
        out[el.dataset.plot] = {
          caption: el.caption ? el.caption.textContent : '',
          columns: [...el.tHead.rows[0].cells].map(c => c.textContent),
          rows: [...el.tBodies[0].rows].map(r => [...r.cells].map(c => c.textContent)),
        };
      }
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  })(document);
  return out;
}"""


def read_tables(page) -> dict:
    return page.evaluate(READ_TABLES)


def ax_tables(page) -> list[str]:
    """The names of the tables in Chromium's own accessibility tree (what a screen reader gets):
    a table hidden from the tree (display: none, aria-hidden) would be missing."""
    cdp = page.context.new_cdp_session(page)
    try:
        nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        cdp.detach()
    return [
        " ".join(str(n.get("name", {}).get("value", "")).split()[:3])
        for n in nodes
        if n.get("role", {}).get("value") == "table" and not n.get("ignored")
    ]


def column(table: dict, name: str) -> np.ndarray:
    j = table["columns"].index(name)
    out = []
    for row in table["rows"]:
        text = row[j].removesuffix(" (now)")
        out.append(float(text[:-1]) / 100 if text.endswith("%") else float(text))
    return np.array(out)


def engine_numbers(angle: float):
    sc = get_scenario(LabState().scenario)
    q = rotate(np.asarray(sc.query, dtype=float), math.radians(angle))
    return sc, q, attention(q, sc.keys, sc.values, scale=True, temperature=TEMPERATURE)


def check_first_screen(tables: dict, angle: float) -> None:
    sc, q, r = engine_numbers(angle)
    w = np.asarray(r.weights)
    np.testing.assert_allclose(column(tables["address"], "x"), [q[0], *sc.keys[:, 0]], atol=6e-4)
    np.testing.assert_allclose(column(tables["address"], "y"), [q[1], *sc.keys[:, 1]], atol=6e-4)
    np.testing.assert_allclose(column(tables["weights"], "weight"), w, atol=6e-4)
    norms = np.linalg.norm(w[:, None] * sc.values, axis=1)
    np.testing.assert_allclose(
        column(tables["weights"], "share of |w·v|"), norms / norms.sum(), atol=6e-4
    )
    np.testing.assert_allclose(column(tables["logits"], "q·k"), sc.keys @ q, atol=6e-4)
    np.testing.assert_allclose(column(tables["logits"], "after temperature"), r.logits, atol=6e-4)
    wv = np.vstack([w[:, None] * sc.values, np.asarray(r.output)[None, :]])
    np.testing.assert_allclose(column(tables["payload"], "w·v x"), wv[:, 0], atol=6e-4)
    np.testing.assert_allclose(column(tables["payload"], "w·v y"), wv[:, 1], atol=6e-4)


def angle_of(search: str) -> float:
    return float(parse_qs(search.lstrip("?")).get("angle", ["0"])[0])


def test_each_plots_table_holds_the_engines_numbers_and_follows_the_keyboard(open_lab):
    lab = open_lab(f"?angle=40&temperature={TEMPERATURE}", more_settings=False)
    tables = lab.wait_until(lambda: read_tables(lab.page).get("logits"), "the tables")
    tables = read_tables(lab.page)
    assert {"address", "payload", "weights", "logits"} <= set(tables)
    check_first_screen(tables, 40.0)
    assert "Weights and |w·v| shares." in tables["weights"]["caption"]
    # The tables are in the accessibility tree (hidden from sight only): Chromium's own tree.
    assert "Logits per key." in ax_tables(lab.page)
    # A change by keyboard: the tables follow it, to the engine's numbers for the new angle.
    before = tables["weights"]["rows"]
    lab.slider_keys("Query angle", "ArrowRight", times=3)
    lab.wait_until(lambda: angle_of(lab.search()) != 40.0, "the new angle in the address")
    lab.wait_until(lambda: read_tables(lab.page)["weights"]["rows"] != before, "new tables")
    lab.server_round_trip()  # the last press's tables have arrived
    check_first_screen(read_tables(lab.page), angle_of(lab.search()))
    # The entropy plot's table, once the analysis plots are built.
    lab.show_analysis()
    entropy = lab.wait_until(lambda: read_tables(lab.page).get("entropy"), "the entropy table")
    _, _, r = engine_numbers(angle_of(lab.search()))
    curve = entropy_curve(np.asarray(r.logits) * TEMPERATURE)
    rows = {row[0]: float(row[1]) for row in entropy["rows"]}
    assert rows[f"{SWEEP_TEMPERATURES[0]:.3f}"] == pytest.approx(curve[0], abs=6e-4)
    w = np.asarray(r.weights)
    assert rows[f"{TEMPERATURE:.3f} (now)"] == pytest.approx(-(w * np.log(w)).sum(), abs=6e-4)
    # The Jacobian's and the d_k sweep's tables, built with it.
    tables = lab.wait_until(
        lambda: (t := read_tables(lab.page)) and {"jacobian", "dimension"} <= set(t) and t,
        "the Jacobian's and the d_k sweep's tables",
    )
    jac = np.array([[float(c) for c in row[1:]] for row in tables["jacobian"]["rows"]])
    np.testing.assert_allclose(jac, (np.diag(w) - np.outer(w, w)) / TEMPERATURE, atol=6e-5)
    spread = column(tables["dimension"], "√d_k theory")
    np.testing.assert_allclose(spread, np.sqrt(SWEEP_D_KS), atol=6e-4)
    assert {"Softmax Jacobian ∂w_i/∂s_j.", "Logit spread and"} <= set(ax_tables(lab.page))


def test_the_open_heads_row_is_read_from_the_page(open_lab):
    lab = open_lab(f"?model=binding&text={quote(PROGRAM)}", more_settings=False)
    lab.wait_until(lambda: len(lab.data("weights")["label"]) > 0, "the head drawn", 30)
    grid = lab.page.get_by_role(
        "region", name="Every head at once, and the open head's whole pattern"
    )
    grid.get_by_role("button").click()  # the head grid is built when shown
    table = lab.wait_until(lambda: read_tables(lab.page).get("pattern_row"), "the row's table", 60)
    model = trained.load("binding")
    run = model.run(PROGRAM)
    layer, head = (
        int(x) for x in table["caption"].split("Layer ")[1].split(",")[0].split(" head ")
    )
    q = run.query_position
    row = np.asarray(run.head(layer, head).all_weights)[q, : q + 1]
    order = np.argsort(-row, kind="stable")[: len(table["rows"])]
    np.testing.assert_allclose(column(table, "weight"), row[order], atol=6e-4)
    # Every head's row in the grid's table, and the answer's probabilities, from the same run.
    tables = read_tables(lab.page)
    for cells in tables["head_grid"]["rows"]:
        li, hi = (int(x) for x in cells[0].removesuffix(" (open)").split()[1::2])
        w = np.asarray(run.head(li, hi).weights)
        assert cells[1].endswith(f"(position {int(np.argmax(w))})")
        assert float(cells[2]) == pytest.approx(float(w.max()), abs=6e-4)
    assert len(tables["head_grid"]["rows"]) == model.n_layers * model.n_heads
    answer = {r[0].removesuffix(" (right)"): r[2] for r in tables["answer"]["rows"]}
    for token, p in run.probs.items():
        if token in answer:
            assert float(answer[token][:-1]) / 100 == pytest.approx(p, abs=6e-4)
    assert f"{run.expected} (right)" in [r[0] for r in tables["answer"]["rows"]]
