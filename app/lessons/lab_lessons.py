"""Guided lessons: load a scenario, ask for a prediction, act, then report what was measured.

No Panel import. Each step is data plus three small functions: `act` performs the step's action
on a `LabState` (the "do it for me" button and the tests use it), `measure` turns the snapshots
before and after into a sentence of measured numbers, and `confirms` says whether those numbers
bear out the step's right answer. The four parts follow the lab's path: the address is not the
message; how geometry becomes a route; the two controls; build it, break it.

Control names in a step's text are written in **bold**, exactly as the page labels them (or the
label without its bracketed note: **Temperature τ** for "Temperature τ (log scale)"); a test
checks every one against the widgets of the real page. `confirms` judges what the student did,
whatever the route (slider, drag, typed numbers, "Do it for me"), from the snapshots alone.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from app.i18n.markers import N_
from app.i18n.said import Said
from app.lessons import reveals
from app.lessons.numbers import fixed, integer, percent, signed, significant
from app.state.lab_state import LabState
from engine.snapshot import LabSnapshot

PARTS = (
    N_("The address is not the message"),
    N_("How geometry becomes a route"),
    N_("The two controls"),
    N_("Build it, break it"),
)

Measure = Callable[[LabSnapshot, LabSnapshot], Said]
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
    # The views held back until Measure (app/lessons/reveals.py): every hand-made question is
    # about the route, and the planes stay live, as the student acts on them.
    reveals: frozenset[str] = reveals.ROUTE

    def __post_init__(self) -> None:
        reveals.check(self.title, self.reveals)

    def start(self, state: LabState) -> LabSnapshot:
        """Put the lab in this step's starting position; returns the 'before' snapshot."""
        # One change, not two: a follower's page redraws once per step.
        state.load_scenario(self.scenario, **dict(self.settings))
        if state.error:
            raise RuntimeError(f"lesson step {self.title!r} could not start: {state.error}")
        return state.snapshot

    def run(self, state: LabState) -> tuple[LabSnapshot, LabSnapshot, Said]:
        """Start, act, and measure: (before, after, the measured sentence, English as `str`)."""
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


def _point(p: np.ndarray) -> Said:
    # TRANSLATORS: a point of the plane, (x, y); where a decimal comma is used, a semicolon
    # between the two keeps them apart: "(0,5; 1,2)".
    return Said("({x}, {y})", x=fixed(p[0], 1), y=fixed(p[1], 1))


def _scientific(x: float) -> Said | str:
    """`f"{x:.2e}"` ("1.23e-05"), its mantissa written the way the language writes it."""
    if not math.isfinite(x):
        return f"{x:.2e}"
    mantissa, exponent = f"{x:.2e}".split("e")
    # TRANSLATORS: a number in scientific notation, 1.23e-05; keep it as it is.
    return Said("{mantissa}e{exponent}", mantissa=fixed(float(mantissa), 2), exponent=exponent)


def _top(snap: LabSnapshot) -> Said:
    # TRANSLATORS: a key's label and its weight: "A (0.67)".
    return Said("{key} ({weight})", key=_winner(snap), weight=fixed(snap.weights[snap.winner]))


def _winner(snap: LabSnapshot) -> str:
    return snap.labels[snap.winner]


def _entropy(snap: LabSnapshot) -> float:
    return max(0.0, snap.entropy)  # a one-hot route can round to -1e-17


def _plane_leader(snap: LabSnapshot) -> int:
    """The legal key that scores best on the visible plane alone (q.k in two dimensions)."""
    visible = np.where(snap.legal, snap.keys @ snap.query, -np.inf)
    return int(np.argmax(visible))


def _hidden_note(snap: LabSnapshot) -> Said | str:
    """When hidden dimensions put another key on top than the plane does, say so, measured."""
    top, leader = snap.winner, _plane_leader(snap)
    if snap.d_k <= 2 or top == leader:
        return ""
    hidden = snap.scores - snap.keys @ snap.query
    # TRANSLATORS: added to a measurement after d_k is raised; starts with "; ".
    return Said(
        "; {winner} wins, not {leader}, which lines up best in the plane: the {count} hidden "
        "random components add {to_winner} to {winner}'s score and {to_leader} to {leader}'s, "
        "so they decide the winner, not the geometry you see",
        winner=snap.labels[top],
        leader=snap.labels[leader],
        count=integer(snap.d_k - 2),
        to_winner=signed(hidden[top]),
        to_leader=signed(hidden[leader]),
    )


def _swap_measure(b, a):
    return Said(
        "weights changed by at most {change}; output moved by {moved}, from {before} to {after}",
        change=fixed(_max_change(a.weights, b.weights), 4),
        moved=fixed(_moved(b, a)),
        before=_point(b.output),
        after=_point(a.output),
    )


def _swap_confirms(b, a):
    return _max_change(a.weights, b.weights) < 1e-12 and _moved(b, a) > 1e-6


def _turn_degrees(b, a) -> float:
    """Signed angle (degrees, anticlockwise positive) from the old query to the new one."""
    turn = math.atan2(a.query[1], a.query[0]) - math.atan2(b.query[1], b.query[0])
    return math.degrees((turn + math.pi) % (2 * math.pi) - math.pi)


def _rotate_measure(b, a):
    return Said(
        "the query turned by {degrees} degrees; {winner}",
        degrees=fixed(_turn_degrees(b, a), 0),
        winner=_winner_measure(b, a),
    )


def _rotate_confirms(b, a):
    # A quarter turn anticlockwise by any route (slider, keys, dragging the tip), within 15
    # degrees: a hand on a mouse is not a protractor.
    return abs(_turn_degrees(b, a) - 90) <= 15 and _winner(a) == "C" and _winner(b) != "C"


def _winner_measure(b, a):
    return Said(
        "top key before: {before}; after: {after}; largest weight change {change}",
        before=_top(b),
        after=_top(a),
        change=fixed(_max_change(a.weights, b.weights)),
    )


def _normalise_confirms(b, a):
    unit = np.allclose(np.linalg.norm(a.keys, axis=1), 1, atol=0.02) and math.isclose(
        float(np.linalg.norm(a.query)), 1, abs_tol=0.02
    )
    return unit and _winner(b) == "long key" and _winner(a) == "aligned"


def _distractor_measure(b, a):
    return Said(
        "{key}: raw score {score_before} -> {score_after}, weight {weight_before} -> "
        "{weight_after} among {keys} keys ({added} of them distractors)",
        key=b.labels[0],
        score_before=fixed(b.scores[0]),
        score_after=fixed(a.scores[0]),
        weight_before=fixed(b.weights[0], 3),
        weight_after=fixed(a.weights[0], 3),
        keys=integer(len(a.weights)),
        added=integer(len(a.weights) - a.n_pairs),
    )


def _distractor_confirms(b, a):
    return a.scores[0] == b.scores[0] and a.weights[0] < b.weights[0] - 0.1


def _entropy_measure(b, a):
    return Said(
        "entropy {before} -> {after} nats; top weight {top_before} -> {top_after}; logit "
        "spread (max - min) {spread_before} -> {spread_after}",
        before=fixed(_entropy(b)),
        after=fixed(_entropy(a)),
        top_before=fixed(b.weights.max()),
        top_after=fixed(a.weights.max()),
        spread_before=fixed(np.ptp(b.logits), 1),
        spread_after=fixed(np.ptp(a.logits), 1),
    )


def _dimension_measure(b, a):
    return Said(
        "d_k {before} -> {after}; {entropy}{hidden}",
        before=integer(b.d_k),
        after=integer(a.d_k),
        entropy=_entropy_measure(b, a),
        hidden=_hidden_note(a),
    )


def _sharper(b, a):
    return _entropy(a) < _entropy(b) - 0.3


def _broader(b, a):
    return _entropy(a) > _entropy(b) + 0.3


def _scale_measure(b, a):
    return Said(
        "scale factor {before} -> {after}; {entropy}{hidden}",
        before=fixed(b.scale_factor, 3),
        after=fixed(a.scale_factor, 3),
        entropy=_entropy_measure(b, a),
        hidden=_hidden_note(a),
    )


def _scale_confirms(b, a):
    return a.scale_factor < b.scale_factor and _broader(b, a)


def _ranking(s: LabSnapshot) -> list[int]:
    return [int(i) for i in np.argsort(-s.weights, kind="stable")]


def _ranking_measure(b, a):
    values = {
        "before": significant(b.temperature),
        "after": significant(a.temperature),
        "entropy": _entropy_measure(b, a),
    }
    if _ranking(a) == _ranking(b):
        return Said("temperature {before} -> {after}; ranking unchanged; {entropy}", **values)
    return Said("temperature {before} -> {after}; ranking changed; {entropy}", **values)


def _temperature_confirms(b, a):
    return (
        a.temperature < b.temperature
        and _ranking(a) == _ranking(b)
        and a.weights.max() > b.weights.max() + 0.1
    )


def _causal_measure(b, a):
    hidden = ~a.legal
    return Said(
        "{count} keys hidden; their weight {before} -> {after}; visible keys now share {visible}",
        count=integer(int(hidden.sum())),
        before=fixed(b.weights[hidden].sum()),
        after=fixed(a.weights[hidden].sum()),
        visible=fixed(a.weights[~hidden].sum()),
    )


def _causal_confirms(b, a):
    hidden = ~a.legal
    return bool(
        hidden.any() and np.all(a.weights[hidden] == 0) and abs(a.weights.sum() - 1) < 1e-12
    )


def _null_measure(b, a):
    if a.null_weight is None:
        return Said(
            "the null route is off; the keys share {share} (top {top})",
            share=fixed(a.weights.sum()),
            top=_top(a),
        )
    return Said(
        "without the null route the keys shared {share_before} (top {top}); with it the null "
        "candidate, at logit {logit}, takes {null} and the keys {share_after}",
        share_before=fixed(b.weights.sum()),
        top=_top(b),
        logit=fixed(a.null_logit, 1),
        null=fixed(a.null_weight),
        share_after=fixed(a.weights.sum()),
    )


def _null_confirms(b, a):
    return a.null_weight is not None and a.null_weight > 0.5 and a.null_weight > a.weights.max()


def _by_label(s: LabSnapshot) -> dict[str, float]:
    return {label: float(w) for label, w in zip(s.labels[: s.n_pairs], s.weights, strict=False)}


def _kept_weights(b, a) -> float:
    """Largest change in any key's weight, matching keys by label (they moved position)."""
    old, new = _by_label(b), _by_label(a)
    if old.keys() != new.keys():
        return float("inf")
    return max(abs(old[k] - new[k]) for k in old)


def _permute_measure(b, a):
    return Said(
        "order {before} -> {after}; output moved by {moved}; each key kept its weight to "
        "within {kept}",
        before=", ".join(b.labels[: b.n_pairs]),  # the keys' own labels: data
        after=", ".join(a.labels[: a.n_pairs]),
        moved=_scientific(_moved(b, a)),
        kept=_scientific(_kept_weights(b, a)),
    )


def _permute_confirms(b, a):
    # Any reordering counts, not only the reversal: the claim is about order in general.
    reordered = a.labels[: a.n_pairs] != b.labels[: b.n_pairs]
    return reordered and _moved(b, a) < 1e-9 and _kept_weights(b, a) < 1e-12


def _sharp_temperature_confirms(b, a):
    return a.temperature > b.temperature and a.winner == b.winner and _broader(b, a)


def diagnose_start(scenario: str):
    """The four-cause diagnosis of a scenario as it loads: the route a step starts from, not the
    one the student's action left on screen (`LabState.diagnose` reads the lab as it is)."""
    start = LabState()
    start.load_scenario(scenario)
    return start.diagnose()


# The diagnosis's causes (engine/diagnosis.py CAUSES), as the sentence names them.
CAUSE_WORDS = {
    "alignment": N_("alignment"),
    "key_norm": N_("key norm"),
    "dimension_scale": N_("dimension scale"),
    "temperature": N_("temperature"),
}


def _listed(words: list[str]) -> Said | str:
    """Words as a list, "a, b, c", each translated, joined the way the language joins them."""
    if not words:
        return Said("none of the four")
    if len(words) == 1:
        return Said(words[0])
    # TRANSLATORS: joins the items of a list: "alignment, key norm".
    return Said("{first}, {rest}", first=Said(words[0]), rest=_listed(words[1:]))


def _sharp_measure(b, a):
    # The step points the student to "Why is it sharp?", but after the action the lab holds a
    # broad route (about 41%) whose causes differ: the diagnosis is of the sharp start instead.
    report = diagnose_start("sharp")
    causes = [
        CAUSE_WORDS.get(f.cause, f.cause.replace("_", " ")) for f in report.ranked if f.implicated
    ]
    return Said(
        "{ranking}. Why is it sharp?, run on the route you started from (temperature "
        "{temperature}): {winner} holds {share}; the causes that move it, strongest first: "
        "{causes}",
        ranking=_ranking_measure(b, a),
        temperature=significant(b.temperature),
        winner=report.winner_label,
        share=percent(report.max_weight, 1),
        causes=_listed(causes),
    )


def _reverse_pairs(state: LabState) -> None:
    state.permute_pairs(list(range(len(state.keys)))[::-1])


# ------------------------------------------------------------------------- the steps

LESSONS: tuple[LessonStep, ...] = (
    LessonStep(
        part=PARTS[0],
        slug="swap-values",
        title=N_("Swap the payloads"),
        scenario="basic",
        # A cool temperature makes A lead clearly, so swapping its value moves the output a
        # long way across the payload plane (about 9 units; at temperature 1 it was 0.8).
        settings={"temperature": 0.25},
        setup=(
            N_(
                "One query, three keys A, B and C, each paired with a value. The keys decide who "
                "is listened to; the values are what gets passed on. **Temperature τ** is 0.25, "
                "so A leads clearly."
            )
        ),
        question=N_("If you swap the values of A and C, and leave the keys alone, what happens?"),
        choices=(
            N_("The weights swap as well"),
            N_("The weights stay exactly the same and the output moves"),
            N_("Nothing changes at all"),
        ),
        answer=1,
        action=(
            N_(
                "Pick A in **Swap the value of** and C in **with the value of**, then press "
                "**Swap values**."
            )
        ),
        act=lambda s: s.swap_values(0, 2),
        measure=_swap_measure,
        confirms=_swap_confirms,
        takeaway=(
            N_(
                "Weights are computed from the query and the keys only. A value never votes on "
                "its own weight; it only decides what the chosen route delivers."
            )
        ),
    ),
    LessonStep(
        part=PARTS[1],
        slug="rotate-query",
        title=N_("Turn the query"),
        scenario="basic",
        settings={},
        setup=N_("The query points right, towards A, and A gets the largest weight."),
        question=(
            N_(
                "Turn the query a quarter turn anticlockwise, so it points straight up. Which key wins?"
            )
        ),
        choices=(N_("A still wins"), N_("C wins: it points up"), N_("All three end up equal")),
        answer=1,
        action=(
            N_(
                "Set **Query angle** to 90 degrees, or drag the query's tip to the top of the "
                "address plane."
            )
        ),
        act=lambda s: s.param.update(angle=s.angle + 90.0),
        measure=_rotate_measure,
        confirms=_rotate_confirms,
        takeaway=(
            N_(
                "A new query rescores every key. The route follows the dot product, so the key "
                "best lined up with the query collects the weight."
            )
        ),
    ),
    LessonStep(
        part=PARTS[1],
        slug="length-counts",
        title=N_("Does length count, or only direction?"),
        scenario="sharp",
        settings={},
        setup=(
            N_(
                "The 'long key' points about 41 degrees away from the query, yet it takes almost "
                "the whole route. 'aligned' points exactly where the query does."
            )
        ),
        question=N_("Make the query and every key unit length. Which key wins now?"),
        choices=(
            N_("The long key, still"),
            N_("The aligned key"),
            N_("No key: the weights become equal"),
        ),
        answer=1,
        action=N_("Switch on **Normalise q and keys to unit length**."),
        act=lambda s: s.param.update(normalise=True),
        measure=_winner_measure,
        confirms=_normalise_confirms,
        takeaway=(
            N_(
                "A dot product rewards length as much as alignment. When normalising hands the "
                "route to another key, the norm was carrying the decision."
            )
        ),
    ),
    LessonStep(
        part=PARTS[1],
        slug="local-contest",
        title=N_("What do newcomers do to a weight?"),
        scenario="contest",
        settings={},
        setup=N_("Three keys with logits 2, 1 and 0 share the route about 0.67 / 0.24 / 0.09."),
        question=(
            N_(
                "Add 64 unrelated distractor keys. The top key's raw score does not change. What "
                "happens to its weight?"
            )
        ),
        choices=(
            N_("It stays at 0.67: its score did not change"),
            N_("It falls: the newcomers take a share of the route"),
            N_("It rises"),
        ),
        answer=1,
        action=N_("Set **Distractor keys** to 64."),
        act=lambda s: s.param.update(distractors=64),
        measure=_distractor_measure,
        confirms=_distractor_confirms,
        takeaway=(
            N_(
                "A weight only means something against the other candidates. More candidates "
                "dilute the route even when the useful key scores exactly as before."
            )
        ),
    ),
    LessonStep(
        part=PARTS[2],
        slug="dimension-unscaled",
        title=N_("Dimension without scaling"),
        scenario="basic",
        settings={"scale": False},
        setup=(
            N_(
                "**Divide logits by √d_k** is off and **d_k** is 2. The lab can add hidden "
                "dimensions with random components: the plane you see stays the same."
            )
        ),
        question=N_("Raise d_k from 2 to 512 with scaling still off. What happens to the route?"),
        choices=(
            N_("Nothing: the visible geometry did not move"),
            N_("It sharpens: the entropy falls"),
            N_("It flattens: the entropy rises"),
        ),
        answer=1,
        action=N_("Set **d_k** to 512."),
        act=lambda s: s.param.update(d_k=512),
        measure=_dimension_measure,
        confirms=_sharper,
        takeaway=(
            N_(
                "Each hidden dimension adds a random product to every dot product, so the logits "
                "spread like sqrt(d_k). The route sharpens for statistical reasons, not because "
                "any key became more relevant, and the random part can even pick the winner."
            )
        ),
    ),
    LessonStep(
        part=PARTS[2],
        slug="scale-on",
        title=N_("What does the 1/√d_k scale do?"),
        scenario="basic",
        settings={"scale": False, "d_k": 512},
        setup=(
            N_(
                "**d_k** is 512, **Divide logits by √d_k** is off, and one key takes almost everything."
            )
        ),
        question=N_("Switch the 1/sqrt(d_k) scale on. What happens?"),
        choices=(
            N_("The route stays just as sharp"),
            N_("The logits shrink by sqrt(512), about 22.6, and the route broadens again"),
            N_("The winner changes"),
        ),
        answer=1,
        action=N_("Switch on **Divide logits by √d_k**."),
        act=lambda s: s.param.update(scale=True),
        measure=_scale_measure,
        confirms=_scale_confirms,
        takeaway=(
            N_(
                "Dividing by sqrt(d_k) cancels the growth that dimension alone causes, so several "
                "keys can still compete however wide the vectors are. It divides every score by "
                "the same number, so it never reorders them."
            )
        ),
    ),
    LessonStep(
        part=PARTS[2],
        slug="temperature",
        title=N_("What does temperature change?"),
        scenario="contest",
        settings={},
        setup=N_("Logits 2, 1, 0 at temperature 1."),
        question=N_("Lower the temperature from 1 to 0.25. What happens?"),
        choices=(
            N_("The order of the keys changes"),
            N_("Same order; the top key's weight rises toward 1"),
            N_("Same order and the same weights"),
        ),
        answer=1,
        action=N_("Set **Temperature τ** to 0.25."),
        act=lambda s: s.param.update(temperature=0.25),
        measure=_ranking_measure,
        confirms=_temperature_confirms,
        takeaway=(
            N_(
                "Temperature divides every logit by the same positive number: it never reorders "
                "keys, it only decides how decisively the leader wins."
            )
        ),
    ),
    LessonStep(
        part=PARTS[3],
        slug="causal-mask",
        title=N_("What the query may not see"),
        scenario="bank",
        settings={},
        setup=(
            N_(
                "'The bank approved the loan': the query sits at 'approved', **Query position** 2 "
                "(positions count from 0, at the first 'the'). 'the (2)' and 'loan' come after it."
            )
        ),
        question=N_("Switch causal on. What weight do the two later words get?"),
        choices=(
            N_("Exactly zero, and the earlier words share the whole route"),
            N_("Half of what they had"),
            N_("The same as before"),
        ),
        answer=0,
        action=N_("Switch on **Causal**."),
        act=lambda s: s.param.update(causal=True),
        measure=_causal_measure,
        confirms=_causal_confirms,
        takeaway=(
            N_(
                "A masked key is not a weak candidate; it is not a candidate. Its weight is "
                "exactly zero, the same as deleting it."
            )
        ),
    ),
    LessonStep(
        part=PARTS[3],
        slug="null-route",
        title=N_("When no key fits the query"),
        scenario="null_route",
        settings={"null_route": False},
        setup=(
            N_(
                "No key points where the query looks, yet the weights still add up to one: "
                "softmax always hands out the whole route."
            )
        ),
        question=(
            N_(
                "Add a null candidate: one more entry whose value is zero. It is not scored "
                "against the query (a zero key would score 0); its logit is a fixed bar, the "
                "**Null-route threshold**, here 2. What takes most of the route?"
            )
        ),
        choices=(
            N_("north, the least bad key"),
            N_("The null candidate: most of the route is refused"),
            N_("The three keys equally"),
        ),
        answer=1,
        action=N_("Switch on **Null route**."),
        act=lambda s: s.param.update(null_route=True),
        measure=_null_measure,
        confirms=_null_confirms,
        takeaway=(
            N_(
                "Softmax cannot say 'none of these'. A null candidate with a threshold gives the "
                "router a way to refuse, and its weight measures how much was refused."
            )
        ),
    ),
    LessonStep(
        part=PARTS[3],
        slug="audit-permute",
        title=N_("An audit by hand: reorder the pairs"),
        scenario="basic",
        settings={},
        setup=(
            N_(
                "An audit checks that the implementation obeys the mechanism. One check: the "
                "order in which keys are listed should not matter."
            )
        ),
        question=(
            N_(
                "Reverse the order of the key/value pairs, moving each value with its key. What "
                "happens to the output?"
            )
        ),
        choices=(
            N_("It stays the same; the weights travel with their keys"),
            N_("It changes, because attention reads keys in order"),
        ),
        answer=0,
        action=(
            N_(
                "Press **Reverse the pairs** under the key/value pairs (the Audit tab's **Run the "
                "audit** checks this and more)."
            )
        ),
        act=_reverse_pairs,
        measure=_permute_measure,
        confirms=_permute_confirms,
        takeaway=(
            N_(
                "Without a mask or positions, attention treats its keys as a set. A passing audit "
                "shows the code obeys such invariants; it does not show a model learned anything."
            )
        ),
    ),
    LessonStep(
        part=PARTS[3],
        slug="why-sharp",
        title=N_("Why is it sharp? Test one cause"),
        scenario="sharp",
        settings={},
        setup=(
            N_(
                "One key holds about 0.98 of the route at temperature 0.5. The diagnosis panel "
                "tests four causes; here you test one of them yourself."
            )
        ),
        question=N_("Raise the temperature from 0.5 to 4. What do you expect to see?"),
        choices=(
            N_("The same key still leads, but the route is much broader"),
            N_("A different key takes over"),
            N_("Nothing changes"),
        ),
        answer=0,
        action=N_("Set **Temperature τ** to 4."),
        act=lambda s: s.param.update(temperature=4.0),
        measure=_sharp_measure,
        confirms=_sharp_temperature_confirms,
        takeaway=(
            N_(
                "Each cause predicts its own response: temperature softens without reordering, "
                "normalising exposes norm, scaling exposes dimension, rotating the query exposes "
                "a key that wins whatever is asked. The diagnosis above is of the sharp start; "
                "**Why is it sharp?** in its tab reads the route on screen, so press **Load this "
                "step** (back to 0.5) before it to see the sharp route's whole table."
            )
        ),
    ),
)

LESSONS_BY_SLUG: Mapping[str, LessonStep] = MappingProxyType({s.slug: s for s in LESSONS})

_BOLD = re.compile(r"\*\*(.+?)\*\*")


def control_names(step: LessonStep) -> list[str]:
    """The control labels a step quotes in bold, in order (see the module docstring)."""
    texts = (step.setup, step.question, step.action, step.takeaway)
    return [m.group(1) for text in texts for m in _BOLD.finditer(text)]
