"""Every head's whole attention pattern for one run, as plain arrays (no Panel, no Bokeh).

A run keeps, for every head, its whole causal pattern (`HeadRecord.all_weights`: every query
row against every key) besides the query row the planes draw. This module turns those into
what the views draw and the tests read:

- `grid_rows`: one row per head (layer-major) with what the grid's hover names: the strongest
  key of the head's query row, its weight, the row's entropy and the weight the row puts on
  the opened head's strongest key.
- `grid_image`: every head's pattern in one uint8 mosaic, each cell max-pooled to at most
  `MAX_CELL` x `MAX_CELL` pixels so a 512-token text stays a small image (layout below).
- `pattern`: the opened head's whole matrix in float32, NaN above the diagonal.
- `up_to_query`: a run seen from its query position, keys after it left out (they lie in
  that row's future: their weight is zero by causality, not by an intervention).

The grid mosaic's layout (`GridImage`): layers run left to right, heads top to bottom. Cell
(layer L, head h) covers data x in [L, L + cell / pitch) and y in [h, h + cell / pitch) on a
y axis that grows downwards (head 0 on top); inside it pixel (i, j) is the largest weight of
the block of query rows i and keys j it pools, query 0 at the top. Pixel values:
1..`LEVELS` are the weight on a log scale from `FLOOR` to 1 (`encode`), 0 a weight below `FLOOR`;
`FUTURE` marks a block with no visible key (above the diagonal) and `GAP` the one-pixel gutter
between cells. A log scale, because a long text spreads a row over hundreds of keys: on a linear
one a weight of 1/300 is white.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from numbers import Integral

import numpy as np

from engine.messages import Problem

MAX_CELL = 32  # pixels per side of one head's cell, at most
LEVELS = 250  # weight 1.0 is pixel value LEVELS
FLOOR = 1e-3  # the lightest weight drawn (pixel value 1); below it, 0
FUTURE = 254
GAP = 255


def query_position(query: int | None, n: int) -> int | None:
    """The run's query position for a setting (None or -1: the last), or ValueError naming
    the range."""
    if query is None or query == -1:
        return None
    if isinstance(query, bool) or not isinstance(query, Integral) or not 0 <= query < n:
        # A Problem: the page says it in the student's language ("query" is the setting's name).
        raise Problem(
            "query: position {query} is not in this text (0..{last}, or -1 for the last token)",
            query=query,
            last=n - 1,
        )
    return int(query)


class UpToQuery:
    """A run as seen from its query position: its tokens and its head records stop there.

    The keys after the query position are in that row's future; the planes and the bars draw
    the row's own keys only (a row in the middle of a long text would otherwise list hundreds
    of keys as hidden). Everything else is the run's own."""

    def __init__(self, run):
        self._run = run
        self._n = run.query_position + 1
        self.tokens = tuple(run.tokens[: self._n])

    def __getattr__(self, name):
        return getattr(self._run, name)

    def head(self, layer: int, head: int):
        rec = self._run.head(layer, head)
        n = self._n
        return replace(
            rec,
            k=rec.k[:n],
            v=rec.v[:n],
            scores=rec.scores[:n],
            logits=rec.logits[:n],
            weights=rec.weights[:n],
            legal=rec.legal[:n],
        )


def up_to_query(run):
    """`run` itself when its query is the last token, else an `UpToQuery` view of it."""
    return run if run.query_position == len(run.tokens) - 1 else UpToQuery(run)


def entropy(weights: np.ndarray) -> float:
    w = np.asarray(weights, dtype=np.float64)
    w = w[w > 0]
    return max(0.0, float(-(w * np.log(w)).sum()))


def grid_rows(run, n_layers: int, n_heads: int, layer: int, head: int) -> dict[str, list]:
    """One row per head, layer-major: what the grid's hover names, from each query row."""
    focus = int(np.argmax(run.head(layer, head).weights))
    cols: dict[str, list] = {
        k: []
        for k in ("layer", "head", "top_key", "top_token", "top_weight", "entropy", "on_focus")
    }
    for li in range(n_layers):
        for hi in range(n_heads):
            w = np.asarray(run.head(li, hi).weights, dtype=np.float64)
            top = int(np.argmax(w))
            cols["layer"].append(li)
            cols["head"].append(hi)
            cols["top_key"].append(top)
            cols["top_token"].append(run.tokens[top])
            cols["top_weight"].append(float(w[top]))
            cols["entropy"].append(entropy(w))
            cols["on_focus"].append(float(w[focus]))
    cols["focus_key"] = [focus] * len(cols["layer"])
    return cols


def encode(weights: np.ndarray) -> np.ndarray:
    """Weights as the mosaic's pixel values: 0 below `FLOOR`, else 1..`LEVELS` on a log scale
    (`LEVELS` for a weight of 1)."""
    w = np.asarray(weights, dtype=np.float64)
    span = -np.log10(FLOOR)
    with np.errstate(divide="ignore"):
        scaled = 1 + (LEVELS - 1) * (np.log10(np.maximum(w, FLOOR)) + span) / span
    return np.where(w >= FLOOR, np.rint(np.clip(scaled, 1, LEVELS)), 0).astype(np.uint8)


def block_starts(n: int, size: int = MAX_CELL) -> np.ndarray:
    """Where each of the min(n, size) pooled blocks of n positions starts."""
    s = min(n, size)
    return (np.arange(s) * n) // s


def pooled(matrix: np.ndarray, size: int = MAX_CELL) -> np.ndarray:
    """An n x n causal pattern max-pooled to at most size x size, float32; NaN where a block
    holds no visible key (every entry of it above the diagonal)."""
    a = np.asarray(matrix, dtype=np.float32)
    n = a.shape[0]
    starts = block_starts(n, size)
    pooled_ = np.maximum.reduceat(np.maximum.reduceat(a, starts, axis=0), starts, axis=1)
    # A block has a visible key when its first query row reaches its first key.
    ends = np.append(starts[1:], n) - 1  # the block's last query row
    visible = ends[:, None] >= starts[None, :]
    return np.where(visible, pooled_, np.float32(np.nan))


@dataclass(frozen=True)
class GridImage:
    image: np.ndarray  # (n_heads * pitch, n_layers * pitch) uint8, row 0 at the top
    cell: int  # pixels per side of one head's pattern
    pitch: int  # cell + the gutter


def grid_image(run, n_layers: int, n_heads: int, size: int = MAX_CELL) -> GridImage:
    """Every head's pooled pattern in one mosaic (the module docstring gives the layout)."""
    n = len(run.tokens)
    cell = min(n, size)
    pitch = cell + 1
    image = np.full((n_heads * pitch, n_layers * pitch), GAP, dtype=np.uint8)
    for li in range(n_layers):
        for hi in range(n_heads):
            p = pooled(run.head(li, hi).all_weights, size)
            values = np.where(np.isnan(p), FUTURE, encode(np.nan_to_num(p)))
            image[hi * pitch : hi * pitch + cell, li * pitch : li * pitch + cell] = values
    return GridImage(image=image, cell=cell, pitch=pitch)


def pattern(run, layer: int, head: int) -> np.ndarray:
    """The head's whole matrix (query rows x keys) in float32, NaN above the diagonal."""
    a = np.array(run.head(layer, head).all_weights, dtype=np.float32)
    n = a.shape[0]
    a[np.triu_indices(n, 1)] = np.nan
    return a
