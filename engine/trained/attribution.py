"""The attribution map: every head's causal-map effect, or patching-map share, estimated at once
from one backward pass, with the exact value measured for the heads that matter most.

Attribution patching (Nanda 2023; AtP*, Kramar et al. 2024) replaces one intervention per head
by a first-order Taylor term. With ``a`` a head's output before W_O, (n, d_head), and the
gradient from `backward`:

- ablation (no ``corrupted``): the causal map zeroes ``a`` at every position, so on the clean
  run ``estimate = sum over positions of (0 - a) . d log P(answer) / d a``, an estimate of its
  ``effect``;
- patching (``corrupted``): the patching map puts the clean run's output (as `PatchHead` holds
  it, in float32) into the corrupted run, so on the corrupted run
  ``estimate = sum of (a_clean - a) . d (log P(clean answer) - log P(corrupted answer)) / d a``
  divided by the clean-vs-corrupted difference, an estimate of its ``recovered`` share.

The estimate costs the run(s) and one backward; the heads with the largest |estimate| are then
measured exactly (``verify`` of them) by the causal and patching maps' own interventions, so a
verified head's ``exact`` is the map's value. `receipt` says how well estimate and exact agree.

A first-order term is wrong where the model is far from linear over the step it takes. Each
record's ``note`` names the reasons measured on its run (`notes`); the thresholds are explained
where they are defined.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

import numpy as np

from . import backward
from .causal import (
    PatchFrame,
    answer_id,
    check_positions,
    log_probs,
    patched_output,
    replaced_logits,
)
from .edits import PatchHead

# log P(answer) has slope 1 - p along the answer's own logit and tends to a slope of 1 once p is
# small: above p = 0.9 the local slope is under a tenth of the one a large drop would meet, so
# the gradient understates any ablation that really lowers the answer (it flags every head).
SATURATED_P = 0.9
# The norms (RMSNorm, LayerNorm) see directions, not lengths: the first-order term's error grows
# with the square of the step relative to the residual stream the layer read, so from 0.3 the
# neglected terms are about a third of the estimate. Measured on SmolLM2 (the Friday sentence,
# all 270 heads exact): the 12 heads over it are the heads of layers 0 and 1 (whose removal later
# layers repair), with a median error 13x the others'.
LARGE_STEP = 0.3
# The estimate sums one term per position; each carries its own error, so when they cancel the
# sum's relative error grows by sum |term| / |sum term|. From 3x, and when the terms' total is as
# large as a top-10 head's estimate (the head could matter), the estimate is mostly what is left
# of a cancellation: on the Friday sentence such heads got the sign wrong 14% of the time and
# erred by 66% of the estimate (the other heads of that size: never, and 23%).
CANCELLATION = 3.0
TOP = 10


@dataclass(frozen=True)
class HeadAttribution:
    """One head's row of an attribution map."""

    layer: int
    head: int
    estimate: float  # first-order estimate of the map's value (effect or recovered share)
    exact: float | None  # the map's value, measured for the verified heads (None: not verified)
    note: str | None  # why the estimate may be wrong here (None: no known reason)


@dataclass(frozen=True)
class Receipt:
    """Estimate against exact over the verified heads."""

    heads: int  # heads compared (the verified ones)
    spearman: float  # rank correlation (NaN with fewer than two heads or a constant column)
    top_k: int  # heads in both the estimate's and the exact value's k largest (by magnitude)
    k: int


@dataclass(frozen=True)
class AttributionMap:
    text: str
    corrupted: str | None  # None: an estimate of the causal map, else of the patching map
    answer: str  # the token whose log-probability is measured (with corrupted: the clean answer)
    other_answer: str | None  # with corrupted: the corrupted answer compared
    prob: float  # P(answer) in the run the estimate linearises (clean, or the corrupted one)
    records: tuple[HeadAttribution, ...]
    positions: tuple[int, ...] | None = None  # with corrupted: the positions patched (None: all)

    @property
    def measure(self) -> str:
        """The map value each estimate stands for: "effect" (causal) or "recovered" (patching)."""
        return "effect" if self.corrupted is None else "recovered"

    def verified(self) -> list[HeadAttribution]:
        return [r for r in self.records if r.exact is not None]

    def ranked(self) -> list[HeadAttribution]:
        """The records by |estimate|, largest first: the order a receipt checks them in."""
        return sorted(self.records, key=lambda r: -abs(r.estimate))

    def with_exact(self, exact: Mapping[tuple[int, int], float]) -> AttributionMap:
        """This map with the exact values of ``exact`` ((layer, head) -> value) filled in, so
        a receipt can grow a few heads at a time."""
        records = tuple(
            replace(r, exact=float(exact[(r.layer, r.head)])) if (r.layer, r.head) in exact else r
            for r in self.records
        )
        return replace(self, records=records)

    def receipt(self, k: int = 10) -> Receipt:
        """Spearman and top-k agreement over the verified heads (see `receipt`)."""
        pairs = self.verified()
        return receipt([r.estimate for r in pairs], [r.exact for r in pairs], k)

    def columns(self) -> dict[str, list]:
        names = ("layer", "head", "estimate", "exact", "note")
        return {name: [getattr(r, name) for r in self.records] for name in names}


# ----------------------------------------------------------------------------------- receipt


def ranks(values) -> np.ndarray:
    """Ranks from 0, ties given their average rank (Spearman's convention)."""
    _, inverse, counts = np.unique(
        np.asarray(values, float), return_inverse=True, return_counts=True
    )
    first = np.cumsum(counts) - counts
    return (first + (counts - 1) / 2.0)[inverse]


def spearman(a, b) -> float:
    """Spearman's rank correlation of two equal-length sequences (NaN if either is constant)."""
    ra, rb = ranks(a), ranks(b)
    if len(ra) < 2 or ra.std() == 0 or rb.std() == 0:
        return math.nan
    return float(np.corrcoef(ra, rb)[0, 1])


def top_by_magnitude(values, k: int) -> set[int]:
    """Indices of the k largest |values| (earlier index first on ties)."""
    order = np.argsort(-np.abs(np.asarray(values, float)), kind="stable")
    return set(order[:k].tolist())


def receipt(estimates, exacts, k: int = 10) -> Receipt:
    """How well ``estimates`` rank ``exacts`` (paired lists): Spearman's correlation, and how
    many of the k heads with the largest |exact| are among the k with the largest |estimate|
    (k is cut to the number of pairs; it says something only with more pairs than k)."""
    if len(estimates) != len(exacts):
        raise ValueError(f"{len(estimates)} estimates against {len(exacts)} exact values")
    k = min(k, len(estimates))
    both = top_by_magnitude(estimates, k) & top_by_magnitude(exacts, k)
    return Receipt(len(estimates), spearman(estimates, exacts), len(both), k)


# ----------------------------------------------------------------------------------- the map


@dataclass(frozen=True)
class _Linearisation:
    """What the estimate is taken around: the run, the metric's gradient seed, each head's step
    (a function of layer and head, (n, d_head)), the factor that turns the metric into the map's
    value, P(answer) in the run when the metric is log P (None: a logit difference), and the
    exact measurement of chosen heads."""

    run: object
    seed: np.ndarray
    step: Callable[[int, int], np.ndarray]
    factor: float
    saturation: float | None
    exact: Callable


def attribution_map(
    run,
    answer: str | None = None,
    corrupted=None,
    *,
    answers: tuple[str | None, str | None] | None = None,
    positions=None,
    verify: int = 10,
    progress: Callable[[float, str], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> AttributionMap:
    """Every head's first-order estimate of its causal-map ``effect`` on ``answer`` in ``run``
    (default: the run's answer), or with ``corrupted`` (a run of a same-length text) of its
    patching-map ``recovered`` share, with `patching_map`'s ``answers`` (the two tokens
    compared) and ``positions`` (where a head is patched); the ``verify`` heads with the largest
    |estimate| measured exactly. ``progress`` and ``cancel`` are the maps' (they matter for the
    verification)."""
    if isinstance(verify, bool) or not isinstance(verify, int) or verify < 0:
        raise ValueError(f"verify must be a number of heads >= 0, got {verify!r}")
    model = run.model
    if corrupted is None:
        if answers is not None or positions is not None:
            raise ValueError(
                "answers and positions choose what a patch compares and where it goes: "
                "give a corrupted text too"
            )
        index, answer = answer_id(run, answer)
        at, other = _ablation(run, index), None
    else:
        if answer is not None:
            raise ValueError(
                "with a corrupted text the map compares two answers: choose them with "
                "answers=(clean answer, corrupted answer)"
            )
        frame = PatchFrame.of(run, corrupted, answers)
        positions = check_positions(corrupted, positions)
        at = _patching(run, corrupted, frame, positions)
        answer, other = frame.good_text, frame.bad_text
    steps, terms = _head_terms(model, at)
    estimates = {lh: float(t.sum() * at.factor) for lh, t in terms.items()}
    chosen = sorted(estimates, key=lambda lh: -abs(estimates[lh]))[:verify]
    exact = at.exact(chosen, progress, cancel) if chosen else {}
    scale = sorted((abs(e) for e in estimates.values()), reverse=True)[:TOP][-1]
    records = tuple(
        HeadAttribution(
            *lh,
            estimate=estimates[lh],
            exact=exact.get(lh),
            note=notes(model, at.run, lh, steps[lh], terms[lh], at.saturation, scale),
        )
        for lh in estimates
    )
    probability = _probability(at.run, answer_id(at.run, answer)[0])
    bad_text = None if corrupted is None else corrupted.text
    return AttributionMap(run.text, bad_text, answer, other, probability, records, positions)


def _head_terms(model, at: _Linearisation) -> tuple[dict, dict]:
    """Every head's step and its first-order terms, one per position, from one backward."""
    gradients = model.head_gradients(at.run, at.seed)
    heads = [(layer, head) for layer in range(model.n_layers) for head in range(model.n_heads)]
    steps = {lh: at.step(*lh) for lh in heads}
    return steps, {lh: _terms(steps[lh], gradients[lh]) for lh in heads}


def _terms(step: np.ndarray, gradient: np.ndarray) -> np.ndarray:
    """One first-order term per position: step . gradient over d_head, in float64."""
    return np.sum(np.asarray(step, np.float64) * np.asarray(gradient, np.float64), axis=-1)


def _probability(run, index: int) -> float:
    return float(np.exp(log_probs(run.logits)[index]))


def _ablation(run, index: int) -> _Linearisation:
    """log P(answer) around the clean run; each head steps from its output to zero."""
    return _Linearisation(
        run=run,
        seed=backward.log_prob_seed(run.logits, index),
        step=lambda layer, head: -run.head(layer, head).all_outputs,
        factor=1.0,
        saturation=_probability(run, index),
        exact=_exact_ablation(run, index),
    )


def _patching(clean, corrupted, frame: PatchFrame, positions) -> _Linearisation:
    """The logit difference around the corrupted run; each head steps to the clean output at
    ``positions`` (None: every one), exactly as PatchHead patches it (in float32), over the
    clean-vs-corrupted span."""

    def step(layer: int, head: int) -> np.ndarray:
        value = patched_output(clean, corrupted, layer, head, positions)
        patched = PatchHead(layer, head, value).output
        return patched.astype(np.float64) - corrupted.head(layer, head).all_outputs

    span = frame.d_clean - frame.d_bad
    return _Linearisation(
        run=corrupted,
        seed=backward.difference_seed(len(corrupted.logits), frame.good, frame.bad),
        step=step,
        factor=1.0 / span if span else 0.0,
        saturation=None,  # a difference of two logits is linear in them: nothing saturates
        exact=_exact_patching(clean, corrupted, frame, positions),
    )


def _exact_ablation(run, index: int):
    """The causal map's effect for chosen heads, computed as `causal.causal_map` computes it."""
    base = log_probs(run.logits)[index]

    def measure(chosen, progress, cancel) -> dict[tuple[int, int], float]:
        requests = [(layer, head, None) for layer, head in chosen]
        lp = log_probs(replaced_logits(run, requests, progress, cancel))[:, index]
        return {lh: float(lp[row] - base) for row, lh in enumerate(chosen)}

    return measure


def exact_effects(
    run,
    heads: Iterable[tuple[int, int]],
    answer: str | None = None,
    *,
    progress: Callable[[float, str], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> dict[tuple[int, int], float]:
    """The causal map's exact ``effect`` of each of ``heads`` on ``answer`` (default: the run's
    answer): the value `attribution_map` verifies, for heads chosen by the caller (a page checks
    a few at a time)."""
    chosen = [(int(layer), int(head)) for layer, head in heads]
    if not chosen:
        return {}
    return _exact_ablation(run, answer_id(run, answer)[0])(chosen, progress, cancel)


def _exact_patching(clean, corrupted, frame: PatchFrame, positions):
    """The patching map's recovered share for chosen heads, as `causal.patching_map` has it."""

    def measure(chosen, progress, cancel) -> dict[tuple[int, int], float]:
        requests = [
            (lay, hd, patched_output(clean, corrupted, lay, hd, positions)) for lay, hd in chosen
        ]
        logits = replaced_logits(corrupted, requests, progress, cancel)
        return {
            lh: frame.share(frame.difference(row)[0])
            for lh, row in zip(chosen, logits, strict=True)
        }

    return measure


# ----------------------------------------------------------------------------------- notes


def notes(model, run, head: tuple[int, int], step, terms, p: float | None, scale: float):
    """Why one head's estimate may be wrong, from the run it linearises (None: no known reason):
    a saturated answer (``p``, P(answer) for log P; None for the patching metric, which is
    linear in the logits), a large step, and terms that cancel across positions although their
    total reaches ``scale`` (the map's TOP-th largest |estimate|)."""
    said = []
    if p is not None and p >= SATURATED_P:
        said.append(f"saturated: P(answer) = {p:.3f}, where log P is nearly flat")
    size = step_size(model, run, *head, step)
    if size >= LARGE_STEP:
        said.append(
            f"large step: {size:.2f} of the residual stream it changes; later layers may "
            "repair or amplify it"
        )
    total, net = float(np.abs(terms).sum()), abs(float(terms.sum()))
    if total >= scale and total >= CANCELLATION * net:
        said.append(f"cancelling: the positions' terms sum to {net / total:.2f} of their total")
    return "; ".join(said) or None


def step_size(model, run, layer: int, head: int, step: np.ndarray) -> float:
    """The largest, over positions, of |step written through W_O| / |residual stream entering
    the layer|: how far the head's change moves the stream, against what the layer read."""
    rows = slice(head * model.d_head, (head + 1) * model.d_head)
    written = np.asarray(step, np.float64) @ np.asarray(model.w[f"wo{layer}"][rows], np.float64)
    stream = np.linalg.norm(np.asarray(run.residual(layer), np.float64), axis=-1)
    return float(np.max(np.linalg.norm(written, axis=-1) / np.maximum(stream, 1e-30)))


__all__ = ["AttributionMap", "HeadAttribution", "Receipt", "attribution_map"]
__all__ += ["exact_effects", "receipt", "spearman"]
