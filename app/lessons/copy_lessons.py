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


def names(heads) -> str:
    return ", ".join(head_name(layer, head) for layer, head in heads)


# ------------------------------------------------------------------------- the verdicts


def previous_token_verdict(reading) -> str:
    q, best = query(), strongest(reading)
    earlier = q - len(words().words)  # the same word in the first copy
    where = "the word just before it" if best == q - 1 else f"position {best}"
    score = top("previous_token")[0].previous_token
    return (
        f"from {_word(q)}, this head puts {weight_at(reading, best):.1%} of its weight on "
        f"{_word(best)}, {where}; the same word's first copy gets "
        f"{weight_at(reading, earlier):.1%} and the first token {weight_at(reading, 0):.1%}; "
        f"over the whole text its previous-token score, the mean weight on the token just "
        f"before, is {score:.2f}"
    )


def previous_token_confirms(reading) -> bool:
    q = query()
    return strongest(reading) == q - 1 and weight_at(reading, q - 1) > 0.5


def third(layer: int, n_layers: int) -> str:
    """Which third of the model's depth a layer is in: early, middle or late."""
    return ("early", "middle", "late")[min(3 * layer // n_layers, 2)]


def induction_layers_verdict(reading) -> str:
    n_layers = reading.run.model.n_layers
    found = top("induction", TOP)
    listed = "; ".join(f"{head_name(s.layer, s.head)} scores {s.induction:.2f}" for s in found)
    layers = sorted({s.layer for s in found})
    where = sorted({third(layer, n_layers) for layer in layers})
    q = query()
    target = q - len(words().words) + 1  # the token after the first copy of the word at q
    return (
        f"the five heads with the highest induction scores: {listed}; all in layers "
        f"{' and '.join(map(str, layers))} of {n_layers} (counting from 0), the "
        f"{' and '.join(where)} third; the one now open, {head_name(*reading.head)}, puts "
        f"{weight_at(reading, target):.1%} of its weight from {_word(q)} on {_word(target)}, "
        f"the word that followed the first {_word(q)}"
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


def ablation_verdict(before, after) -> str:
    plain, broken, control = (
        second_copy_loss(before.run),
        second_copy_loss(after.run),
        control_loss(),
    )
    moves = "rises" if broken > plain else "falls"
    return (
        f"the second copy's mean loss {moves} from {plain:.2f} to {broken:.2f} nats a word "
        f"with the five induction heads ({names(induction_heads())}) ablated; ablating five "
        f"other heads of "
        f"the same layers instead ({names(other_heads())}, the lowest induction scores) "
        f"leaves it at {control:.2f}; the first copy costs {first_copy_loss():.2f} nats a word"
    )


def ablation_confirms(before, after) -> bool:
    plain, broken = second_copy_loss(before.run), second_copy_loss(after.run)
    return broken - plain > 1.0 and broken - plain > 5 * (control_loss() - plain)
