"""The causal map's first picture, from the attribution estimate. Panel-free.

The exact causal map removes every head in turn: seconds on a short sentence, minutes on a long
text. The estimate of every head's effect comes from one backward pass (`ReceiptState`), so the
map's picture is drawn from it at once: each head's weight on the token and the norm of what it
writes, read from the run the estimate is of, beside its estimated change of log P(answer). It
is an engine `CausalMap`, so the view draws it as it draws the exact one, marked as estimated.
"""

from __future__ import annotations

import math

import numpy as np

from engine.trained import causal

NOT_MEASURED = "not measured yet"  # the estimate says nothing about the answer without the head


def estimated_map(amap, run, token: int) -> causal.CausalMap:
    """A `CausalMap` whose effects are `amap`'s estimates (an attribution map of the ablation
    effect, no corrupted text) and whose weights are every head's weight on `token` in `run`,
    the plain run `amap` is of."""
    if amap.corrupted is not None:
        raise ValueError(
            "the causal map is estimated from an ablation estimate, not a patching one"
        )
    if run.text != amap.text:
        raise ValueError("the run and the estimate are of two different texts")
    if not 0 <= token <= run.query_position:
        raise ValueError(f"token position {token} is out of range 0..{run.query_position}")
    records = []
    for r in amap.records:
        head = run.head(r.layer, r.head)
        records.append(
            causal.HeadEffect(
                layer=r.layer,
                head=r.head,
                weight=float(head.weights[token]),
                contribution=float(np.linalg.norm(head.contribution)),
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
        token_text=run.tokens[token],
        prob=float(amap.prob),
        records=tuple(records),
    )
