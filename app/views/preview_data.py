"""What the browser needs to preview a drag on the planes exactly (app/views/preview.py runs
the preview): one float64 row per candidate, and one row of settings.

The rows hold each candidate's key and value as drawn, the hidden part of its score (the d_k - 2
coordinates not drawn) and whether it is legal. Distractors go in the query's own frame (along
q, across q): they stay put when the query turns, so turning it does not resend thousands of
them. The settings say whether the preview runs at all: only for the lab's own state, whose
pipeline app/js/pipeline.js mirrors.
"""

from __future__ import annotations

import numpy as np

from app.state.settings_schema import COORD_LIMIT
from engine.scenarios import SCENARIOS

PREVIEW_ROWS = ("kx", "ky", "vx", "vy", "hidden", "legal")


def preview_rows(snap, m: int, old: dict) -> dict:
    """The candidates' rows for snapshot `snap` with `m` drawn pairs; a column within 1e-12 of
    the one in `old` (the rows last sent) stays as it is (recomputed frames differ by rounding
    only)."""
    q2 = np.asarray(snap.query, dtype=np.float64)[:2]
    k2 = np.asarray(snap.keys, dtype=np.float64)[:, :2]
    vals = np.asarray(snap.values, dtype=np.float64)
    hidden = np.asarray(snap.scores, dtype=np.float64) - k2 @ q2
    kx, ky = np.array(k2[:, 0], dtype=np.float64), np.array(k2[:, 1], dtype=np.float64)
    norm = float(np.hypot(*q2))
    if len(k2) > m and norm > 0:
        ux, uy = q2 / norm
        kx[m:] = k2[m:, 0] * ux + k2[m:, 1] * uy
        ky[m:] = -k2[m:, 0] * uy + k2[m:, 1] * ux
    rows = {
        "kx": kx,
        "ky": ky,
        "vx": np.array(vals[:, 0], dtype=np.float64),
        "vy": np.array(vals[:, 1], dtype=np.float64),
        "hidden": hidden,
        "legal": np.asarray(snap.legal, dtype=np.float64),
    }
    if set(old) == set(rows) and all(len(old[c]) == len(rows[c]) for c in rows):
        rows = {
            c: (old[c] if np.allclose(old[c], v, rtol=0, atol=1e-12) else v)
            for c, v in rows.items()
        }
    return rows


def preview_settings(
    snap, state, m: int, *, version: int, query_handle: float, draggable: bool, synced: int = 0
):
    """The one row of settings (a dict of floats); `enabled` 1.0 only where the browser can
    preview: a draggable plane of the hand-made lab, in two dimensions. `synced`: the number
    of the last dragged tip the server had when it drew this (app/views/tip_drag.py)."""
    q2 = np.asarray(snap.query, dtype=np.float64)[:2]
    params = {
        "enabled": 0.0,
        "version": float(version),
        "n_pairs": float(m),
        "qx": float(q2[0]),
        "qy": float(q2[1]),
        "qhandle": float(query_handle),
        "scale": float(snap.scale_factor),
        "temperature": float(snap.temperature),
        "null_on": float(snap.null_weight is not None),
        "null_logit": float(snap.null_logit or 0.0),
        "coord_limit": COORD_LIMIT,
        "synced": float(synced),
    }
    scenario = SCENARIOS.get(getattr(state, "scenario", None))
    if draggable and scenario is not None and hasattr(state, "angle") and len(snap.query) == 2:
        lo, hi = state.param.angle.bounds or (-180.0, 180.0)
        base = np.asarray(scenario.query, dtype=np.float64)
        params.update(
            enabled=1.0,
            angle=float(state.angle),
            angle_lo=float(lo),
            angle_hi=float(hi),
            base_qx=float(base[0]),
            base_qy=float(base[1]),
            normalise=float(bool(state.normalise)),
        )
    return params
