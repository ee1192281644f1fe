"""The attribution map's notes in words a student understands. Panel-free.

The engine's note names each reason with its measurement ("saturated: P(answer) = 1.000, where
log P is nearly flat; large step: 0.45 of the residual stream it changes; ..."); the tab and
the lesson say what it means for trusting the estimate.
"""

from __future__ import annotations

import re

_NUMBER = r"(-?\d+(?:\.\d+)?)"


def _saturated(p: str) -> str:
    return (
        f"the model is already sure of its answer (P = {float(p):.2%}), where the probability "
        "curve is flat: a small nudge barely moves it, so the gradient cannot see what "
        "removing the whole head does"
    )


def _large_step(size: str) -> str:
    return (
        f"removing this head changes the layer's input by {float(size):.0%} of its size: too "
        "big a change for a straight-line estimate, and later heads may repair or amplify it"
    )


def _cancelling(share: str) -> str:
    return (
        "its effects at different positions pull in opposite directions and mostly cancel "
        f"(what is left is {float(share):.0%} of their total), so a small error in each can "
        "flip the sum"
    )


# A reason's own text may hold "; " (the large step's does): split only where a reason starts.
_SPLIT = re.compile(r"; (?=saturated:|large step:|cancelling:)")
_RULES = (
    (re.compile(r"saturated: P\(answer\) = " + _NUMBER), _saturated),
    (re.compile(r"large step: " + _NUMBER), _large_step),
    (re.compile(r"cancelling: the positions' terms sum to " + _NUMBER), _cancelling),
)


def reasons(note: str | None) -> list[str]:
    """Each reason the engine's note gives, in plain words (an unknown one is kept as it is)."""
    out = []
    for part in _parts(note):
        for pattern, words in _RULES:
            found = pattern.match(part)
            if found:
                out.append(words(found.group(1)))
                break
        else:
            out.append(part)
    return out


def short(note: str | None) -> str:
    """The reasons' names alone, for a hover ("saturated, large step"; "" for none)."""
    return ", ".join(part.split(":", 1)[0] for part in _parts(note))


def _parts(note: str | None) -> list[str]:
    return [part for part in _SPLIT.split(note or "") if part]
