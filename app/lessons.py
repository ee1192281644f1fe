"""Guided lessons: load a scenario, ask for a prediction, act, then report what was measured.

No Panel import. Each step is data plus three small functions: `act` performs the step's action
on a `LabState` (the "do it for me" button and the tests use it), `measure` turns the snapshots
before and after into a sentence of measured numbers, and `confirms` says whether those numbers
bear out the step's right answer. The four parts follow the lab's path: the address is not the
message; how geometry becomes a route; the two controls; build it, break it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from app.state import LabSnapshot, LabState

PARTS = (
    "The address is not the message",
    "How geometry becomes a route",
    "The two controls",
    "Build it, break it",
)

Measure = Callable[[LabSnapshot, LabSnapshot], str]
Confirms = Callable[[LabSnapshot, LabSnapshot], bool]


@dataclass(frozen=True)
class LessonStep:
    part: str  # one of PARTS
    title: str
    scenario: str  # loaded first, which resets every control
    settings: Mapping[str, object]  # then these controls are set
    setup: str  # what the student sees before acting
    question: str  # the prediction to make
    choices: tuple[str, ...]  # 2 to 4 answers
    answer: int  # index of the right one
    action: str  # what to do, in words
    act: Callable[[LabState], None]
    measure: Measure
    confirms: Confirms
    takeaway: str  # shown with the measurement
    slug: str = field(default="")

    def start(self, state: LabState) -> LabSnapshot:
        """Put the lab in this step's starting position; returns the 'before' snapshot."""
        state.load_scenario(self.scenario)
        if self.settings:
            state.try_update(**dict(self.settings))
        if state.error:
            raise RuntimeError(f"lesson step {self.title!r} could not start: {state.error}")
        return state.snapshot

    def run(self, state: LabState) -> tuple[LabSnapshot, LabSnapshot, str]:
        """Start, act, and measure: (before, after, the measured sentence)."""
        before = self.start(state)
        self.act(state)
        after = state.snapshot
        return before, after, self.measure(before, after)

    def is_right(self, choice: int) -> bool:
        return choice == self.answer


# ------------------------------------------------------------------------- measurements


def _max_change(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b))) if a.shape == b.shape else float("inf")


def _moved(before: LabSnapshot, after: LabSnapshot) -> float:
    return float(np.linalg.norm(after.output - before.output))


def _top(snap: LabSnapshot) -> str:
    return f"{snap.labels[snap.winner]} ({snap.weights[snap.winner]:.2f})"


def _swap_measure(b, a):
    return (
        f"weights changed by at most {_max_change(a.weights, b.weights):.4f}; "
        f"output moved by {_moved(b, a):.2f}"
    )


def _swap_confirms(b, a):
    return _max_change(a.weights, b.weights) < 1e-12 and _moved(b, a) > 1e-6


def _winner_measure(b, a):
    return (
        f"top key before: {_top(b)}; after: {_top(a)}; largest weight change "
        f"{_max_change(a.weights, b.weights):.2f}"
    )


def _rotate_confirms(b, a):
    return b.winner == 0 and a.winner == 2


def _normalise_confirms(b, a):
    return b.labels[b.winner] == "long key" and a.labels[a.winner] == "aligned"


def _distractor_measure(b, a):
    return (
        f"{b.labels[0]}: raw score {b.scores[0]:.2f} -> {a.scores[0]:.2f}, weight "
        f"{b.weights[0]:.3f} -> {a.weights[0]:.3f} among {len(a.weights)} keys"
    )


def _distractor_confirms(b, a):
    return a.scores[0] == b.scores[0] and a.weights[0] < b.weights[0] - 0.1


def _entropy_measure(b, a):
    return (
        f"entropy {b.entropy:.2f} -> {a.entropy:.2f} nats; top weight "
        f"{b.weights.max():.2f} -> {a.weights.max():.2f}; logit spread (max - min) "
        f"{np.ptp(b.logits):.1f} -> {np.ptp(a.logits):.1f}"
    )


def _sharper(b, a):
    return a.entropy < b.entropy - 0.3


def _broader(b, a):
    return a.entropy > b.entropy + 0.3


def _ranking(s: LabSnapshot) -> list[int]:
    return [int(i) for i in np.argsort(-s.weights, kind="stable")]


def _ranking_measure(b, a):
    same = "unchanged" if _ranking(a) == _ranking(b) else "changed"
    return f"ranking {same}; " + _entropy_measure(b, a)


def _temperature_confirms(b, a):
    return _ranking(a) == _ranking(b) and a.weights.max() > b.weights.max() + 0.1


def _causal_measure(b, a):
    hidden = ~a.legal
    return (
        f"{int(hidden.sum())} keys hidden; their weight {b.weights[hidden].sum():.2f} -> "
        f"{a.weights[hidden].sum():.2f}; visible keys now share {a.weights[~hidden].sum():.2f}"
    )


def _causal_confirms(b, a):
    hidden = ~a.legal
    return bool(
        hidden.any() and np.all(a.weights[hidden] == 0) and abs(a.weights.sum() - 1) < 1e-12
    )


def _null_measure(b, a):
    return (
        f"without the null route the keys shared 1.00 (top {_top(b)}); with it the null "
        f"candidate takes {a.null_weight:.2f} and the keys {a.weights.sum():.2f}"
    )


def _null_confirms(b, a):
    return a.null_weight is not None and a.null_weight > 0.5 and a.null_weight > a.weights.max()


def _permute_measure(b, a):
    reordered = _max_change(a.weights, b.weights[::-1])
    return (
        f"output moved by {_moved(b, a):.2e}; weights differ from the old ones read backwards "
        f"by at most {reordered:.2e}"
    )


def _permute_confirms(b, a):
    return _moved(b, a) < 1e-9 and _max_change(a.weights, b.weights[::-1]) < 1e-12


def _sharp_temperature_confirms(b, a):
    return a.winner == b.winner and a.entropy > b.entropy + 0.3


def _reverse_pairs(state: LabState) -> None:
    state.permute_pairs(list(range(len(state.keys)))[::-1])


# ------------------------------------------------------------------------- the steps

LESSONS: tuple[LessonStep, ...] = (
    LessonStep(
        part=PARTS[0],
        slug="swap-values",
        title="Swap the payloads",
        scenario="basic",
        settings={},
        setup=(
            "One query, three keys A, B and C, each paired with a value. The keys decide who "
            "is listened to; the values are what gets passed on."
        ),
        question="If you swap the values of A and B, and leave the keys alone, what happens?",
        choices=(
            "The weights swap as well",
            "The weights stay exactly the same and the output moves",
            "Nothing changes at all",
        ),
        answer=1,
        action="Swap the values of A and B.",
        act=lambda s: s.swap_values(0, 1),
        measure=_swap_measure,
        confirms=_swap_confirms,
        takeaway=(
            "Weights are computed from the query and the keys only. A value never votes on "
            "its own weight; it only decides what the chosen route delivers."
        ),
    ),
    LessonStep(
        part=PARTS[1],
        slug="rotate-query",
        title="Turn the query",
        scenario="basic",
        settings={},
        setup="The query points right, along A. A gets the largest weight.",
        question="Rotate the query by 90 degrees so it points straight up. Which key wins?",
        choices=("A still wins", "C wins: it points up", "All three end up equal"),
        answer=1,
        action="Set the query angle to 90 degrees.",
        act=lambda s: s.param.update(angle=90.0),
        measure=_winner_measure,
        confirms=_rotate_confirms,
        takeaway=(
            "A new query rescores every key. The route follows the dot product, so the key "
            "best lined up with the query collects the weight."
        ),
    ),
    LessonStep(
        part=PARTS[1],
        slug="length-counts",
        title="Length counts as well as direction",
        scenario="sharp",
        settings={},
        setup=(
            "The 'long key' points about 41 degrees away from the query, yet it takes almost "
            "the whole route. 'aligned' points exactly where the query does."
        ),
        question="Make the query and every key unit length. Which key wins now?",
        choices=("The long key, still", "The aligned key", "No key: the weights become equal"),
        answer=1,
        action="Switch on 'normalise q/k'.",
        act=lambda s: s.param.update(normalise=True),
        measure=_winner_measure,
        confirms=_normalise_confirms,
        takeaway=(
            "A dot product rewards length as much as alignment. When normalising hands the "
            "route to another key, the norm was carrying the decision."
        ),
    ),
    LessonStep(
        part=PARTS[1],
        slug="local-contest",
        title="Softmax is a local contest",
        scenario="contest",
        settings={},
        setup="Three keys with logits 2, 1 and 0 share the route about 0.67 / 0.24 / 0.09.",
        question=(
            "Add 64 unrelated distractor keys. The top key's raw score does not change. What "
            "happens to its weight?"
        ),
        choices=(
            "It stays at 0.67: its score did not change",
            "It falls: the newcomers take a share of the route",
            "It rises",
        ),
        answer=1,
        action="Set distractors to 64.",
        act=lambda s: s.param.update(distractors=64),
        measure=_distractor_measure,
        confirms=_distractor_confirms,
        takeaway=(
            "A weight only means something against the other candidates. More candidates "
            "dilute the route even when the useful key scores exactly as before."
        ),
    ),
    LessonStep(
        part=PARTS[2],
        slug="dimension-unscaled",
        title="Dimension without scaling",
        scenario="basic",
        settings={"scale": False},
        setup=(
            "Scaling is off and d_k is 2. The lab can add hidden dimensions with random "
            "components: the plane you see stays the same."
        ),
        question="Raise d_k from 2 to 512 with scaling still off. What happens to the route?",
        choices=(
            "Nothing: the visible geometry did not move",
            "It sharpens: the entropy falls",
            "It flattens: the entropy rises",
        ),
        answer=1,
        action="Set d_k to 512.",
        act=lambda s: s.param.update(d_k=512),
        measure=_entropy_measure,
        confirms=_sharper,
        takeaway=(
            "Each hidden dimension adds a random product to every dot product, so the logits "
            "spread like sqrt(d_k). The route sharpens for statistical reasons, not because "
            "any key became more relevant."
        ),
    ),
    LessonStep(
        part=PARTS[2],
        slug="scale-on",
        title="Scaling brings the contest back",
        scenario="basic",
        settings={"scale": False, "d_k": 512},
        setup="d_k is 512, scaling is off, and one key takes almost everything.",
        question="Switch the 1/sqrt(d_k) scale on. What happens?",
        choices=(
            "The route stays just as sharp",
            "The logits shrink by sqrt(512), about 22.6, and the route broadens again",
            "The winner changes",
        ),
        answer=1,
        action="Switch 'scale' on.",
        act=lambda s: s.param.update(scale=True),
        measure=_entropy_measure,
        confirms=_broader,
        takeaway=(
            "Dividing by sqrt(d_k) cancels the growth that dimension alone causes, so several "
            "keys can still compete however wide the vectors are."
        ),
    ),
    LessonStep(
        part=PARTS[2],
        slug="temperature",
        title="Temperature keeps the ranking",
        scenario="contest",
        settings={},
        setup="Logits 2, 1, 0 at temperature 1.",
        question="Lower the temperature from 1 to 0.25. What happens?",
        choices=(
            "The order of the keys changes",
            "Same order; the top key's weight rises toward 1",
            "Same order and the same weights",
        ),
        answer=1,
        action="Set the temperature to 0.25.",
        act=lambda s: s.param.update(temperature=0.25),
        measure=_ranking_measure,
        confirms=_temperature_confirms,
        takeaway=(
            "Temperature divides every logit by the same positive number: it never reorders "
            "keys, it only decides how decisively the leader wins."
        ),
    ),
    LessonStep(
        part=PARTS[3],
        slug="causal-mask",
        title="What the query may not see",
        scenario="bank",
        settings={},
        setup=(
            "'The bank approved the loan': the query sits at 'approved' (position 3). "
            "'the (2)' and 'loan' come after it."
        ),
        question="Switch causal on. What weight do the two later words get?",
        choices=(
            "Exactly zero, and the earlier words share the whole route",
            "Half of what they had",
            "The same as before",
        ),
        answer=0,
        action="Switch 'causal' on.",
        act=lambda s: s.param.update(causal=True),
        measure=_causal_measure,
        confirms=_causal_confirms,
        takeaway=(
            "A masked key is not a weak candidate; it is not a candidate. Its weight is "
            "exactly zero, the same as deleting it."
        ),
    ),
    LessonStep(
        part=PARTS[3],
        slug="null-route",
        title="A route that may refuse",
        scenario="null_route",
        settings={"null_route": False},
        setup=(
            "No key points where the query looks, yet the weights still add up to one: "
            "softmax always hands out the whole route."
        ),
        question=(
            "Turn on the null route (a zero key and zero value with logit 2). What takes most "
            "of the route?"
        ),
        choices=(
            "north, the least bad key",
            "The null candidate: most of the route is refused",
            "The three keys equally",
        ),
        answer=1,
        action="Switch 'null route' on.",
        act=lambda s: s.param.update(null_route=True),
        measure=_null_measure,
        confirms=_null_confirms,
        takeaway=(
            "Softmax cannot say 'none of these'. A null candidate with a threshold gives the "
            "router a way to refuse, and its weight measures how much was refused."
        ),
    ),
    LessonStep(
        part=PARTS[3],
        slug="audit-permute",
        title="An audit by hand: reorder the pairs",
        scenario="basic",
        settings={},
        setup=(
            "An audit checks that the implementation obeys the mechanism. One check: the "
            "order in which keys are listed should not matter."
        ),
        question=(
            "Reverse the order of the key/value pairs, moving each value with its key. What "
            "happens to the output?"
        ),
        choices=(
            "It stays the same; the weights travel with their keys",
            "It changes, because attention reads keys in order",
        ),
        answer=0,
        action="Reverse the pairs (or run the audit panel, which checks this and more).",
        act=_reverse_pairs,
        measure=_permute_measure,
        confirms=_permute_confirms,
        takeaway=(
            "Without a mask or positions, attention treats its keys as a set. A passing audit "
            "shows the code obeys such invariants; it does not show a model learned anything."
        ),
    ),
    LessonStep(
        part=PARTS[3],
        slug="why-sharp",
        title="Why is it sharp? Test one cause",
        scenario="sharp",
        settings={},
        setup=(
            "One key holds about 0.98 of the route at temperature 0.5. The diagnosis panel "
            "tests four causes; here you test one of them yourself."
        ),
        question="Raise the temperature from 0.5 to 4. What do you expect to see?",
        choices=(
            "The same key still leads, but the route is much broader",
            "A different key takes over",
            "Nothing changes",
        ),
        answer=0,
        action="Set the temperature to 4.",
        act=lambda s: s.param.update(temperature=4.0),
        measure=_ranking_measure,
        confirms=_sharp_temperature_confirms,
        takeaway=(
            "Each cause predicts its own response: temperature softens without reordering, "
            "normalising exposes norm, scaling exposes dimension, rotating the query exposes "
            "a key that wins whatever is asked. Run 'Why is it sharp?' to measure all four."
        ),
    ),
)

LESSONS_BY_SLUG: Mapping[str, LessonStep] = MappingProxyType({s.slug: s for s in LESSONS})
