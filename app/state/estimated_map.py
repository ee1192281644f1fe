"""The causal map's first picture, from the attribution estimate. Panel-free.

The exact causal map removes every head in turn: seconds on a short sentence, minutes on a long
text. The estimate of every head's effect comes from one backward pass (`ReceiptState`), so the
map's picture is drawn from it at once: each head's weight on the token and the norm of what it
writes, read from the run the estimate is of (`QueryRows`), beside its estimated change of log
P(answer). It is an engine `CausalMap`, so the view draws it as it draws the exact one, marked
as estimated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.trained import causal

NOT_MEASURED = "not measured yet"  # the estimate says nothing about the answer without the head


@dataclass(frozen=True)
class QueryRows:
    """What the map's picture reads from a plain run, for every head at the run's query
    position: the weights of the query's row and the norm of what the head writes there.
    Kilobytes, where a run of SmolLM2 on a long text is hundreds of MB (more than the run cache
    keeps): the page keeps these (`attribution_runs.query_rows`), not the run."""

    text: str
    tokens: tuple[str, ...]
    query_position: int
    weights: dict  # (layer, head) -> the query row's weights, one per key
    contribution: dict  # (layer, head) -> the norm of what the head writes at the query

    @classmethod
    def of(cls, run) -> QueryRows:
        heads = [(lh, run.head(*lh)) for lh in _heads(run.model)]
        return cls(
            text=run.text,
            tokens=tuple(run.tokens),
            query_position=int(run.query_position),
            weights={lh: np.array(h.weights, dtype=np.float64) for lh, h in heads},
            contribution={lh: float(np.linalg.norm(h.contribution)) for lh, h in heads},
        )

    @property
    def nbytes(self) -> int:
        return 4096 + sum(w.nbytes + 200 for w in self.weights.values())


def _heads(model) -> list[tuple[int, int]]:
    return [(layer, head) for layer in range(model.n_layers) for head in range(model.n_heads)]


def estimated_map(amap, rows: QueryRows, token: int) -> causal.CausalMap:
    """A `CausalMap` whose effects are `amap`'s estimates (an attribution map of the ablation
    effect, no corrupted text) and whose weights are every head's weight on `token` in `rows`,
    read from the plain run `amap` is of."""
    if amap.corrupted is not None:
        raise ValueError(
            "the causal map is estimated from an ablation estimate, not a patching one"
        )
    if rows.text != amap.text:
        raise ValueError("the run and the estimate are of two different texts")
    if not 0 <= token <= rows.query_position:
        raise ValueError(f"token position {token} is out of range 0..{rows.query_position}")
    records = []
    for r in amap.records:
        lh = (r.layer, r.head)
        records.append(
            causal.HeadEffect(
                layer=r.layer,
                head=r.head,
                weight=float(rows.weights[lh][token]),
                contribution=rows.contribution[lh],
                effect=float(r.estimate),
                effect_prob=float(amap.prob * math.expm1(r.estimate)),
                answer=amap.answer,
                ablated_answer=NOT_MEASURED,
            )
        )
    return causal.CausalMap(
        text=amap.text,
        answer=amap.answer,
        token=int(token),
        token_text=rows.tokens[token],
        prob=float(amap.prob),
        records=tuple(records),
    )
