"""The audit on a trained head, one experiment per click: change one causal object, then record
the local change (that head's weights and output at the question) and the final change (the
answer and the probability of the right answer).

Experiments name their positions from the program: the *winner* is the definition holding the
head's top weight at the question (for the retrieval head on a defined name, the answering
definition), the *rival* is the latest other definition, preferring one with a different value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

import numpy as np

from ..heads import token_probability
from ..messages import Problem
from ..wording import N_, Amount, Fixed, Phrase
from . import binding_task as task
from .binding import BindingModel
from .card import refusal
from .counterfactual import counterfactual
from .edits import (
    AblateHead,
    Edit,
    HeadTemperature,
    MaskPosition,
    PatchHead,
    ReplaceKey,
    RotateQuery,
    ScaleKey,
    ScaleValue,
    SwapValues,
    Window,
    head_phrase,
)
from .runs import Run


class ExperimentInfo(NamedTuple):
    title: str
    description: str


EXPERIMENTS: dict[str, ExperimentInfo] = {
    "swap_values": ExperimentInfo(
        N_("Swap the payloads"),
        N_("Exchange the value vectors of the winning definition and a rival; keys stay put."),
    ),
    "replace_key": ExperimentInfo(
        N_("Copy a rival's address"),
        N_("The winner's value-token key becomes the rival's key, so the two addresses collide."),
    ),
    "insert_distractor": ExperimentInfo(
        N_("Insert a distractor definition"),
        N_("Add a definition of another name just before the question (a new, later fact)."),
    ),
    "distractor_key_norm": ExperimentInfo(
        N_("Lengthen a distractor's key"),
        N_("Multiply the rival's value-token key by 4: a dot product grows with length."),
    ),
    "window": ExperimentInfo(
        N_("Move the answer outside the window"),
        N_("A causal window that ends just after the winner's value: it is no longer a candidate."),
    ),
    "mask_winner": ExperimentInfo(
        N_("Mask the winning key"),
        N_("Hide the top-weight position from every query of this head."),
    ),
    "temperature_x4": ExperimentInfo(
        N_("Temperature x4"), N_("Divide this head's logits by 4: the route spreads out.")
    ),
    "temperature_div4": ExperimentInfo(
        N_("Temperature /4"), N_("Multiply this head's logits by 4: the route sharpens.")
    ),
    "rotate_query": ExperimentInfo(
        N_("Turn the query a quarter turn"),
        N_("Rotate the question's query 90 degrees in the plane of q and the top key."),
    ),
    "ablate_head": ExperimentInfo(
        N_("Ablate this head"), N_("Zero this head's output at every position.")
    ),
    "ablate_layer0": ExperimentInfo(
        N_("Ablate a layer-0 head"),
        N_("Zero the layer-0 head that matters most here; layer 1 then sees a different stream."),
    ),
    "patch_head": ExperimentInfo(
        N_("Patch this head from a changed sentence"),
        N_(
            "Give this head the output it has when the fact changes (same length, e.g. a=3 becomes "
            "a=0): if it carries the fact, the answer follows the change."
        ),
    ),
    "weight_vs_responsibility": ExperimentInfo(
        N_("Weight is not responsibility"),
        N_("Zero the value of the top-weight position: its weight cannot move, its effect can."),
    ),
}


@dataclass(frozen=True)
class ExperimentResult:
    name: str
    title: str
    edit: str
    layer: int
    head: int
    text_before: str
    text_after: str
    tokens_after: tuple[str, ...]
    weights_before: np.ndarray  # aligned with tokens_after (zeros where a token is new)
    weights_after: np.ndarray
    max_weight_change: float
    output_change: float  # |delta output| in head space
    residual_change: float  # |delta contribution| in the residual stream
    answer_before: str
    answer_after: str
    expected: str
    p_expected_before: float
    p_expected_after: float
    details: dict[str, Any] = field(default_factory=dict)
    edits: tuple = ()  # the edits that make `text_after`'s run the "after" (none for new text)
    reference: str = "right answer"  # what `expected` is: reference_kind's words

    @property
    def rewrote_program(self) -> bool:
        """Whether the "after" ran on a rewritten copy of the program (a new fact inserted)."""
        return self.text_after != self.text_before

    @property
    def answer_changed(self) -> bool:
        return self.answer_before != self.answer_after

    def as_row(self) -> dict[str, Any]:
        """Scalars only, with the same keys for every experiment (a table or CSV row)."""
        row = {
            k: v
            for k, v in asdict(self).items()
            if k not in ("weights_before", "weights_after", "tokens_after", "details", "edits")
        }
        row["answer_changed"] = self.answer_changed
        row["top_weight_position"] = self.details.get("top_weight_position")
        row["note"] = self.note
        return row

    @property
    def note(self) -> str:
        """The experiment's own measurements, as one line (a `Phrase`: English as `str`)."""
        d = self.details
        if self.name != "weight_vs_responsibility":
            return ""
        # TRANSLATORS: the line under the "Weight is not responsibility" row of the experiments
        # table; a contribution's norm is the length of what a position adds to the stream.
        template = N_(
            "top weight {weight} at position {position} (after: {after}); largest contribution "
            "at position {largest} (norm {norm}, top-weight position's {top_norm})"
        )
        values = {
            "weight": Fixed(d["top_weight"], 3),
            "position": d["top_weight_position"],
            "after": Fixed(d["top_weight_after"], 3),
            "largest": d["top_contribution_position"],
            "norm": _three_figures(d["max_contribution_norm"]),
            "top_norm": _three_figures(d["top_weight_contribution_norm"]),
        }
        return Phrase(template, values)


def _three_figures(x: float) -> Amount | str:
    """`f"{x:.3g}"` as a number the page writes the language's way, or as that text where the
    general format would write it otherwise (1.23e+03 is not 1230)."""
    text = f"{x:.3g}"
    return Amount(float(text)) if format(float(text), "g") == text else text


def _definition_of(position: int, program: task.Program) -> int | None:
    d = (position - 1) // 4
    return d if position >= 1 and 0 <= d < len(program.definitions) else None


def _winner(run: Run, program: task.Program, layer: int, head: int) -> int:
    d = program.answer_definition
    if d is not None:
        return d
    top = int(np.argmax(run.attention(layer, head)))
    d = _definition_of(top, program)
    if d is None:
        # Undefined name and a top weight outside every definition: take the last one.
        return len(program.definitions) - 1
    return d


def _rival(program: task.Program, winner: int) -> int:
    defs = program.definitions
    others = [i for i in range(len(defs)) if i != winner]
    if not others:
        raise Problem("this experiment needs a second definition to compare against")
    differing = [i for i in others if defs[i][1] != defs[winner][1]]
    return (differing or others)[-1]


def _distractor_text(program: task.Program) -> str:
    if len(program.definitions) >= task.MAX_DEFS:
        raise Problem(
            "the program already has {count} definitions: no room for a distractor",
            count=task.MAX_DEFS,
        )
    used = {n for n, _ in program.definitions} | {program.question}
    name = next(n for n in task.NAMES if n not in used)
    answer = program.answer
    value = next(v for v in reversed(task.VALUES) if v != answer)
    defs = (*program.definitions, (name, value))
    return task.render(defs, program.question)


# Experiments that name positions from a program of definitions (the binding task); the others
# need only a head, so they run on any model with this interface (a language model too).
NEEDS_PROGRAM = frozenset(
    {"swap_values", "replace_key", "insert_distractor", "distractor_key_norm", "window"}
)


def available(model) -> list[str]:
    """The experiments that apply to `model`'s runs, in table order."""
    return [name for name in EXPERIMENTS if _reads_programs(model) or name not in NEEDS_PROGRAM]


def _reads_programs(model) -> bool:
    """Whether the model's texts are programs of definitions (the binding task's grammar)."""
    return getattr(model, "name", "") == "binding"


def reference_answer(run) -> str:
    """The answer whose probability an experiment follows: the grammar's right answer, or for a
    model without one (a language model) its own first choice."""
    return run.expected if run.expected is not None else run.answer


def reference_kind(run) -> str:
    """What `reference_answer(run)` is, in words: "right answer" (the grammar's) or, for a
    model without one, "first choice" (its own likeliest next token before the change)."""
    return "right answer" if run.expected is not None else "first choice"


def _layer0_head(model: BindingModel, run: Run) -> int:
    """The layer-0 head whose ablation moves the reference answer's probability most."""
    ref = reference_answer(run)
    base = token_probability(run, ref)
    effects = [
        abs(token_probability(run.intervene(AblateHead(0, h)), ref) - base)
        for h in range(model.n_heads)
    ]
    return int(np.argmax(effects))


@dataclass
class _Before:
    """What an experiment reads from the run before its change."""

    model: Any
    text: str  # as given (the run's own text may be normalised)
    run: Run
    program: task.Program | None  # None for a model whose texts are not programs
    layer: int
    head: int
    top: int  # the position of the head's top weight at the question
    details: dict[str, Any]

    @property
    def weights(self) -> np.ndarray:
        return self.run.attention(self.layer, self.head)

    @property
    def winner(self) -> int:
        return _winner(self.run, self.program, self.layer, self.head)

    def value(self, definition: int) -> int:
        """The position of a definition's value token."""
        return task.value_position(definition)

    def rival(self) -> int:
        return _rival(self.program, self.winner)


@dataclass(frozen=True)
class _Change:
    """An experiment's change: an edit on the run before, or a rewritten text."""

    edit: Edit | None = None
    text: str | None = None  # the program rewritten (the edit is then None)
    description: str = ""  # what the result says was done (default: the edit's own words)
    measure_after: Callable[[np.ndarray], dict[str, Any]] | None = None  # weights -> details


def _insert_distractor(b: _Before) -> _Change:
    text = _distractor_text(b.program)
    # TRANSLATORS: an experiment's edit; {definition} is the inserted "x=3" (never translated).
    template = N_("insert '{definition};' before the question")
    return _Change(text=text, description=Phrase(template, {"definition": _last_definition(text)}))


def _last_definition(text: str) -> str:
    return text.split(";")[-2].strip()


def _window(b: _Before) -> _Change:
    # The question sees positions > qpos - size; ending just after the winner's value.
    size = b.run.query_position - b.value(b.winner)
    return _Change(Window(b.layer, b.head, size))


def _patch_head(b: _Before) -> _Change:
    changed, change = counterfactual(b.model, b.text)
    donor = b.model.run(changed)
    b.details.update(changed_text=changed, change=change, changed_answer=donor.answer)
    return _Change(
        PatchHead(b.layer, b.head, donor.head(b.layer, b.head).all_outputs),
        description=Phrase(
            N_("patch {head}'s output from the changed sentence ({change})"),
            {
                "head": head_phrase(b.layer, b.head),
                "change": change,
            },
        ),
    )


def _weight_vs_responsibility(b: _Before) -> _Change:
    """Zero the top-weight position's value, and measure which position moves the residual
    stream most: the weight stays, the effect goes."""
    rec = b.run.head(b.layer, b.head)
    each = rec.weights[:, None] * rec.v
    if hasattr(b.model, "w"):  # into the residual stream, through this head's output matrix
        dh = b.model.d_head
        each = each @ b.model.w[f"wo{b.layer}"][b.head * dh : (b.head + 1) * dh]
    shares = np.linalg.norm(each, axis=1)
    b.details["top_contribution_position"] = int(np.argmax(shares))
    b.details["top_weight"] = float(b.weights[b.top])
    b.details["top_weight_contribution_norm"] = float(shares[b.top])
    b.details["max_contribution_norm"] = float(shares.max())
    return _Change(
        ScaleValue(b.layer, b.head, b.top, 0.0),
        measure_after=lambda after: {"top_weight_after": float(after[b.top])},
    )


# Each experiment's change, in the order of EXPERIMENTS.
_CHANGES: dict[str, Callable[[_Before], _Change]] = {
    "swap_values": lambda b: _Change(
        SwapValues(b.layer, b.head, b.value(b.winner), b.value(b.rival()))
    ),
    "replace_key": lambda b: _Change(
        ReplaceKey(b.layer, b.head, b.value(b.winner), b.value(b.rival()))
    ),
    "insert_distractor": _insert_distractor,
    "distractor_key_norm": lambda b: _Change(ScaleKey(b.layer, b.head, b.value(b.rival()), 4.0)),
    "window": _window,
    "mask_winner": lambda b: _Change(MaskPosition(b.layer, b.head, b.top)),
    "temperature_x4": lambda b: _Change(HeadTemperature(b.layer, b.head, 4.0)),
    "temperature_div4": lambda b: _Change(HeadTemperature(b.layer, b.head, 0.25)),
    "rotate_query": lambda b: _Change(RotateQuery(b.layer, b.head, 90.0)),
    "ablate_head": lambda b: _Change(AblateHead(b.layer, b.head)),
    "ablate_layer0": lambda b: _Change(AblateHead(0, _layer0_head(b.model, b.run))),
    "patch_head": _patch_head,
    "weight_vs_responsibility": _weight_vs_responsibility,
}


def run_experiment(
    model: BindingModel, text: str, name: str, layer: int | None = None, head: int | None = None
) -> ExperimentResult:
    """Run one experiment on ``(layer, head)`` (default: the model's retrieval head)."""
    if name not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {name!r}; choose from {', '.join(EXPERIMENTS)}")
    if layer is None or head is None:
        layer, head = model.retrieval_head
    if not (0 <= layer < model.n_layers and 0 <= head < model.n_heads):
        raise Problem("no head ({layer}, {head}) in this model", layer=layer, head=head)
    run = model.run(text)
    program = task.parse(run.text) if _reads_programs(model) else None
    if program is None and name in NEEDS_PROGRAM:
        raise ValueError(f"{EXPERIMENTS[name].title!r} needs a program of definitions")
    top = int(np.argmax(run.attention(layer, head)))
    before = _Before(model, text, run, program, layer, head, top, {"top_weight_position": top})
    change = _CHANGES[name](before)
    if change.text is None:
        after = run.intervene(change.edit)
        weights_before = before.weights
    else:
        after = model.run(change.text)
        # New tokens sit before "?": align the old weights around them.
        extra = np.zeros(len(after.tokens) - len(run.tokens))
        weights_before = np.concatenate([before.weights[:-2], extra, before.weights[-2:]])
    weights_after = after.attention(layer, head)
    if change.measure_after is not None:
        before.details.update(change.measure_after(weights_after))
    return _result(name, before, change, after, weights_before, weights_after)


def _result(name, before: _Before, change: _Change, after: Run, w_before, w_after):
    text = before.text
    rb, ra = before.run.head(before.layer, before.head), after.head(before.layer, before.head)
    reference = reference_answer(before.run)
    return ExperimentResult(
        name=name,
        title=EXPERIMENTS[name].title,
        edit=change.description or change.edit.describe(),
        layer=before.layer,
        head=before.head,
        text_before=text,
        text_after=text if change.text is None else change.text,
        tokens_after=after.tokens,
        weights_before=w_before,
        weights_after=w_after,
        max_weight_change=float(np.max(np.abs(w_after - w_before))),
        output_change=float(np.linalg.norm(ra.output - rb.output)),
        residual_change=float(np.linalg.norm(ra.contribution - rb.contribution)),
        answer_before=before.run.answer,
        answer_after=after.answer,
        expected=reference,
        p_expected_before=token_probability(before.run, reference),
        p_expected_after=token_probability(after, reference),
        details=before.details,
        edits=() if change.edit is None else (change.edit,),
        reference=reference_kind(before.run),
    )


def run_all(model: BindingModel, text: str, layer=None, head=None) -> list[ExperimentResult]:
    """Every experiment that applies to ``text`` (those needing a rival or room are skipped)."""
    out = []
    for name in EXPERIMENTS:
        try:
            out.append(run_experiment(model, text, name, layer, head))
        except ValueError:
            continue
    return out


def refusal_profile(model: BindingModel, n: int = 400, seed: int = 7, head=None) -> dict:
    """Where the retrieval head (or ``head``) puts its weight, by token kind, on undefined-name
    programs against defined ones: mean weight per kind and the share of top weights."""
    programs = task.dataset(seed, n)
    _, rows = model.forward_batch(programs)
    return refusal(programs, rows, tuple(head) if head else model.retrieval_head)


def weight_vs_contribution(model: BindingModel, n: int = 300, seed: int = 7) -> dict:
    """For every head, how often the highest-weight position at the question is not the one
    whose weighted value moves the residual stream most (|w_j v_j W_O|), on generated programs.

    Returns {"L1H1": {"programs": n, "differ": count, "share": count / n}, ...}."""
    programs = task.dataset(seed, n)
    out = {}
    for layer in range(model.n_layers):
        for head in range(model.n_heads):
            wo = model.w[f"wo{layer}"][head * model.d_head : (head + 1) * model.d_head]
            differ = 0
            for p in programs:
                rec = model.run(p.text).head(layer, head)
                shares = np.linalg.norm((rec.weights[:, None] * rec.v) @ wo, axis=1)
                differ += int(np.argmax(shares)) != int(np.argmax(rec.weights))
            out[f"L{layer}H{head}"] = {"programs": n, "differ": differ, "share": differ / n}
    return out
