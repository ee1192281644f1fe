"""Heads that copy: how much of each head's attention lands where a copying head would look.

Four patterns, each a set T(i) of key positions for query position i of a text's token ids t:

- previous_token: T(i) = {i - 1}, for i >= 1;
- duplicate_token: T(i) = {j < i : t_j = t_i}, an earlier copy of the same token;
- induction: T(i) = {j + 1 : j + 1 < i, t_j = t_i}, the token that followed an earlier copy;
- first_token: T(i) = {0}, for i >= 1 (the attention sink).

A position counts where T(i) is not empty, and a head's score is the mean, over the counted
positions, of the weight its row puts on T(i). A pattern with no counted position (duplicate
and induction on a text with no repeated token) scores None: nothing was measured, which is not
the same as a score of 0. docs/engine.md relates these to TransformerLens's head detector.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KINDS = ("previous_token", "duplicate_token", "induction", "first_token")
KIND_TITLES = {
    "previous_token": "previous token",
    "duplicate_token": "earlier copy of the same token",
    "induction": "token after an earlier copy (induction)",
    "first_token": "first token (sink)",
}


@dataclass(frozen=True)
class HeadScores:
    """One head's four scores (None: the text has no position where the pattern applies)."""

    layer: int
    head: int
    previous_token: float | None
    duplicate_token: float | None
    induction: float | None
    first_token: float | None

    def score(self, kind: str) -> float | None:
        if kind not in KINDS:
            raise ValueError(f"unknown head pattern {kind!r}: one of {', '.join(KINDS)}")
        return getattr(self, kind)


def target_masks(ids) -> dict[str, np.ndarray]:
    """Each pattern's targets as an (n, n) boolean matrix: row i holds T(i)."""
    t = np.asarray(ids)
    n = len(t)
    i, j = np.indices((n, n))
    same = t[:, None] == t[None, :]
    before = j < i
    previous = j == i - 1
    duplicate = same & before
    # The key after an earlier copy: row i marks j + 1 wherever t_j = t_i and j + 1 < i.
    induction = np.zeros((n, n), dtype=bool)
    induction[:, 1:] = duplicate[:, :-1] & (j[:, 1:] < i[:, 1:])
    first = (j == 0) & (i >= 1)
    return {
        "previous_token": previous,
        "duplicate_token": duplicate,
        "induction": induction,
        "first_token": first,
    }


def scores_of(weights: np.ndarray, ids) -> dict[str, np.ndarray | None]:
    """Every head's scores from its attention, `weights` (..., n, n) over the same text: per
    pattern an array of the leading shape, or None where no position counts."""
    w = np.asarray(weights, dtype=np.float64)
    found: dict[str, np.ndarray | None] = {}
    for kind, mask in target_masks(ids).items():
        counted = mask.any(axis=1)
        if not counted.any():
            found[kind] = None
            continue
        on_targets = (w * mask).sum(axis=-1)  # (..., n)
        found[kind] = on_targets[..., counted].mean(axis=-1)
    return found


def head_scores(run) -> list[HeadScores]:
    """One record per head of `run` (a `Run`: its ids and every head's attention), layer by
    layer, from the forward the run already made."""
    model = run.model
    heads = [(layer, head) for layer in range(model.n_layers) for head in range(model.n_heads)]
    weights = np.stack([run.head(layer, head).all_weights for layer, head in heads])
    found = scores_of(weights, run.ids)
    return [
        HeadScores(
            layer,
            head,
            **{k: (None if found[k] is None else float(found[k][n])) for k in KINDS},
        )
        for n, (layer, head) in enumerate(heads)
    ]


def ranked(scores: list[HeadScores], kind: str, top: int | None = None) -> list[HeadScores]:
    """The heads from the highest `kind` score down (none if the text cannot score it)."""
    scored = [s for s in scores if s.score(kind) is not None]
    scored.sort(key=lambda s: (-s.score(kind), s.layer, s.head))
    return scored if top is None else scored[:top]
