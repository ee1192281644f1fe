"""What a lesson step holds back until it is measured: the views that would answer its question.

No Panel import. A step declares, in its `reveals` field, which of these its question asks
about; until the student presses Measure (and, on a student's page in a class, until the
teacher reveals the step) the page draws those views neutral, so a vote measures thinking, not
reading. The page maps each name to its own views (app/page/held.py); the headline, which
states both the route and the answer, is neutral while anything is held.
"""

from __future__ import annotations

from collections.abc import Iterable

WEIGHTS = "weights"  # where the route goes: weights, logits, entropy, every head's pattern
PLANES = "planes"  # the planes themselves: a trained head's projections show the route too
ANSWER = "answer"  # the trained model's answer and its probability

HELD = {
    WEIGHTS: "the weights, logits and analysis plots, and the output on the payload plane",
    PLANES: "both planes (for a step with nothing to do, where they show the route)",
    ANSWER: "the model's answer chart and the loss of each token",
}

# The usual declarations.
ROUTE = frozenset({WEIGHTS})
ROUTE_AND_ANSWER = frozenset({WEIGHTS, ANSWER})
# A step with nothing to do asks about what is already drawn: the planes give it away.
EVERYTHING = frozenset({WEIGHTS, PLANES, ANSWER})


def check(title: str, names: Iterable[str]) -> None:
    """A step's declaration, checked when the step is made: an unknown name is a typo that
    would hold nothing back."""
    unknown = set(names) - set(HELD)
    if unknown:
        raise ValueError(
            f"lesson step {title!r} holds back unknown views {sorted(unknown)}; known: "
            f"{sorted(HELD)}"
        )
