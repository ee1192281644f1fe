"""Lessons on the trained head: the audit sequence carried out inside the shipped binding model.

No Panel import. Each step opens a program on a head of the model (`ModelState`), asks for a
prediction, performs one intervention (the "do it for me" button and the tests use `act`), and
measures both the local change (this head's weights and output) and the final one (the model's
answer and the probability of the correct answer). Every claim a step makes is read from the
real model at measurement time; the tests check that each step's right answer is what the
shipped weights actually do.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from app.i18n.markers import N_
from app.i18n.said import Said
from app.lessons import copy_lessons as copy
from app.lessons import reveals
from app.lessons.numbers import fixed, percent, signed
from app.state import attribution_runs, model_runs
from app.state.estimate_words import reasons, sentence_warning
from app.state.model_state import ModelState, Prediction, short_title
from engine import trained
from engine.head_names import head_name
from engine.heads import find_heads, shown_token
from engine.snapshot import LabSnapshot
from engine.trained import binding_task as task

PART = N_("A trained head")
LM_PART = N_("A real language model")
GRADIENT_PART = N_("Where the gradient lies")
COPY_PART = N_("Heads that copy")
LM = "smollm2-135m"
BANK = "The bank approved the loan because it was"
MEETING = "The meeting was on Monday. It moved to Friday. The meeting is on"
MOVED = "The meeting was on Monday. It moved to Friday. So the meeting is on"
# The patching step's other sentence: the Causal map tab's suggestion for MOVED (one day
# changed, the same number of tokens; tests/app/test_model_lessons.py holds it to that), written
# out so that the step can show both sentences before the vote.
CHANGED = "The meeting was on Monday. It moved to Thursday. So the meeting is on"
# The whole-model steps measure their heads when they open: one backward pass estimates every
# head's effect, and the VERIFIED the estimate ranks first are measured exactly (about a second
# on SmolLM2, once per process). tests/app/test_model_lessons.py holds the heads found against
# the full exact maps (every head ablated or patched).
VERIFIED = 10
BARELY = 0.05  # "barely looks": under 5% of a head's weight on the token
SEED_PROGRAM = "approved_limit = 5000; temporary_limit = 7000; ?approved_limit"
# An estimate under this (in nats of log P) calls a head unimportant: a hundredth of a nat is a
# 1% change of the answer's probability.
UNIMPORTANT = 0.01
UNDEFINED_PROGRAM = "rate=12; x=4; y=9; ?charge"
# A sentence SmolLM2 answers right (" Anna", P 72%, not saturated) where the head the estimate
# calls unimportant (its terms at different positions cancel) turns the answer decisively when
# removed: found on the shipped weights by tools/find_flip.py (docs/lessons.md, part 7).
STORE = "When Sarah and Anna went to the store, Sarah gave a drink to"


class ModelStillLoading(RuntimeError):
    """A step's model is loading in the background: the step can start once it is in."""

    def __init__(self, model: str):
        self.model = model
        super().__init__(f"{short_title(model)} is still loading")


@dataclass(frozen=True)
class Reading:
    """What a step measures against: the head's snapshot and the model's answer."""

    snapshot: LabSnapshot
    prediction: Prediction
    head_output: np.ndarray  # in the head's own space (the payload plane turns with it)
    # The run on screen (with the step's edits) and the head open: what part 8 measures the
    # loss of every token and the open head's scores from.
    run: object = None
    head: tuple[int, int] | None = None

    @property
    def output(self) -> np.ndarray:  # the lessons view draws the old output as a ghost
        return self.snapshot.output


def reading(m: ModelState) -> Reading:
    head_output = np.asarray(m.run.head(m.layer, m.head).output)
    return Reading(m.snapshot, m.prediction, head_output, m.run, (m.layer, m.head))


@dataclass(frozen=True)
class ModelLessonStep:
    title: str
    text: str  # the program the step opens
    setup: str
    question: str
    choices: tuple[str, ...]
    answer: int
    action: str
    act: Callable[[ModelState], None] | None  # None: nothing to do, only to read
    measure: Callable[[Reading, Reading], Said]  # English as `str(said)`
    confirms: Callable[[Reading, Reading], bool]
    takeaway: str
    # Which head the step opens (default: the retrieval head measured at load).
    opens: Callable[[ModelState], tuple[int, int]] | None = None
    # Which position the planes and the answer are for (default: the last token).
    at: Callable[[ModelState], int] | None = None
    part: str = PART
    source: str = "model"
    model: str = "binding"
    # The views held back until Measure (app/lessons/reveals.py): the head's route and the
    # model's answer; a step with nothing to do holds the planes back too.
    reveals: frozenset[str] = reveals.ROUTE_AND_ANSWER

    def __post_init__(self) -> None:
        reveals.check(self.title, self.reveals)

    def start(self, m: ModelState) -> Reading:
        if m.model != self.model:
            if not m.try_update(model=self.model):
                raise RuntimeError(f"lesson step {self.title!r} could not start: {m.error}")
            if m.loading:
                # A language model loads in the background; the page keeps working meanwhile
                # and starts the step once `m.loading` clears (app/views/lesson_panel.py).
                raise ModelStillLoading(self.model)
        layer, head = self.opens(m) if self.opens else m.loaded.retrieval_head
        query = self.at(m) if self.at else None
        if not m.try_update(text=self.text, layer=layer, head=head, query=query, **m.fresh()):
            raise RuntimeError(f"lesson step {self.title!r} could not start: {m.error}")
        return reading(m)

    def run(self, m: ModelState) -> tuple[Reading, Reading, Said]:
        before = self.start(m)
        if self.act is not None:
            self.act(m)
        after = reading(m)
        return before, after, self.measure(before, after)

    def is_right(self, choice: int) -> bool:
        return choice == self.answer


# ------------------------------------------------------------------------- measurements


def _p(r: Reading, token: str) -> float:
    pred = r.prediction
    return pred.after[pred.tokens.index(token)] if token in pred.tokens else 0.0


def _expected(r: Reading) -> str:
    return r.prediction.expected or r.prediction.answer_after


def _top(r: Reading) -> tuple[str, float]:
    i = int(np.argmax(r.snapshot.weights))
    return r.snapshot.labels[i], float(r.snapshot.weights[i])


def _final(before: Reading, after: Reading) -> Said:
    right = _expected(before)
    # TRANSLATORS: part of a lesson's measurement: the model's answer after the step's action
    # and before it, then the right answer's probability before -> after. The tokens are the
    # model's own and stay as they are.
    return Said(
        "the model answers {answer} (it answered {earlier}); P({right}) {before} -> {after}",
        answer=shown_token(after.prediction.answer_after),
        earlier=shown_token(before.prediction.answer_before),
        right=shown_token(right),
        before=percent(_p(before, right)),
        after=percent(_p(after, right)),
    )


def _local(before: Reading, after: Reading) -> Said:
    dw = float(np.max(np.abs(after.snapshot.weights - before.snapshot.weights)))
    do = float(np.linalg.norm(after.head_output - before.head_output))
    # Attention weights (what the Weights chart shows), not the model's parameters.
    # TRANSLATORS: part of a lesson's measurement; "attention weight" as the Weights chart
    # shows it, not the model's parameters.
    return Said(
        "largest change of an attention weight in this head {change}; its output moved by {moved}",
        change=fixed(dw, 3),
        moved=fixed(do),
    )


def _value_position(m: ModelState, name: str) -> int:
    """Token position of the value in the latest definition of `name` in the open program."""
    program = task.parse(m.text)
    last = max(i for i, (n, _) in enumerate(program.definitions) if n == name)
    return task.value_position(last)


def _swap_limits(m: ModelState) -> None:
    i, j = _value_position(m, "approved_limit"), _value_position(m, "temporary_limit")
    m.try_update(extra=[trained.SwapValues(m.layer, m.head, i, j)])


def _mask_winner(m: ModelState) -> None:
    top = int(np.argmax(m.snapshot.weights))
    m.try_update(masked=[top])


def _ablate(*heads: tuple[int, int]) -> Callable[[ModelState], None]:
    def act(m: ModelState) -> None:
        m.try_update(ablated=[f"{layer}.{head}" for layer, head in heads])

    return act


def _other_retriever(m: ModelState) -> tuple[int, int]:
    layer, head = m.loaded.retrieval_head
    return layer, 1 - head if m.loaded.n_heads == 2 else head


def _run(m: ModelState, text: str, *edits):
    """The model's run of `text` (NumPy, the last token), from the process-wide cache: every
    student's page measuring the same step shares one forward."""
    return model_runs.edited_run(m.loaded.name, text, None, "numpy", edits)


def _ablate_open_head(m: ModelState) -> None:
    _ablate((m.layer, m.head))(m)


def _layer0_head(m: ModelState) -> tuple[int, int]:
    """The layer-0 head whose ablation costs the right answer most (measured on this program)."""
    model = m.loaded
    right = _run(m, m.text).expected
    drop = [_run(m, m.text, trained.AblateHead(0, h)).probs[right] for h in range(model.n_heads)]
    return 0, int(np.argmin(drop))


def _ablate_layer0(m: ModelState) -> None:
    _ablate(_layer0_head(m))(m)


def _patch_from_changed(m: ModelState) -> None:
    donor = _run(m, CHANGED).head(m.layer, m.head).all_outputs
    # The patch names its sentence: the sidebar and the planes mark the head as patched from it.
    m.try_update(extra=[trained.PatchHead(m.layer, m.head, donor, source=CHANGED)])


def _token(label: str) -> str:
    """The token of a head snapshot's label ("5000 @3" -> "5000")."""
    return label.rsplit(" @", 1)[0]


def _mentions(label: str, token: str) -> bool:
    return _token(label) == token


# ------------------------------------------------------------------------- the steps

MODEL_LESSONS: tuple[ModelLessonStep, ...] = (
    ModelLessonStep(
        title=N_("Open a trained head"),
        text=SEED_PROGRAM,
        setup=N_(
            "This is a small transformer the project trained to answer questions about "
            "definitions. The program defines two limits and asks for approved_limit. When you "
            "measure, the planes show the retrieval head (the layer-1 head that, over the "
            "programs checked when the model loads, gives the value asked about the most "
            "weight) at the question token: its query, and every earlier token's key and value, "
            "projected so that each drawn score is the true one."
        ),
        question=N_("Where does this head put most of its weight?"),
        choices=(
            N_("On 5000, the value that answers the question"),
            N_("On 7000, the other value"),
            N_("On the name approved_limit where it is defined"),
            N_("Evenly over all tokens"),
        ),
        answer=0,
        action=N_("Nothing to change: predict, then press Measure to see the weights."),
        act=None,
        reveals=reveals.EVERYTHING,
        measure=lambda b, a: Said(
            "{token} holds {share} of the weight; the model answers {answer} with {p}",
            token=_top(a)[0],
            share=percent(_top(a)[1]),
            answer=a.prediction.answer_after,
            p=percent(_p(a, _expected(a))),
        ),
        confirms=lambda b, a: _mentions(_top(a)[0], "5000") and _top(a)[1] > 0.5,
        takeaway=N_(
            "A trained head can route almost all of its weight to the one token that answers "
            "the question. That is a fact about this head's route, not yet about the answer."
        ),
    ),
    ModelLessonStep(
        title=N_("Swap the payloads inside the model"),
        text=SEED_PROGRAM,
        setup=N_(
            "Exchange the value vectors of 5000 and 7000 in this head only; its keys and its "
            "query are left as they are."
        ),
        question=N_("What happens to this head's weights?"),
        choices=(
            N_("They do not move; the head now delivers 7000's value"),
            N_("They move to 7000"),
            N_("They spread out evenly"),
        ),
        answer=0,
        action=N_("Press **Do it for me** (it swaps the two values in this head), then Measure."),
        act=_swap_limits,
        # TRANSLATORS: two parts of a measurement, one after the other.
        measure=lambda b, a: Said("{first}; {second}", first=_local(b, a), second=_final(b, a)),
        confirms=lambda b, a: (
            float(np.max(np.abs(a.snapshot.weights - b.snapshot.weights))) < 1e-9
            and float(np.linalg.norm(a.head_output - b.head_output)) > 1.0
        ),
        takeaway=N_(
            "Same route, different payload, exactly as with hand-made vectors. Now look at the "
            "model's answer: whether it follows the payload tells you how much the rest of the "
            "model depends on this one head."
        ),
    ),
    ModelLessonStep(
        title=N_("Ablate the retrieval head"),
        text=SEED_PROGRAM,
        setup=N_(
            "This head gives 5000 nearly all its weight. Zero its output everywhere and watch "
            "the model's answer."
        ),
        question=N_("What does the model answer without this head?"),
        choices=(
            N_("Still 5000, about as confidently"),
            N_("No longer 5000: the answer is lost"),
        ),
        answer=1,
        action=N_(
            "Pick this head in **Ablate heads (zero their output)**, or press Do it for me; "
            "then Measure."
        ),
        act=_ablate_open_head,
        measure=lambda b, a: _final(b, a),
        confirms=lambda b, a: (
            float(np.linalg.norm(a.head_output)) < 1e-9  # the head's output is gone
            and _p(a, _expected(b)) < 0.5
        ),
        takeaway=N_(
            "This head is needed: without its output the model cannot find the value. Both "
            "its weight and its effect point at 5000. The next step shows they need not agree."
        ),
    ),
    ModelLessonStep(
        title=N_("Does the other head that looks at 5000 matter?"),
        text=SEED_PROGRAM,
        opens=lambda m: _other_retriever(m),
        setup=N_(
            "This is the other head of the last layer. It too gives 5000 almost all of its "
            "weight at the question. Ablate it."
        ),
        question=N_("What does the model answer without this head?"),
        choices=(
            N_("Still 5000, about as confidently"),
            N_("No longer 5000: the answer is lost"),
        ),
        answer=0,
        action=N_(
            "Pick this head in **Ablate heads (zero their output)**, or press Do it for me; "
            "then Measure."
        ),
        act=_ablate_open_head,
        measure=lambda b, a: Said(
            "this head gave {token} {share} of its weight; {final}",
            token=_top(b)[0],
            share=percent(_top(b)[1]),
            final=_final(b, a),
        ),
        confirms=lambda b, a: (
            float(np.linalg.norm(a.head_output)) < 1e-9
            and _top(b)[1] > 0.5
            and a.prediction.answer_after == _expected(b)
            and _p(a, _expected(b)) > 0.9
        ),
        takeaway=N_(
            "Two heads route to the same token with nearly the same weight, yet only one of "
            "them matters for the answer. A routing weight says where a head looks, not what "
            "its result does downstream: test responsibility by intervening."
        ),
    ),
    ModelLessonStep(
        title=N_("Hide the winning token"),
        text=SEED_PROGRAM,
        setup=N_("Mask 5000 from this head, so it is no candidate at all for this head's route."),
        question=N_("Where does this head's weight go?"),
        choices=(
            N_("To 7000, the other value"),
            N_("Mostly to a token that is not a value"),
            N_("Nowhere: the weights stay at zero"),
        ),
        answer=1,
        action=N_("Pick 5000 in **Hide positions from this head**, or press Do it for me."),
        act=_mask_winner,
        measure=lambda b, a: Said(
            "the masked token now has weight {weight}; {token} takes {share}; {final}",
            weight=fixed(float(a.snapshot.weights[_winner(b)]), 3),
            token=_top(a)[0],
            share=percent(_top(a)[1]),
            final=_final(b, a),
        ),
        confirms=lambda b, a: (
            float(a.snapshot.weights[_winner(b)]) == 0.0
            and task.token_kind(_tokens(a), _index(a)) != "value"
        ),
        takeaway=N_(
            "Softmax always hands out the whole route: with the answer hidden, the weight lands "
            "on whatever scores next, here not a value. Read the model's answer to see what "
            "losing its source costs."
        ),
    ),
    ModelLessonStep(
        title=N_("A question the program cannot answer"),
        text=UNDEFINED_PROGRAM,
        setup=N_(
            "charge is never defined, so the right answer is none: a refusal the model learned. "
            "There is no right value for the head to fetch."
        ),
        question=N_("Where does the head that fetches values look now?"),
        choices=(
            N_("On one of the values, at random"),
            N_("On a token that carries no value: a separator or the first token"),
            N_("On the name that was asked about"),
        ),
        answer=1,
        action=N_("Nothing to change: predict, then press Measure to see the weights."),
        act=None,
        reveals=reveals.EVERYTHING,
        # TRANSLATORS: "none" is the model's own answer (a token): keep it as it is.
        measure=lambda b, a: Said(
            "{token} holds {share}; the model answers {answer} ({p} for none)",
            token=_top(a)[0],
            share=percent(_top(a)[1]),
            answer=a.prediction.answer_after,
            p=percent(_p(a, "none")),
        ),
        confirms=lambda b, a: task.token_kind(_tokens(a), _index(a)) in ("=", ";", "first"),
        takeaway=N_(
            "With nothing to retrieve, the head parks its weight where no value lives: an "
            "attention sink. It plays the part of the hand-made lessons' null route, found by "
            "training (the model card measures where it parks on average)."
        ),
    ),
    ModelLessonStep(
        title=N_("Does the layer below matter?"),
        text=SEED_PROGRAM,
        setup=N_(
            "The retrieval head can only find 5000 if the layer below has marked which value "
            "belongs to which name. Ablate the layer-0 head this program needs most."
        ),
        question=N_("What happens to the answer?"),
        choices=(
            N_("Nothing: layer 0 only passes tokens along"),
            N_("The answer is lost, although no layer-1 parameter was changed"),
        ),
        answer=1,
        action=N_("Press **Do it for me** (it picks the layer-0 head), then Measure."),
        act=_ablate_layer0,
        measure=lambda b, a: Said(
            "{local} (no layer-1 parameter changed: only a layer-0 head's output was removed); "
            "{final}",
            local=_local(b, a),
            final=_final(b, a),
        ),
        confirms=lambda b, a: _p(a, _expected(b)) < 0.5,
        takeaway=N_(
            "The retrieval head's route was built from upstream features: remove them and the "
            "same head looks elsewhere. A local explanation of one head is not the whole model's."
        ),
    ),
    ModelLessonStep(
        title=N_("Open a real language model's head"),
        text=BANK,
        part=LM_PART,
        model=LM,
        setup=N_(
            "SmolLM2-135M-Instruct is a real language model (30 layers of 9 heads), run from "
            "4-bit weights: its vectors are close to the original model's, not equal to them. "
            "When you measure, the planes show layer 13, head 8 at the last word, 'was'."
        ),
        question=N_("Where does this head look from 'was'?"),
        choices=(
            N_("On 'loan'"),
            N_("On 'bank'"),
            N_("On 'The', the first word"),
            N_("Evenly over the words"),
        ),
        answer=0,
        action=N_("Nothing to change: predict, then press Measure to see the weights."),
        act=None,
        reveals=reveals.EVERYTHING,
        measure=lambda b, a: Said(
            "{token} holds {share} of the weight; the model's next word is {answer} ({p})",
            token=_top(a)[0],
            share=percent(_top(a)[1]),
            answer=shown_token(a.prediction.answer_after),
            p=percent(_p(a, a.prediction.answer_after)),
        ),
        confirms=lambda b, a: _mentions(_top(a)[0], shown_token(" loan")) and _top(a)[1] > 0.5,
        takeaway=N_(
            "A real head can be as decisive as the toy ones: on this sentence, from 'was', this "
            "head puts most of its weight on 'loan'. That says where it reads, not what the "
            "model makes of it: whether it matters for the next word is another question."
        ),
    ),
    ModelLessonStep(
        title=N_("Does the model need the head that looks at 'loan'?"),
        text=BANK,
        part=LM_PART,
        model=LM,
        setup=N_("Zero this head's output everywhere and watch the model's next word."),
        question=N_("What happens to the next word?"),
        choices=(
            N_("It barely changes: other heads carry the same information"),
            N_("The model's guess changes completely"),
        ),
        answer=0,
        action=N_(
            "Pick this head in **Ablate heads (zero their output)**, or press Do it for me; "
            "then Measure."
        ),
        act=_ablate_open_head,
        measure=lambda b, a: Said(
            "this head gave {token} {share}; {final}",
            token=_top(b)[0],
            share=percent(_top(b)[1]),
            final=_final(b, a),
        ),
        confirms=lambda b, a: (
            float(np.linalg.norm(a.head_output)) < 1e-9
            and a.prediction.answer_after == b.prediction.answer_after
            and abs(_p(a, _expected(b)) - _p(b, _expected(b))) < 0.2
        ),
        takeaway=N_(
            "In a real model many heads share the work, so removing one that looks exactly at "
            "the right word may change almost nothing. A routing weight is evidence of where "
            "information is read, not an explanation of the prediction."
        ),
    ),
    ModelLessonStep(
        title=N_("A superseded fact"),
        text=MEETING,
        part=LM_PART,
        model=LM,
        opens=lambda m: _head_on(m, MEETING, " Monday"),
        setup=N_(
            "The meeting moved from Monday to Friday. The planes show the head that puts the "
            "most weight on 'Monday' from the last word (found by the head finder)."
        ),
        question=N_("Which day does the model predict next?"),
        choices=(N_("Friday, the latest fact"), N_("Monday, the superseded one")),
        answer=1,
        action=N_("Nothing to change: predict, then press Measure to see the model's answer."),
        act=None,
        reveals=reveals.ROUTE_AND_ANSWER,  # the planes show a head, not the answer
        # TRANSLATORS: ␣Monday and ␣Friday are the model's tokens (a space, then the word).
        measure=lambda b, a: Said(
            "P(␣Monday) {monday}, P(␣Friday) {friday}; the model says {answer}",
            monday=percent(_p(a, " Monday")),
            friday=percent(_p(a, " Friday")),
            answer=shown_token(a.prediction.answer_after),
        ),
        confirms=lambda b, a: _p(a, " Monday") > _p(a, " Friday"),
        takeaway=N_(
            "A small model can follow the older, louder fact. Long contexts need tests with "
            "superseded facts, not only a check that the answer is somewhere in the window."
        ),
    ),
    ModelLessonStep(
        title=N_("Hide the old fact from every head"),
        text=MEETING,
        part=LM_PART,
        model=LM,
        opens=lambda m: _head_on(m, MEETING, " Monday"),
        setup=N_("Now mask 'Monday' from every head of every layer, so no route can reach it."),
        question=N_("What does the model predict now?"),
        choices=(N_("Friday"), N_("Still Monday")),
        answer=0,
        action=N_("Press **Do it for me** (it hides 'Monday' from all 270 heads), then Measure."),
        act=lambda m: m.try_update(
            extra=[trained.MaskPosition(None, None, p) for p in _positions(m, " Monday")]
        ),
        measure=lambda b, a: Said(
            "P(␣Monday) {monday_before} -> {monday_after}, P(␣Friday) {friday_before} -> "
            "{friday_after}",
            monday_before=percent(_p(b, " Monday")),
            monday_after=percent(_p(a, " Monday")),
            friday_before=percent(_p(b, " Friday")),
            friday_after=percent(_p(a, " Friday")),
        ),
        confirms=lambda b, a: a.prediction.answer_after == " Friday",
        takeaway=N_(
            "The old fact reached the answer through the routes, and only through them: with "
            "every route to it closed, the latest fact wins. Masking is deletion for attention."
        ),
    ),
    ModelLessonStep(
        title=N_("Can a head that barely looks decide?"),
        text=MOVED,
        part=LM_PART,
        model=LM,
        opens=lambda m: _light_head(LM, MOVED, " Friday"),
        # "under 5%," and never "5% of": gettext's tools read "% o" as a printf placeholder
        # and would hold every translation to one.
        setup=N_(
            "The planes show a head whose weight on 'Friday' is under 5%, picked when the step "
            "opens. Measure also ablates the head that looks hardest at 'Friday', for comparison."
        ),
        question=N_("Ablate this head. What happens to P(Friday)?"),
        choices=(
            N_("Nothing: it hardly looks at Friday"),
            N_("It falls clearly: the answer needs this head"),
        ),
        answer=1,
        action=N_(
            "Pick this head in **Ablate heads (zero their output)**, or press Do it for me; "
            "then Measure."
        ),
        act=_ablate_open_head,
        # TRANSLATORS: {turns} says whether the answer "stays ␣Friday" or "turns from ... to
        # ..."; {contrast} is a sentence of its own.
        measure=lambda b, a: Said(
            "this head's weight on ␣Friday is {weight}; P(␣Friday) {before} -> {after}, and "
            "the answer {turns}. {contrast}",
            weight=percent(_weight_on(b, " Friday")),
            before=percent(_p(b, " Friday")),
            after=percent(_p(a, " Friday")),
            turns=_turns(b, a),
            contrast=_heaviest_contrast(LM, MOVED, " Friday"),
        ),
        confirms=lambda b, a: (
            _weight_on(b, " Friday") < 0.05 and _p(a, " Friday") < _p(b, " Friday") - 0.1
        ),
        takeaway=N_(
            "Where a head looks and what the answer needs from it are two different "
            "measurements. This head was picked, among those whose weight on 'Friday' is under "
            "5%, as the one whose removal costs the answer most (the estimate ranks them, the "
            "first ten are measured exactly). The causal map shows both for all 270 heads at "
            "once."
        ),
    ),
    ModelLessonStep(
        title=N_("Patch one head from another sentence"),
        text=MOVED,
        part=LM_PART,
        model=LM,
        opens=lambda m: _patch_head(LM, MOVED, CHANGED),
        # The sentences are MOVED and CHANGED, written out for the catalogue (a test holds
        # them equal); they are the model's input: a translation keeps them in English.
        setup=N_(
            "Activation patching: run “The meeting was on Monday. It moved to Friday. So the "
            "meeting is on”, but give one head the output it has in “The meeting was on Monday. "
            "It moved to Thursday. So the meeting is on” (the same number of tokens). The planes "
            "show one of the 270 heads, picked when the step opens."
        ),
        question=N_("With this head patched, what happens to P(Friday)?"),
        choices=(
            N_("Nothing: one head of 270 cannot carry the day"),
            N_("It falls by half or more: this head carries the day"),
        ),
        answer=1,
        action=N_("Press **Do it for me** (it patches the head), then Measure."),
        act=_patch_from_changed,
        measure=lambda b, a: Said(
            "with this head's output taken from “{sentence}”, P(␣Friday) {before} -> {after}; "
            "the model says {answer}",
            sentence=CHANGED,
            before=percent(_p(b, " Friday")),
            after=percent(_p(a, " Friday")),
            answer=shown_token(a.prediction.answer_after),
        ),
        confirms=lambda b, a: _p(a, " Friday") <= _p(b, " Friday") / 2,
        takeaway=N_(
            "Patching asks a sharper question than ablation: not 'is this head needed?' but "
            "'does this head carry the information that differs between the two sentences?' "
            "This one is the head that the Causal map tab's Patch every head puts first."
        ),
    ),
    ModelLessonStep(
        title=N_("Is the fast estimate right about this head?"),
        text=SEED_PROGRAM,
        part=GRADIENT_PART,
        opens=lambda m: quiet_head(m.loaded.name, SEED_PROGRAM)[:2],
        setup=N_(
            "The Causal map tab estimates every head's effect at once from one backward pass: "
            "the slope of log P(answer) times the step a removal takes. The planes show a head "
            "that estimate calls unimportant (a change of log P under 0.01) on this program, "
            "picked when the step opens."
        ),
        question=N_("Ablate this head. What happens to the model's answer?"),
        choices=(
            N_("Almost nothing, as the estimate says"),
            N_("The answer is lost: the estimate was wrong"),
        ),
        answer=1,
        action=N_(
            "Pick this head in **Ablate heads (zero their output)**, or press Do it for me; "
            "then Measure."
        ),
        act=_ablate_open_head,
        measure=lambda b, a: _gradient_lied("binding", SEED_PROGRAM, b, a),
        confirms=lambda b, a: (
            abs(quiet_head("binding", SEED_PROGRAM)[2].estimate) < UNIMPORTANT
            and _p(a, _expected(b)) < 0.5
        ),
        takeaway=N_(
            "The answer was nearly certain, and there the softmax is saturated: the slope of "
            "log P is about 1 - P, nearly flat, so a first-order estimate sees almost nothing, "
            "the way the Jacobian of a one-hot route is nearly zero. Removing a head is no small "
            "nudge: it takes the model far from where the slope was measured. The estimate "
            "is a filter that tells where to look; only the intervention is a measurement "
            "(the Causal map tab checks the largest estimates this way, as a receipt)."
        ),
    ),
    ModelLessonStep(
        title=N_("Is the estimate right on a real model?"),
        text=STORE,
        part=GRADIENT_PART,
        model=LM,
        opens=lambda m: quiet_head(LM, STORE)[:2],
        # The sentence is STORE, written out for the catalogue (a test holds them equal); it
        # is the model's input: a translation keeps it in English.
        setup=N_(
            "SmolLM2 on “When Sarah and Anna went to the store, Sarah gave a drink to”. When the "
            "step opens, the lab estimates all 270 heads from one backward pass and opens one the "
            "estimate calls unimportant (a change of log P under 0.01)."
        ),
        question=N_("Ablate this head. What happens to the model's answer?"),
        choices=(
            N_("Almost nothing, as the estimate says"),
            N_("The answer changes: the estimate was wrong"),
        ),
        answer=1,
        action=N_(
            "Pick this head in **Ablate heads (zero their output)**, or press Do it for me; "
            "then Measure."
        ),
        act=_ablate_open_head,
        measure=lambda b, a: _gradient_lied(LM, STORE, b, a),
        confirms=lambda b, a: (
            abs(quiet_head(LM, STORE)[2].estimate) < UNIMPORTANT
            and a.prediction.answer_after != b.prediction.answer_after
        ),
        takeaway=N_(
            "The estimate adds one term per position; here they pull in opposite directions and "
            "nearly cancel, so the sum looks like nothing, while the removal acts on every "
            "position at once and through every later layer. A small estimate means 'not "
            "visible to first order', not 'unimportant'."
        ),
    ),
    ModelLessonStep(
        title=N_("A head that looks one word back"),
        text=copy.REPEATED,
        part=COPY_PART,
        model=LM,
        opens=lambda m: copy.first("previous_token"),
        at=lambda m: copy.query(),
        setup=N_(
            "Sixteen random words, then the same sixteen again: nothing in the first copy "
            "predicts the next word, but in the second every word has been seen before. When "
            "the step opens, the lab scores all 270 heads of SmolLM2 on this text and opens the "
            "one that puts the most weight, on average, on the token just before its own: the "
            "highest previous-token score. The planes are read from the fourth word of the "
            "second copy."
        ),
        question=N_("From that word, where does this head put most of its weight?"),
        choices=(
            N_("On the word just before it"),
            N_("On the same word's first copy"),
            N_("On the first token"),
            N_("Spread out over the words"),
        ),
        answer=0,
        action=N_("Nothing to change: predict, then press Measure to see the weights."),
        act=None,
        reveals=reveals.EVERYTHING,
        measure=lambda b, a: copy.previous_token_verdict(a),
        confirms=lambda b, a: copy.previous_token_confirms(a),
        takeaway=N_(
            "A previous-token head copies each word's neighbour into its position: after it, "
            "the position of a word also says which word came before. That is half of the "
            "copying circuit; the next step finds the other half."
        ),
    ),
    ModelLessonStep(
        title=N_("Where do the induction heads sit?"),
        text=copy.REPEATED,
        part=COPY_PART,
        model=LM,
        opens=lambda m: copy.first("previous_token"),
        at=lambda m: copy.query(),
        setup=N_(
            "An induction head, on a word seen before, looks at the word that followed its "
            "earlier copy, and so predicts the repeat. Its score is the mean weight it puts "
            "there, over every word of the second copy. SmolLM2 has 30 layers, 0 to 29."
        ),
        question=N_("In which layers are the five heads with the highest induction scores?"),
        choices=(
            N_("Early: the first third, layers 0 to 9"),
            N_("Middle: layers 10 to 19"),
            N_("Late: the last third, layers 20 to 29"),
        ),
        answer=1,
        action=N_(
            "Press **Do it for me** (it opens the head the induction score ranks first), then "
            "Measure."
        ),
        act=lambda m: m.try_update(
            layer=copy.first("induction")[0], head=copy.first("induction")[1]
        ),
        reveals=reveals.EVERYTHING,
        measure=lambda b, a: copy.induction_layers_verdict(a),
        confirms=lambda b, a: copy.induction_layers_confirm(a),
        takeaway=N_(
            "The induction heads sit just past the middle, all in two adjacent layers, above "
            "the previous-token heads they build on: a word's position must first know which "
            "word came before it, and only then can a later head match that against the "
            "present word. The layers above turn the copied word into the prediction."
        ),
    ),
    ModelLessonStep(
        title=N_("Break the induction heads"),
        text=copy.REPEATED,
        part=COPY_PART,
        model=LM,
        opens=lambda m: copy.first("induction"),
        at=lambda m: copy.query(),
        setup=N_(
            "The loss of a word is how surprised the model is by it, in nats: -log P(the word). "
            "Measure reads the mean loss of the second copy's words before and after, and "
            "compares ablating as many other heads of the same layers (those with the lowest "
            "induction scores)."
        ),
        question=N_(
            "Ablate the five heads the induction score ranks first. What happens to the second "
            "copy's mean loss?"
        ),
        choices=(
            N_("It falls further: the model copies better"),
            N_("It stays about the same: other heads copy as well"),
            N_("It rises back towards the first copy's"),
        ),
        answer=2,
        action=N_(
            "Pick the five heads in **Ablate heads (zero their output)**, or press Do it for me; "
            "then Measure."
        ),
        act=lambda m: m.try_update(ablated=copy.ablations(copy.induction_heads())),
        measure=copy.ablation_verdict,
        confirms=copy.ablation_confirms,
        takeaway=N_(
            "Five heads of 270 carry most of the in-context copying: without them the second "
            "copy's loss goes most of the way back to the first copy's, while five other heads "
            "of the same layers change almost nothing. The score found them; the ablation "
            "shows what they do."
        ),
    ),
)


def quiet_head(model: str, text: str):
    """(layer, head, record): among the heads whose estimate is under UNIMPORTANT, the one whose
    exact ablation costs log P(answer) the most, from the attribution map of `text` (every
    such head checked: the binding model has four heads; SmolLM2 about 40 of its 270, one
    batch of ablations, about 3 s). Cached once per process."""
    amap = attribution_runs.estimate(model, text, _last(model, text))
    quiet = [r for r in amap.records if abs(r.estimate) < UNIMPORTANT]
    if not quiet:
        raise ValueError(f"no head of {model} is called unimportant on {text!r}")
    heads = [(r.layer, r.head) for r in quiet]
    exact = attribution_runs.exact(model, text, _last(model, text), heads)
    layer, head = min(heads, key=lambda lh: exact[lh])
    record = next(r for r in amap.with_exact(exact).records if (r.layer, r.head) == (layer, head))
    return layer, head, record


def _turns(before: Reading, after: Reading) -> Said:
    """Whether the model's answer changed, with the new answer's probability."""
    old, new = before.prediction.answer_after, after.prediction.answer_after
    if new == old:
        # TRANSLATORS: ends "... and the answer stays ␣Friday".
        return Said("stays {answer}", answer=shown_token(old))
    # TRANSLATORS: ends "... and the answer turns from ␣Friday to ␣Monday (40.0%)".
    return Said(
        "turns from {old} to {new} ({p})",
        old=shown_token(old),
        new=shown_token(new),
        p=percent(_p(after, new)),
    )


def _heaviest_contrast(model: str, text: str, token: str) -> Said:
    """The head with the most weight on `token` (its last place) from the last position, and
    what ablating it does to P(token): the fact a step cites, measured for the verdict."""
    run = model_runs.plain_run(model, text, None, "numpy")
    position = [i for i, t in enumerate(run.tokens) if t == token][-1]
    n_layers, n_heads = run.model.n_layers, run.model.n_heads
    layer, head, weight = find_heads(
        run, n_layers, n_heads, criterion="on_token", position=position, top=1
    )[0]
    ablated = model_runs.edited_run(model, text, None, "numpy", (trained.AblateHead(layer, head),))
    return Said(
        "For contrast, the head with the most weight on {token}, {head} ({weight}), moves "
        "P({token}) only {before} -> {after} when ablated",
        token=shown_token(token),
        head=head_name(layer, head),
        weight=percent(weight, 0),
        before=percent(run.prob(token)),
        after=percent(ablated.prob(token)),
    )


def _light_head(model: str, text: str, token: str) -> tuple[int, int]:
    """Of the heads with under BARELY of their weight on `token` (its last place) from the last
    position, the one whose exact ablation costs log P(answer) most, among the VERIFIED whose
    estimated cost is largest."""
    query = _last(model, text)
    run = attribution_runs.plain_run(model, text, query)
    position = [i for i, t in enumerate(run.tokens) if t == token][-1]
    amap = attribution_runs.estimate(model, text, query, run=run)
    barely = [r for r in amap.records if run.head(r.layer, r.head).weights[position] < BARELY]
    ranked = sorted(barely, key=lambda r: r.estimate)[:VERIFIED]
    heads = [(r.layer, r.head) for r in ranked]
    exact = attribution_runs.exact(model, text, query, heads, run=run)
    return min(exact, key=exact.__getitem__)


def _patch_head(model: str, text: str, changed: str) -> tuple[int, int]:
    """The head whose output from `text`, patched into `changed`, brings back the most of the
    answer, among the VERIFIED with the largest estimates (what the Causal map tab's Patch every
    head puts first)."""
    amap = attribution_runs.patching(model, text, changed, VERIFIED)
    best = max(amap.verified(), key=lambda r: r.exact)
    return best.layer, best.head


def _last(model: str, text: str) -> int:
    return model_runs.plain_run(model, text, None, "numpy").query_position


def _gradient_lied(model: str, text: str, before: Reading, after: Reading) -> Said:
    """The estimate, the exact change and the answer, with the estimate's own reasons."""
    layer, head, record = quiet_head(model, text)
    right = _expected(before)
    why = [sentence_warning(_p(before, right))]
    why += reasons(record.note, leave_out=("saturated",))
    return Said(
        "the estimate for {head} said log P({right}) changes by {estimate}; removing it "
        "changes it by {exact}: {final}, {runner_up}. Why the estimate missed: {why}",
        head=head_name(layer, head),
        right=shown_token(right),
        estimate=signed(record.estimate, 4),
        exact=signed(record.exact, 2),
        final=_final(before, after),
        runner_up=_runner_up(after),
        why=_and_also([w for w in why if w]),
    )


def _and_also(reasons: list) -> Said | str:
    """The estimate's reasons, each its own clause: "A; and B; and C"."""
    if not reasons:
        return ""
    said = reasons[0]
    for reason in reasons[1:]:
        # TRANSLATORS: two reasons why the gradient estimate missed, the second added.
        said = Said("{reasons}; and {reason}", reasons=said, reason=reason)
    return said


def _runner_up(r: Reading) -> Said:
    """The answer and the one after it, with their probabilities: how clearly it won."""
    pred = r.prediction
    first, second = sorted(zip(pred.after, pred.tokens, strict=True), reverse=True)[:2]
    # TRANSLATORS: the model's answer and the runner-up, each with its probability.
    return Said(
        "now {first} {p_first} ahead of {second} {p_second}",
        first=shown_token(first[1]),
        p_first=percent(first[0]),
        second=shown_token(second[1]),
        p_second=percent(second[0]),
    )


def _winner(r: Reading) -> int:
    return int(np.argmax(r.snapshot.weights))


def _index(r: Reading) -> int:
    return _winner(r)


def _tokens(r: Reading) -> tuple[str, ...]:
    return tuple(_token(label) for label in r.snapshot.labels)


def _weight_on(r: Reading, token: str) -> float:
    """The head's weight on every position holding ``token`` (by its label)."""
    shown = shown_token(token)
    return float(
        sum(
            w
            for w, label in zip(r.snapshot.weights, r.snapshot.labels, strict=True)
            if _mentions(label, shown)
        )
    )


def _positions(m: ModelState, token: str) -> list[int]:
    return [i for i, t in enumerate(m.run.tokens) if t == token]


def _head_on(m: ModelState, text: str, token: str) -> tuple[int, int]:
    """The head with the most weight from the last token on `token` in `text` (the head
    finder's rule)."""
    model = m.loaded
    run = _run(m, text)
    position = [i for i, t in enumerate(run.tokens) if t == token][-1]
    layer, head, _ = find_heads(
        run, model.n_layers, model.n_heads, criterion="on_token", position=position, top=1
    )[0]
    return layer, head
