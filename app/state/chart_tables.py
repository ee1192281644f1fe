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

from engine.head_names import head_name
from engine.heads import shown_token

from .estimate_words import short
from .scene_tables import MAX_ROWS, SceneTable, number, percent

# Rows of one head each: every head while they fit (the binding model's 4), else the
# sharpest (SmolLM2's 270 would be a table nobody reads to its end).
MAX_HEAD_ROWS = 24
ANSWERS_SHOWN = 8  # the answer chart's likeliest answers; the rest are one "all others" row
ALL_OTHERS = "all others"


def _left_out(listed: int, total: int, what: str, order: str) -> str:
    return "" if listed == total else f" The table lists the {listed} {order} of {total} {what}."


# ---------------------------------------------------------------------------- d_k sweep


def dimension_table(sweep, d_k: int) -> SceneTable:
    """The two d_k charts: logit spread and entropy at each d_k, unscaled and scaled."""
    dims = [int(d) for d in sweep.d_k]
    now = int(d_k)
    description = (
        f"Random queries and keys in d_k dimensions, {sweep.trials} trials of "
        f"{sweep.n_keys} keys each, at temperature {number(sweep.temperature)}. Without the "
        "scale the logits' spread grows like √d_k and the route's entropy falls; divided by "
        "√d_k the spread stays near 1 and the entropy holds. Now d_k is "
        f"{now}{'' if now in dims else ', between the measured values'}."
    )
    body = tuple(
        (
            f"{d}" + (" (now)" if d == now else ""),
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
        "spread unscaled",
        "spread scaled",
        "√d_k theory",
        "entropy unscaled (nats)",
        "entropy scaled (nats)",
    )
    return SceneTable("dimension", "Logit spread and entropy vs d_k", description, columns, body)


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
    description = (
        "How much each weight w_i moves when one scaled score s_j is nudged (∂w_i/∂s_j): "
        "positive on the diagonal, zero or negative off it. The largest in size is "
        f"{number(largest, 4)}; near 0 everywhere, the softmax is saturated and no nudge moves "
        f"the route.{_left_out(k, block.total, 'keys', 'heaviest')}"
    )
    body = tuple(
        (f"w {block.labels[i]}", *(number(block.values[i, j], 4) for j in range(k)))
        for i in range(k)
    )
    columns = ("weight", *(f"s {label}" for label in block.labels))
    return SceneTable("jacobian", "Softmax Jacobian ∂w_i/∂s_j", description, columns, body)


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
    description = (
        f"Every head's whole pattern, one cell per head, layer by layer. Each row is one head "
        f"at the query position: the key it weighs most, that weight, how spread its row is "
        f"(entropy in nats) and its weight on position {focus}, the open head's "
        f"({head_name(layer, head)}) strongest key."
        + _left_out(len(order), n, "heads", "sharpest (most weight on one key)")
    )
    body = tuple(
        (
            head_name(rows["layer"][i], rows["head"][i])
            + (" (open)" if (rows["layer"][i], rows["head"][i]) == (layer, head) else ""),
            f"{shown_token(rows['top_token'][i])} (position {rows['top_key'][i]})",
            number(rows["top_weight"][i]),
            number(rows["entropy"][i]),
            number(rows["on_focus"][i]),
        )
        for i in order
    )
    columns = ("head", "strongest key", "its weight", "entropy (nats)", f"on position {focus}")
    return SceneTable("head_grid", "Every head at once", description, columns, body)


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
    return token if token == ALL_OTHERS else shown_token(token)


def answer_table(prediction) -> SceneTable:
    """The model's answer: each answer's probability before the intervention and now."""
    rows = answer_rows(prediction)
    said = f"The model answers {shown_token(prediction.answer_after)}"
    if prediction.answer_after != prediction.answer_before:
        said += f" (it answered {shown_token(prediction.answer_before)} before the intervention)"
    if prediction.expected is not None:
        said += f"; the right answer is {shown_token(prediction.expected)}"
    description = (
        f"{said}. Each answer's probability before the intervention and with it (now), the "
        "likeliest first; the last row is every other answer together."
        if ALL_OTHERS in rows.tokens
        else f"{said}. Each answer's probability before the intervention and with it (now)."
    )
    body = tuple(
        (answer_name(t) + (" (right)" if ok else ""), percent(b), percent(a))
        for t, b, a, ok in zip(rows.tokens, rows.before, rows.after, rows.correct, strict=True)
    )
    columns = ("answer", "before the intervention", "with it (now)")
    return SceneTable("answer", "The model's answer", description, columns, body)


# ---------------------------------------------------------------------------- estimate, receipt


def _signed(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "not checked"
    text = number(x, digits)
    return text if text.startswith("-") else f"+{text}"


def estimate_table(amap) -> SceneTable:
    """The estimate grid: each head's estimated change of log P(answer) if removed, the
    largest first, with the real change where the head was checked by removing it."""
    ranked = amap.ranked()
    listed = ranked[:MAX_ROWS]
    answer = shown_token(amap.answer)
    checked = len(amap.verified())
    description = (
        f"One backward pass estimates, for every head, how log P({answer}) would change if the "
        f"head were removed (negative: the head helps the answer). P({answer}) is "
        f"{percent(amap.prob)}. {checked} of {len(ranked)} heads were checked by really "
        f"removing them.{_left_out(len(listed), len(ranked), 'heads', 'largest estimates')}"
    )
    body = tuple(
        (head_name(r.layer, r.head), _signed(r.estimate, 4), _signed(r.exact)) for r in listed
    )
    columns = ("head", f"estimated change of log P({answer})", "real change (removed)")
    return SceneTable("estimate", "Each head's estimated effect", description, columns, body)


def receipt_table(amap) -> SceneTable:
    """The receipt: every checked head's estimate against its real change, the furthest from
    agreeing first, with the names of its warnings (as the dots' hover gives them)."""
    checked = sorted(amap.verified(), key=lambda r: -abs(r.exact - r.estimate))
    description = (
        "The heads checked by really removing them: the estimate beside the real change of "
        "log P. Where the two agree the dot sits on the dashed diagonal; the furthest from it "
        "come first."
    )
    body = tuple(
        (
            head_name(r.layer, r.head),
            _signed(r.estimate, 4),
            _signed(r.exact),
            _signed(r.exact - r.estimate),
            short(r.note) or "none",
        )
        for r in checked
    )
    columns = ("head", "estimated", "real", "real minus estimated", "warning")
    return SceneTable("receipt", "Estimate vs real removal", description, columns, body)


# ---------------------------------------------------------------------------- the class's votes


def votes_table(step: int, rows: dict, *, revealed: bool) -> SceneTable:
    """The class's predictions (the vote chart's columns): students per choice."""
    total = sum(int(c) for c in rows["count"])
    right = [c for c, ok in zip(rows["choice"], rows["correct"], strict=True) if ok]
    said = f" The right answer is {right[0]}." if revealed and right else ""
    description = (
        f"How many students chose each answer to step {step}'s prediction, {total} in all.{said}"
    )
    body = tuple(
        (str(choice) + (" (right)" if ok else ""), str(int(count)))
        for choice, count, ok in zip(rows["choice"], rows["count"], rows["correct"], strict=True)
    )
    return SceneTable(
        "class_votes", f"The class's predictions, step {step}", description,
        ("choice", "students"), body,
    )  # fmt: skip
