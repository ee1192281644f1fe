"""The current numbers as CSV: one row per key, then the null route when it is on.

No Panel import. Labels are user text, so a label that a spreadsheet would read as a formula
(starting with = + - @ or a tab) is written with a leading apostrophe.
"""

from __future__ import annotations

import csv
import io

import numpy as np

CSV_COLUMNS = (
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
NULL_ROUTE_LABEL = "(null route)"
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(text: str) -> str:
    """A label as an inert spreadsheet cell."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def _num(x: float) -> str:
    x = float(x)
    if np.isneginf(x):
        return "-inf"
    return repr(x)


def snapshot_csv(snap) -> str:
    """Rows of the snapshot's per-key numbers, with a header of `CSV_COLUMNS`."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for i, label in enumerate(snap.labels):
        writer.writerow(
            [
                safe_cell(label),
                _num(snap.keys[i, 0]),
                _num(snap.keys[i, 1]),
                _num(snap.values[i, 0]),
                _num(snap.values[i, 1]),
                "true" if snap.legal[i] else "false",
                _num(snap.scores[i]),
                _num(snap.scaled[i]),
                _num(snap.logits[i]),
                _num(snap.weights[i]),
                _num(snap.contributions[i, 0]),
                _num(snap.contributions[i, 1]),
                _num(snap.contribution_norms[i]),
            ]
        )
    if snap.null_weight is not None:
        # A zero key and a zero value: only its weight says anything.
        zero = _num(0.0)
        writer.writerow(
            [NULL_ROUTE_LABEL, zero, zero, zero, zero, "true", zero, zero]
            + [_num(snap.null_logit), _num(snap.null_weight), zero, zero, zero]
        )
    return out.getvalue()
