"""What changed, in one sentence a screen reader can say (no Panel, no Bokeh).

The page announces a change once it has settled (app/views/announcer.py): `route_change`
compares the route announced last with the route now, so a drag or a slider sweep is described
from where it started to where it stopped ("The route moved from key A to key C: C 61%, A
22%."). A change that leaves the weights alone says what moved instead (the output, after a
swap of values).
"""

from __future__ import annotations

import numpy as np

SAME = 5e-4  # output coordinates closer than this read as unchanged


def share(x: float) -> str:
    """A weight as a whole percent, never 0% or 100% for a weight strictly between them."""
    p = 100 * float(x)
    if 0 < p < 0.5:
        return "under 1%"
    if 99.5 <= p < 100:
        return "over 99%"
    return f"{p:.0f}%"


def leaders(snap, k: int = 2) -> str:
    """The k heaviest keys with their weights: "C 61%, A 22%" (and the null route's share)."""
    w = np.asarray(snap.weights, dtype=np.float64)
    order = np.argsort(-w, kind="stable")[:k]
    text = ", ".join(f"{snap.labels[i]} {share(w[i])}" for i in order)
    if snap.null_weight is not None:
        text += f", the null route {share(snap.null_weight)}"
    return text


def _point(p) -> str:
    return f"({float(p[0]):.2f}, {float(p[1]):.2f})"


def route_change(before, after) -> str:
    """One sentence on how the route went from `before` to `after` (None: nothing before)."""
    if before is None or tuple(before.labels) != tuple(after.labels):
        return f"The route now: {leaders(after)}."
    top_before, top_after = before.labels[before.winner], after.labels[after.winner]
    if top_before != top_after:
        return f"The route moved from key {top_before} to key {top_after}: {leaders(after)}."
    if leaders(before) != leaders(after):  # a change too small to show in whole percent: none
        was = share(before.weights[before.winner])
        return f"The route stays on key {top_after}: {leaders(after)} (it had {was})."
    if not np.allclose(before.weights, after.weights, atol=SAME, rtol=0):
        return ""  # the route moved, by less than a whole percent: nothing worth saying
    if not np.allclose(before.output, after.output, atol=SAME, rtol=0):
        return (
            f"The weights did not change; the output moved from {_point(before.output)} to "
            f"{_point(after.output)}."
        )
    return ""


def vote_counted(choice: str) -> str:
    return f"Your prediction is counted for the class: {choice}."
