"""The CSV of current numbers: header, one row per key, values that match the snapshot."""

import csv
import io

import numpy as np
import pytest

from app.state.lab_state import LabState
from app.state.snapshot_csv import CSV_COLUMNS, NULL_ROUTE_LABEL, safe_cell


def _rows(text):
    return list(csv.reader(io.StringIO(text)))


def test_header_and_one_row_per_key():
    lab = LabState()
    rows = _rows(lab.to_csv())
    assert tuple(rows[0]) == CSV_COLUMNS
    assert CSV_COLUMNS == (
        "label",
        "key_x",
        "key_y",
        "value_x",
        "value_y",
        "legal",
        "raw_score",
        "scaled",
        "logit",
        "weight",
        "contribution_x",
        "contribution_y",
        "contribution_norm",
    )
    assert [r[0] for r in rows[1:]] == ["A", "B", "C"]
    snap = lab.snapshot
    body = np.array([[float(x) for x in r[1:5] + r[6:]] for r in rows[1:]])
    np.testing.assert_array_equal(body[:, 0:2], snap.keys)
    np.testing.assert_array_equal(body[:, 2:4], snap.values)
    np.testing.assert_array_equal(body[:, 4], snap.scores)
    np.testing.assert_array_equal(body[:, 5], snap.scaled)
    np.testing.assert_array_equal(body[:, 6], snap.logits)
    np.testing.assert_array_equal(body[:, 7], snap.weights)
    np.testing.assert_array_equal(body[:, 8:10], snap.contributions)
    np.testing.assert_array_equal(body[:, 10], snap.contribution_norms)
    assert body[:, 7].sum() == pytest.approx(1.0)


def test_masked_key_is_written_as_illegal_with_minus_inf_logit():
    lab = LabState()
    lab.toggle_mask(2)
    row = _rows(lab.to_csv())[3]
    assert row[5] == "false" and row[8] == "-inf" and float(row[9]) == 0.0


def test_null_route_adds_a_final_row_with_its_weight():
    lab = LabState(scenario="null_route")
    rows = _rows(lab.to_csv())
    assert len(rows) == 1 + 3 + 1
    assert rows[-1][0] == NULL_ROUTE_LABEL
    assert float(rows[-1][9]) == pytest.approx(lab.snapshot.null_weight)
    assert float(rows[-1][8]) == pytest.approx(lab.null_threshold / lab.temperature)
    assert sum(float(r[9]) for r in rows[1:]) == pytest.approx(1.0)


def test_distractors_each_get_a_row():
    lab = LabState(scenario="long_context")
    rows = _rows(lab.to_csv())
    assert len(rows) == 1 + 4 + 64 and rows[5][0] == "d1"


def test_formula_like_labels_are_defused_and_commas_quoted():
    lab = LabState()
    lab.set_label(0, "=HYPERLINK(1)")
    lab.set_label(1, "a, b")
    rows = _rows(lab.to_csv())
    assert rows[1][0] == "'=HYPERLINK(1)" and rows[2][0] == "a, b"
    assert safe_cell("-1") == "'-1" and safe_cell("plain") == "plain"
