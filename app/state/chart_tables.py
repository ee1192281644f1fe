"""The remaining plots in words: the d_k sweep, the Jacobian, every head's grid, the model's
answer, the estimate grid and its receipt, and the class's votes (no Panel, no Bokeh).

The same `SceneTable` as the first screen's plots (app/state/scene_tables.py), each made from
what its chart draws: where a view picks rows (the Jacobian's heaviest keys, the answer's
likeliest tokens), the choice is made here and the view draws the same rows, so the words and
the drawing cannot disagree. `app/views/plot_text.py` writes them into the page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from app.i18n.head_words import head_words
from app.i18n.markers import N_
from app.i18n.said import Said
from app.i18n.translator import ENGLISH, Translator
from engine.head_names import head_name
from engine.heads import shown_token

from .estimate_words import ReasonNames
from .scene_tables import MAX_ROWS, SceneTable, Words, now, number, percent, sentences

# Rows of one head each: every head while they fit (the binding model's 4), else the
# sharpest (SmolLM2's 270 would be a table nobody reads to its end).
MAX_HEAD_ROWS = 24
ANSWERS_SHOWN = 8  # the answer chart's likeliest answers; the rest are one "all others" row
# The answer chart's last row: its token, so it is translated where shown (answer_name).
ALL_OTHERS = N_("all others")


class HeadName(Words):
    """A head's name as a table cell: "layer 13 head 8" in English, `head_words` in the reader's
    language, so in a right-to-left sentence it keeps its own isolate and its words' order."""

    def __new__(cls, layer: int, head: int):
        made = super().__new__(cls, None, head_name(layer, head))
        made.layer, made.head = int(layer), int(head)
        return made

    def text(self, tr: Translator = ENGLISH) -> str:
        return head_words(self.layer, self.head, tr)


def _left_out(listed: int, total: int, said: Said) -> Said | str:
    """`said` ("The table lists the 12 heaviest of 40 keys.") unless every row is listed."""
    return "" if listed == total else said


# ---------------------------------------------------------------------------- d_k sweep


def dimension_table(sweep, d_k: int) -> SceneTable:
    """The two d_k charts: logit spread and entropy at each d_k, unscaled and scaled."""
    dims = [int(d) for d in sweep.d_k]
    current = int(d_k)
    values = {
        "trials": sweep.trials,
        "n_keys": sweep.n_keys,
        "temperature": number(sweep.temperature),
        "d_k": current,
    }
    description = (
        Said(
            "Random queries and keys in d_k dimensions, {trials} trials of {n_keys} keys each, "
            "at temperature {temperature}. Without the scale the logits' spread grows like "
            "√d_k and the route's entropy falls; divided by √d_k the spread stays near 1 and "
            "the entropy holds. Now d_k is {d_k}.",
            **values,
        )
        if current in dims
        else Said(
            "Random queries and keys in d_k dimensions, {trials} trials of {n_keys} keys each, "
            "at temperature {temperature}. Without the scale the logits' spread grows like "
            "√d_k and the route's entropy falls; divided by √d_k the spread stays near 1 and "
            "the entropy holds. Now d_k is {d_k}, between the measured values.",
            **values,
        )
    )
    body = tuple(
        (
            now(Words(str(d)), d == current),
            number(sweep.logit_std_unscaled[i]),
            number(sweep.logit_std_scaled[i]),
            number(sweep.theory_std[i]),
            number(sweep.entropy_unscaled[i]),
            number(sweep.entropy_scaled[i]),
        )
        for i, d in enumerate(dims)
    )
    columns = (
        "d_k",
        Said("spread unscaled"),
        Said("spread scaled"),
        Said("√d_k theory"),
        Said("entropy unscaled (nats)"),
        Said("entropy scaled (nats)"),
    )
    title = Said("Logit spread and entropy vs d_k")
    return SceneTable("dimension", title, description, columns, body)


# ---------------------------------------------------------------------------- Jacobian


@dataclass(frozen=True)
class JacobianBlock:
    """The block of the Jacobian the heatmap draws: `keep` indexes the keys (in their order)."""

    keep: np.ndarray
    labels: tuple[str, ...]
    values: np.ndarray  # (k, k): d w_keep[i] / d s_keep[j]
    total: int  # keys in the route


def jacobian_block(snap, max_side: int) -> JacobianBlock:
    """Every key while they fit `max_side`, else the `max_side` heaviest, in the keys' order."""
    jac = np.asarray(snap.jacobian, dtype=np.float64)
    weights = np.asarray(snap.weights, dtype=np.float64)
    labels = list(snap.labels)
    side = min(len(jac), len(labels))
    if side > max_side:
        keep = np.sort(np.argsort(-weights[:side], kind="stable")[:max_side])
    else:
        keep = np.arange(side)
    return JacobianBlock(keep, tuple(labels[i] for i in keep), jac[np.ix_(keep, keep)], len(labels))


def jacobian_table(block: JacobianBlock) -> SceneTable:
    """One row per weight w_i, one column per scaled score s_j: the heatmap's cells."""
    k = len(block.labels)
    largest = float(np.max(np.abs(block.values), initial=0.0))
    left_out = Said(
        "The table lists the {listed} heaviest of {total} keys.", listed=k, total=block.total
    )
    description = sentences(
        Said(
            "How much each weight w_i moves when one scaled score s_j is nudged (∂w_i/∂s_j): "
            "positive on the diagonal, zero or negative off it. The largest in size is "
            "{largest}; near 0 everywhere, the softmax is saturated and no nudge moves the "
            "route.",
            largest=number(largest, 4),
        ),
        _left_out(k, block.total, left_out),
    )
    body = tuple(
        (f"w {block.labels[i]}", *(number(block.values[i, j], 4) for j in range(k)))
        for i in range(k)
    )
    columns = (Said("weight"), *(f"s {label}" for label in block.labels))
    return SceneTable("jacobian", Said("Softmax Jacobian ∂w_i/∂s_j"), description, columns, body)


# ---------------------------------------------------------------------------- every head


def head_grid_table(rows: dict, open_head: tuple[int, int]) -> SceneTable:
    """The grid of every head (`ModelState.head_grid`): one row per head, its strongest key."""
    n = len(rows["layer"])
    top = np.asarray(rows["top_weight"], dtype=np.float64)
    order = list(range(n))
    if n > MAX_HEAD_ROWS:
        order = [int(i) for i in np.argsort(-top, kind="stable")[:MAX_HEAD_ROWS]]
    focus = int(rows["focus_key"][0]) if n else 0
    layer, head = open_head
    left_out = Said(
        "The table lists the {listed} sharpest (most weight on one key) of {total} heads.",
        listed=len(order),
        total=n,
    )
    description = sentences(
        Said(
            "Every head's whole pattern, one cell per head, layer by layer. Each row is one "
            "head at the query position: the key it weighs most, that weight, how spread its "
            "row is (entropy in nats) and its weight on position {focus}, the open head's "
            "({head}) strongest key.",
            focus=focus,
            head=HeadName(layer, head),
        ),
        _left_out(len(order), n, left_out),
    )
    body = tuple(
        (
            _head_cell(
                HeadName(rows["layer"][i], rows["head"][i]),
                (rows["layer"][i], rows["head"][i]) == (layer, head),
            ),
            Said(
                "{token} (position {position})",
                token=shown_token(rows["top_token"][i]),
                position=rows["top_key"][i],
            ),
            number(rows["top_weight"][i]),
            number(rows["entropy"][i]),
            number(rows["on_focus"][i]),
        )
        for i in order
    )
    columns = (
        Said("head"),
        Said("strongest key"),
        Said("its weight"),
        Said("entropy (nats)"),
        Said("on position {focus}", focus=focus),
    )
    return SceneTable("head_grid", Said("Every head at once"), description, columns, body)


def _head_cell(name: Words, open_: bool) -> Said | Words:
    # TRANSLATORS: the grid of every head in words: the head open in the page ("layer 2 head 1
    # (open)").
    return Said("{head} (open)", head=name) if open_ else name


# ---------------------------------------------------------------------------- the answer


@dataclass(frozen=True)
class AnswerRows:
    """The answer chart's rows: the likeliest answers (and the expected one), then the rest."""

    tokens: tuple[str, ...]  # ALL_OTHERS for the rest of the vocabulary
    before: tuple[float, ...]
    after: tuple[float, ...]
    correct: tuple[bool, ...]


def top_rows(prediction, shown: int = ANSWERS_SHOWN) -> list[int]:
    """Indices of the answers to draw: the expected one and the likeliest before or after."""
    before, after = np.asarray(prediction.before), np.asarray(prediction.after)
    order = np.argsort(-np.maximum(before, after), kind="stable")
    keep = [int(i) for i in order[:shown]]
    if prediction.expected in prediction.tokens:
        expected = prediction.tokens.index(prediction.expected)
        if expected not in keep:
            keep[-1] = expected
    return keep


def answer_rows(prediction) -> AnswerRows:
    keep = top_rows(prediction)
    before, after = np.asarray(prediction.before), np.asarray(prediction.after)
    tokens = [prediction.tokens[i] for i in keep]
    b, a = [float(before[i]) for i in keep], [float(after[i]) for i in keep]
    # Everything not drawn, as one row: the rest of the whole vocabulary (a language model
    # lists only its likeliest tokens, so this is 1 minus what is drawn, not a sum of rows).
    rest_before, rest_after = max(0.0, 1.0 - sum(b)), max(0.0, 1.0 - sum(a))
    if len(prediction.tokens) > len(keep) or rest_before > 1e-6 or rest_after > 1e-6:
        tokens.append(ALL_OTHERS)
        b.append(rest_before)
        a.append(rest_after)
    correct = tuple(t == prediction.expected for t in tokens)
    return AnswerRows(tuple(tokens), tuple(b), tuple(a), correct)


def answer_name(token: str) -> str:
    """An answer's row label: the token as shown, or the rest's row (`Words`: translated)."""
    return Words(Said(ALL_OTHERS)) if token == ALL_OTHERS else shown_token(token)


def _model_answers(prediction) -> Said:
    """The answer's first sentence: what the model answers, what it answered before the
    intervention (when that differs) and the right answer (when there is one)."""
    now_, was = shown_token(prediction.answer_after), shown_token(prediction.answer_before)
    changed = prediction.answer_after != prediction.answer_before
    if prediction.expected is None:
        if changed:
            return Said(
                "The model answers {answer} (it answered {before} before the intervention).",
                answer=now_,
                before=was,
            )
        return Said("The model answers {answer}.", answer=now_)
    right = shown_token(prediction.expected)
    if changed:
        return Said(
            "The model answers {answer} (it answered {before} before the intervention); the "
            "right answer is {right}.",
            answer=now_,
            before=was,
            right=right,
        )
    return Said(
        "The model answers {answer}; the right answer is {right}.", answer=now_, right=right
    )


def answer_table(prediction) -> SceneTable:
    """The model's answer: each answer's probability before the intervention and now."""
    rows = answer_rows(prediction)
    description = sentences(
        _model_answers(prediction),
        Said(
            "Each answer's probability before the intervention and with it (now), the "
            "likeliest first; the last row is every other answer together."
        )
        if ALL_OTHERS in rows.tokens
        else Said("Each answer's probability before the intervention and with it (now)."),
    )
    body = tuple(
        (_right(answer_name(t), ok), percent(b), percent(a))
        for t, b, a, ok in zip(rows.tokens, rows.before, rows.after, rows.correct, strict=True)
    )
    columns = (Said("answer"), Said("before the intervention"), Said("with it (now)"))
    return SceneTable("answer", Said("The model's answer"), description, columns, body)


def _right(choice, ok: bool):
    # TRANSLATORS: the plots in words: the row of the right answer ("Paris (right)").
    return Said("{choice} (right)", choice=choice) if ok else choice


# ---------------------------------------------------------------------------- estimate, receipt


def _signed(x: float | None, digits: int = 3) -> Words:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return Words(Said("not checked"))
    text = number(x, digits)
    # TRANSLATORS: a change written with its sign ("+0.120").
    return text if text.startswith("-") else Words(Said("+{number}", number=text))


def estimate_table(amap) -> SceneTable:
    """The estimate grid: each head's estimated change of log P(answer) if removed, the
    largest first, with the real change where the head was checked by removing it."""
    ranked = amap.ranked()
    listed = ranked[:MAX_ROWS]
    answer = shown_token(amap.answer)
    checked = len(amap.verified())
    left_out = Said(
        "The table lists the {listed} largest estimates of {total} heads.",
        listed=len(listed),
        total=len(ranked),
    )
    description = sentences(
        Said(
            "One backward pass estimates, for every head, how log P({answer}) would change if "
            "the head were removed (negative: the head helps the answer). P({answer}) is "
            "{probability}. {checked} of {total} heads were checked by really removing them.",
            answer=answer,
            probability=percent(amap.prob),
            checked=checked,
            total=len(ranked),
        ),
        _left_out(len(listed), len(ranked), left_out),
    )
    body = tuple(
        (HeadName(r.layer, r.head), _signed(r.estimate, 4), _signed(r.exact)) for r in listed
    )
    columns = (
        Said("head"),
        Said("estimated change of log P({answer})", answer=answer),
        Said("real change (removed)"),
    )
    title = Said("Each head's estimated effect")
    return SceneTable("estimate", title, description, columns, body)


def receipt_table(amap) -> SceneTable:
    """The receipt: every checked head's estimate against its real change, the furthest from
    agreeing first, with the names of its warnings (as the dots' hover gives them)."""
    checked = sorted(amap.verified(), key=lambda r: -abs(r.exact - r.estimate))
    description = Said(
        "The heads checked by really removing them: the estimate beside the real change of "
        "log P. Where the two agree the dot sits on the dashed diagonal; the furthest from it "
        "come first."
    )
    body = tuple(
        (
            HeadName(r.layer, r.head),
            _signed(r.estimate, 4),
            _signed(r.exact),
            _signed(r.exact - r.estimate),
            ReasonNames(r.note),
        )
        for r in checked
    )
    columns = (
        Said("head"),
        Said("estimated"),
        Said("real"),
        Said("real minus estimated"),
        Said("warning"),
    )
    return SceneTable("receipt", Said("Estimate vs real removal"), description, columns, body)


# ---------------------------------------------------------------------------- the class's votes


def votes_table(step: int, rows: dict, *, revealed: bool) -> SceneTable:
    """The class's predictions (the vote chart's columns): students per choice."""
    total = sum(int(c) for c in rows["count"])
    right = [c for c, ok in zip(rows["choice"], rows["correct"], strict=True) if ok]
    description = sentences(
        Said(
            "How many students chose each answer to step {step}'s prediction, {total} in all.",
            step=step,
            total=total,
        ),
        Said("The right answer is {right}.", right=right[0]) if revealed and right else "",
    )
    body = tuple(
        (_right(str(choice), ok), str(int(count)))
        for choice, count, ok in zip(rows["choice"], rows["count"], rows["correct"], strict=True)
    )
    title = Said("The class's predictions, step {step}", step=step)
    return SceneTable("class_votes", title, description, (Said("choice"), Said("students")), body)
