"""The attribution map's notes in words a student understands. Panel-free.

The engine's note names each reason with its measurement ("saturated: P(answer) = 1.000, where
log P is nearly flat; large step: 0.45 of the residual stream it changes; ..."); the tab and
the lesson say what it means for trusting the estimate.
"""

from __future__ import annotations

import math
import re

from engine.trained.attribution import SATURATED_P

_NUMBER = r"(-?\d+(?:\.\d+)?)"


def percent(p: float) -> str:
    """A probability with the digits that tell 0.9999 from 1 (a saturated answer's are all)."""
    if p < 0.99:
        return f"{p:.1%}"
    return f"{p:.2%}" if p < 0.999 else f"{p:.4%}"


def _saturated(p: str) -> str:
    return (
        f"the model is already sure of its answer (P = {percent(float(p))}), where the "
        "probability curve is flat: a small nudge barely moves it, so the gradient cannot see "
        "what removing a whole head does"
    )


def _large_step(size: str) -> str:
    return (
        f"removing this head changes the layer's input by {float(size):.0%} of its size: too "
        "big a change for a straight-line estimate, and later heads may repair or amplify it"
    )


def _cancelling(share: str) -> str:
    left = float(share)
    # Rounded to 0% it read as if nothing were left: say "under 1%" instead.
    amount = "under 1%" if left < 0.005 else f"{left:.0%}"
    return (
        "its effects at different positions pull in opposite directions and mostly cancel "
        f"(what is left is {amount} of their total), so a small error in each can "
        "flip the sum"
    )


# A reason's own text may hold "; " (the large step's does): split only where a reason starts.
_SPLIT = re.compile(r"; (?=saturated:|large step:|cancelling:)")
_RULES = (
    (re.compile(r"saturated: P\(answer\) = " + _NUMBER), _saturated),
    (re.compile(r"large step: " + _NUMBER), _large_step),
    (re.compile(r"cancelling: the positions' terms sum to " + _NUMBER), _cancelling),
)


def reasons(note: str | None, leave_out: tuple[str, ...] = ()) -> list[str]:
    """Each reason the engine's note gives, in plain words (an unknown one is kept as it is),
    less those named in ``leave_out`` ("saturated": the page says it once per sentence)."""
    out = []
    for part in _parts(note):
        if part.startswith(leave_out):
            continue
        for pattern, words in _RULES:
            found = pattern.match(part)
            if found:
                out.append(words(found.group(1)))
                break
        else:
            out.append(part)
    return out


def sentence_warning(p: float) -> str:
    """The reason that holds for every head of a sentence whose answer has probability ``p``
    ("" when the answer is not saturated)."""
    return _saturated(str(p)) if p >= SATURATED_P else ""


def short(note: str | None) -> str:
    """The reasons' names alone, for a hover ("saturated, large step"; "" for none)."""
    return ", ".join(part.split(":", 1)[0] for part in _parts(note))


def _parts(note: str | None) -> list[str]:
    return [part for part in _SPLIT.split(note or "") if part]


# How alike two orders of the same heads are, by their rank correlation, in words a student
# can say aloud (1: the same order, 0: no relation, -1: the reverse).
_ORDERS = (
    (0.8, "almost the same order"),
    (0.5, "much the same order"),
    (0.2, "only loosely the same order"),
    (-0.2, "no clear order at all"),
)


def order_words(rho: float) -> str:
    """The estimate's order of the heads against the real one, in words with the number."""
    if math.isnan(rho):
        return "an order that cannot be compared (every value is the same)"
    said = next((words for floor, words in _ORDERS if rho >= floor), "roughly the reverse order")
    return f"{said} (rank correlation {rho:.2f}: 1 is the same order, 0 no relation)"


def probability_factor(change: float) -> str:
    """A change of log P as what it does to the probability: -0.69 -> "× 0.50"."""
    factor = math.exp(change)
    if factor >= 100:
        return f"× {factor:.0f}"
    return f"× {factor:.2f}" if factor >= 0.01 else f"× {factor:.0e}".replace("e-0", "e-")


LOG_P_WORDS = (
    "log P is the logarithm of the answer's probability: a change of −0.7 halves the "
    "probability, −2.3 leaves a tenth of it, +0.7 doubles it"
)
