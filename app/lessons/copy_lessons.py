"""Part 8 of the lessons, "Heads that copy": the heads and the losses its steps measure.

No Panel import. Every head is found live from the copying scores of the shipped weights
(engine/trained/copying.py) on the repeated-words text, never named as a constant; every loss
is read from the model's own runs (process-wide cache, app/state/model_runs.py), so that every
student's page measuring the same step shares one forward. The steps themselves are in
app/lessons/model_lessons.py; here a reading is anything with `run`, `head` and `snapshot`.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from app.i18n.markers import N_
from app.i18n.said import Said
from app.lessons.numbers import fixed, integer, percent
from app.state import model_runs
from engine import trained
from engine.head_names import head_name
from engine.heads import shown_token
from engine.trained import copying, repeated_words

LM = "smollm2-135m"
SEED = 0  # the draw the steps open; tests/app/test_model_lessons.py holds REPEATED to it
# The text of `repeated_words.draw(SmolLM2's encode, SEED)`, written out so that the steps
# can be declared before the model loads.
REPEATED = (
    "Random words:"
    + " elbow moss lava beacon pumpkin nickel saddle tomato rocket buffalo walnut cucumber"
    " lizard avocado citrus olive" * 2
)
WORD = 3  # the steps read from the fourth word of the second copy (0-based in the copy)
TOP = 5  # how many induction heads the ablation step breaks, and how many others it compares


@cache
def words() -> repeated_words.RepeatedWords:
    return repeated_words.draw(trained.load(LM).encode, SEED)


def query() -> int:
    """The position the steps read from: a word of the second copy."""
    return words().second_copy[WORD]


@cache
def scores() -> tuple[copying.HeadScores, ...]:
    run = model_runs.plain_run(LM, REPEATED, None, "numpy")
    return tuple(copying.head_scores(run))


def top(kind: str, count: int = 1) -> list[copying.HeadScores]:
    return copying.ranked(list(scores()), kind, count)


def first(kind: str) -> tuple[int, int]:
    best = top(kind)[0]
    return best.layer, best.head


def induction_heads() -> list[tuple[int, int]]:
    return [(s.layer, s.head) for s in top("induction", TOP)]


def other_heads() -> list[tuple[int, int]]:
    """The control: as many heads of the induction heads' layers, those scoring lowest."""
    chosen = induction_heads()
    layers = {layer for layer, _ in chosen}
    others = [
        (s.layer, s.head)
        for s in copying.ranked(list(scores()), "induction")
        if s.layer in layers and (s.layer, s.head) not in chosen
    ]
    return others[-TOP:]


def ablations(heads) -> list[str]:
    """The heads as the Ablate heads control names them."""
    return [f"{layer}.{head}" for layer, head in heads]


def second_copy_loss(run) -> float:
    """Mean loss (nats) of the second copy's words (log-prob entry i predicts token i + 1)."""
    loss = -run.token_log_probs()
    return float(np.mean([loss[i - 1] for i in words().second_copy]))


def first_copy_loss() -> float:
    loss = -model_runs.plain_run(LM, REPEATED, None, "numpy").token_log_probs()
    return float(np.mean([loss[i - 1] for i in words().first_copy]))


def control_loss() -> float:
    edits = tuple(trained.AblateHead(layer, head) for layer, head in other_heads())
    return second_copy_loss(model_runs.edited_run(LM, REPEATED, None, "numpy", edits))


def _word(position: int) -> str:
    return shown_token(model_runs.plain_run(LM, REPEATED, None, "numpy").tokens[position])


def weight_at(reading, position: int) -> float:
    return float(reading.snapshot.weights[position])


def strongest(reading) -> int:
    return int(np.argmax(reading.snapshot.weights))


def names(heads) -> Said | str:
    """The heads' names, listed: "layer 18 head 6, layer 19 head 1"."""
    return listed([head_name(layer, head) for layer, head in heads], ", ")


# How a lesson's measurement lists things, joined pair by pair (`listed`).
LISTS = {
    # TRANSLATORS: a list in a lesson's measurement, "A, B, C" (in Chinese "A、B、C").
    ", ": N_("{earlier}, {later}"),
    # TRANSLATORS: a list in a lesson's measurement whose items are clauses: "A; B; C".
    "; ": N_("{earlier}; {later}"),
    # TRANSLATORS: a list in a lesson's measurement: "layers 18 and 19".
    " and ": N_("{earlier} and {later}"),
}


def listed(items: list, sep: str) -> Said | str:
    """Items one after another, in the session's language: each pair joined as `LISTS[sep]`
    joins them in its language, so "A, B, C" in English is "A、B、C" in Chinese."""
    if not items:
        return ""
    said = items[0]
    for item in items[1:]:
        said = Said(LISTS[sep], earlier=said, later=item)
    return said


# ------------------------------------------------------------------------- the verdicts


def previous_token_verdict(reading) -> Said:
    q, best = query(), strongest(reading)
    earlier = q - len(words().words)  # the same word in the first copy
    if best == q - 1:
        where = Said("the word just before it")
    else:
        where = Said("position {position}", position=integer(best))
    score = top("previous_token")[0].previous_token
    # TRANSLATORS: the measurement of part 8's first step; the words are the model's tokens.
    return Said(
        "from {word}, this head puts {share} of its weight on {target}, {where}; the same "
        "word's first copy gets {earlier} and the first token {first}; over the whole text its "
        "previous-token score, the mean weight on the token just before, is {score}",
        word=_word(q),
        share=percent(weight_at(reading, best)),
        target=_word(best),
        where=where,
        earlier=percent(weight_at(reading, earlier)),
        first=percent(weight_at(reading, 0)),
        score=fixed(score),
    )


def previous_token_confirms(reading) -> bool:
    q = query()
    return strongest(reading) == q - 1 and weight_at(reading, q - 1) > 0.5


# Which third of the model's depth a layer is in, as the measurement says it ("the {thirds}
# third"); `third` compares them as English.
THIRDS = (
    # TRANSLATORS: in "the early third" (of the model's layers).
    N_("early"),
    # TRANSLATORS: in "the middle third" (of the model's layers).
    N_("middle"),
    # TRANSLATORS: in "the late third" (of the model's layers).
    N_("late"),
)


def third(layer: int, n_layers: int) -> str:
    """Which third of the model's depth a layer is in: early, middle or late."""
    return THIRDS[min(3 * layer // n_layers, 2)]


def induction_layers_verdict(reading) -> str:
    n_layers = reading.run.model.n_layers
    found = top("induction", TOP)
    scored = [
        Said("{head} scores {score}", head=head_name(s.layer, s.head), score=fixed(s.induction))
        for s in found
    ]
    layers = sorted({s.layer for s in found})
    where = sorted({third(layer, n_layers) for layer in layers})
    q = query()
    target = q - len(words().words) + 1  # the token after the first copy of the word at q
    # TRANSLATORS: the measurement of part 8's second step; {thirds} is "early", "middle" or
    # "late" (or two of them joined by "and"); the words are the model's tokens.
    return Said(
        "the five heads with the highest induction scores: {scored}; all in layers {layers} of "
        "{n_layers} (counting from 0), the {thirds} third; the one now open, {head}, puts "
        "{share} of its weight from {word} on {target}, the word that followed the first {word}",
        scored=listed(scored, "; "),
        layers=listed([integer(layer) for layer in layers], " and "),
        n_layers=integer(n_layers),
        thirds=listed([Said(name) for name in where], " and "),
        head=head_name(*reading.head),
        share=percent(weight_at(reading, target)),
        word=_word(q),
        target=_word(target),
    )


def induction_layers_confirm(reading) -> bool:
    n_layers = reading.run.model.n_layers
    q = query()
    target = q - len(words().words) + 1
    return (
        reading.head == first("induction")
        and all(third(s.layer, n_layers) == "middle" for s in top("induction", TOP))
        and weight_at(reading, target) > 0.5
    )


def ablation_verdict(before, after) -> Said:
    plain, broken, control = (
        second_copy_loss(before.run),
        second_copy_loss(after.run),
        control_loss(),
    )
    if broken > plain:
        # TRANSLATORS: the measurement of part 8's last step, when the loss rises.
        template = N_(
            "the second copy's mean loss rises from {plain} to {broken} nats a word with the "
            "five induction heads ({induction}) ablated; ablating five other heads of the same "
            "layers instead ({others}, the lowest induction scores) leaves it at {control}; the "
            "first copy costs {first} nats a word"
        )
    else:
        # TRANSLATORS: the measurement of part 8's last step, when the loss falls.
        template = N_(
            "the second copy's mean loss falls from {plain} to {broken} nats a word with the "
            "five induction heads ({induction}) ablated; ablating five other heads of the same "
            "layers instead ({others}, the lowest induction scores) leaves it at {control}; the "
            "first copy costs {first} nats a word"
        )
    return Said(
        template,
        plain=fixed(plain),
        broken=fixed(broken),
        induction=names(induction_heads()),
        others=names(other_heads()),
        control=fixed(control),
        first=fixed(first_copy_loss()),
    )


def ablation_confirms(before, after) -> bool:
    plain, broken = second_copy_loss(before.run), second_copy_loss(after.run)
    return broken - plain > 1.0 and broken - plain > 5 * (control_loss() - plain)
