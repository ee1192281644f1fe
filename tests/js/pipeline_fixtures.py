"""Fixtures for tests/js/pipeline.test.js, written by the server's own code.

Each case is a random lab configuration loaded into a session's LabState and GeometryView (fed
each new snapshot as LabPage.draw feeds it): what GeometryView sends the browser for its preview
(the `preview_params` row and the `preview` rows), then, for each of a few moves (a key, a value, the
query), the route the engine computes once the moved tip reaches the server through
GeometryView._flush, or null where the server refuses the move. The configuration is restored
between moves, so every move starts from the inputs that were recorded.

    python3 tests/js/pipeline_fixtures.py OUT.json [--count N] [--seed S]

tests/js/test_browser_scripts.py writes them into a temporary folder for each run.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from app.state import settings_schema  # noqa: E402
from app.state.lab_state import SWEEP_TEMPERATURES, LabState, default_labels  # noqa: E402
from app.views.geometry import GeometryView  # noqa: E402
from engine.scenarios import SCENARIOS  # noqa: E402
from engine.snapshot import share_percent  # noqa: E402

COUNT = 200
SEED = 17


def _floats(a) -> list:
    """JSON numbers, with null for -inf (a masked candidate's logit) and NaN."""
    return [float(x) if math.isfinite(x) else None for x in np.asarray(a, dtype=float).ravel()]


@functools.cache
def _pairs(scenario: str) -> int:
    return len(LabState(scenario=scenario).keys)


def random_settings(rng: np.random.Generator, state: LabState) -> dict:
    """Load a valid random configuration into `state` and return its settings: every setting
    the preview depends on, drawn widely."""
    while True:
        scenario = str(rng.choice(list(SCENARIOS)))
        n = _pairs(scenario)
        settings: dict = {"scenario": scenario}
        if rng.random() < 0.5:  # pairs of its own: how many, and where
            n = int(rng.integers(1, settings_schema.MAX_PAIRS + 1)) if rng.random() < 0.4 else n
            settings["keys"] = np.round(rng.uniform(-2, 2, (n, 2)), 3).tolist()
            settings["values"] = np.round(rng.uniform(-9, 9, (n, 2)), 3).tolist()
            settings["labels"] = default_labels(n)
        settings.update(
            d_k=int(rng.choice([2, 3, 16, 64, 256, 4096])),
            scale=bool(rng.integers(2)),
            normalise=bool(rng.integers(2)),
            temperature=float(np.round(np.exp(rng.uniform(np.log(0.05), np.log(20))), 4)),
            angle=float(np.round(rng.uniform(-180, 180), 2)),
            seed=int(rng.integers(0, 50)),
            causal=bool(rng.integers(2)),
            query_position=int(rng.integers(0, n)),
            null_route=bool(rng.integers(2)),
            null_threshold=float(np.round(rng.uniform(-4, 4), 2)),
            distractors=int(rng.choice([0, 0, 0, 5, 40, 300])),
            distractor_similarity=float(np.round(rng.uniform(-1, 1), 2)),
            distractor_norm=float(np.round(np.exp(rng.uniform(np.log(0.1), np.log(5))), 2)),
            mask=[bool(b) for b in rng.random(n) < 0.8],
        )
        if settings["d_k"] * (n + settings["distractors"] + 1) > settings_schema.MAX_LIFT_ELEMENTS:
            settings["distractors"] = 0
        if state.try_update(**settings):  # else (every key masked, say) it stays as it was
            return state.settings()


def random_moves(rng: np.random.Generator, n_pairs: int) -> list[dict]:
    """A key, a value and the query, dragged somewhere; now and then a move the server refuses
    (past the coordinate limit, or a key onto the origin) or that changes nothing."""
    key = {"kind": "key", "index": int(rng.integers(0, n_pairs))}
    key["x"], key["y"] = (float(c) for c in rng.uniform(-2, 2, 2))
    value = {"kind": "value", "index": int(rng.integers(0, n_pairs))}
    value["x"], value["y"] = (float(c) for c in rng.uniform(-9, 9, 2))
    turn = rng.uniform(-np.pi, np.pi)
    radius = float(rng.uniform(0.2, 2.5))
    query = {
        "kind": "query",
        "index": 0,
        "x": radius * math.cos(turn),
        "y": radius * math.sin(turn),
    }
    odd = rng.random()
    if odd < 0.05:
        key["x"], key["y"] = 0.0, 0.0  # refused with normalise on
    elif odd < 0.08:
        value["x"] = float(
            rng.choice([-1, 1]) * (settings_schema.COORD_LIMIT + rng.uniform(0.01, 5))
        )
    elif odd < 0.10:
        query["x"], query["y"] = 0.0, 0.0  # no direction: the query stays
    return [key, value, query]


def _drag(geometry, move: dict) -> None:
    """The tip the browser sends, as Bokeh would deliver it (GeometryView._flush takes it)."""
    if move["kind"] == "query":
        geometry.query_tip.data = {"x": [move["x"]], "y": [move["y"]]}
        return
    source = geometry.key_tips if move["kind"] == "key" else geometry.value_tips
    data = {k: list(v) for k, v in source.data.items()}
    data["x"][move["index"]] = move["x"]
    data["y"][move["index"]] = move["y"]
    source.data = data


def _route(state) -> dict:
    snap = state.snapshot
    norms = np.asarray(snap.contribution_norms, dtype=float)
    total = float(norms.sum())
    weights = np.asarray(snap.weights, dtype=float)
    sweep = snap.temperature_sweep
    assert np.array_equal(sweep.temperatures, SWEEP_TEMPERATURES)
    shown = [*weights, *([] if snap.null_weight is None else [snap.null_weight])]
    return {
        "angle": float(state.angle),
        "query": _floats(snap.query),
        "keys_x": _floats(snap.keys[:, 0]),
        "keys_y": _floats(snap.keys[:, 1]),
        "values_x": _floats(snap.values[:, 0]),
        "values_y": _floats(snap.values[:, 1]),
        "visible": _floats(snap.keys[:, :2] @ snap.query[:2]),
        "scores": _floats(snap.scores),
        "scaled": _floats(snap.scaled),
        "logits": _floats(snap.logits),
        "legal": [bool(b) for b in snap.legal],
        "weights": _floats(weights),
        "null_weight": None if snap.null_weight is None else float(snap.null_weight),
        "contributions_x": _floats(snap.contributions[:, 0]),
        "contributions_y": _floats(snap.contributions[:, 1]),
        "output": _floats(snap.output),
        "entropy": float(snap.entropy),
        "effective_keys": float(snap.effective_keys),
        # The weights chart's shares, as WeightsView.update computes them.
        "norms": _floats(norms),
        "shares": _floats(norms / total if total > 0 else np.zeros_like(norms)),
        "sweep_entropy": _floats(sweep.entropy),
        "notes": [[float(w), share_percent(float(w))] for w in shown[:16]],
    }


# Not inputs of the arithmetic: a counter, and where the query's handle sits on its ray (which
# follows the plane's zoom, and so the configurations before).
_NOT_INPUTS = ("version", "qhandle")


def _same_inputs(geometry, params: dict, rows: dict) -> None:
    now = {k: v[0] for k, v in geometry.preview_params.data.items() if k not in _NOT_INPUTS}
    assert now == {k: v for k, v in params.items() if k not in _NOT_INPUTS}, (now, params)
    for name, column in rows.items():
        np.testing.assert_allclose(geometry.preview.data[name], column, rtol=0, atol=1e-12)


def cases(count: int = COUNT, seed: int = SEED) -> list[dict]:
    rng = np.random.default_rng(seed)
    state = LabState()
    geometry = GeometryView(state)
    # What LabPage.draw does with each new snapshot, for the one view the preview reads.
    state.param.watch(lambda event: geometry.update(event.new, event.new.n_pairs), "snapshot")
    geometry.update(state.snapshot, state.snapshot.n_pairs)
    out = []
    while len(out) < count:
        settings = random_settings(rng, state)
        params = {k: v[0] for k, v in geometry.preview_params.data.items()}
        if not params["enabled"]:
            continue
        rows = {k: _floats(v) for k, v in geometry.preview.data.items()}
        case = {"settings": settings, "P": params, "R": rows, "moves": []}
        for move in random_moves(rng, int(params["n_pairs"])):
            _drag(geometry, move)
            case["moves"].append({"move": move, "expect": None if state.error else _route(state)})
            assert state.try_update(**settings), state.error  # back to the recorded inputs
            _same_inputs(geometry, params, rows)
        out.append(case)
    return out


def write(path: Path, count: int = COUNT, seed: int = SEED) -> dict:
    """Write `count` cases to `path` (JSON); returns what the file holds, in numbers."""
    found = cases(count, seed)
    data = {
        "source": "tests/js/pipeline_fixtures.py",
        "seed": seed,
        "sweep_temperatures": _floats(SWEEP_TEMPERATURES),
        "cases": found,
    }
    path.write_text(json.dumps(data, allow_nan=False))
    moves = [m for c in found for m in c["moves"]]
    return {
        "configurations": len(found),
        "moves": len(moves),
        "refused": sum(m["expect"] is None for m in moves),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--count", type=int, default=COUNT)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    print(json.dumps(write(args.out, args.count, args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
