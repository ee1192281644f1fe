""" "Why is this route sharp?": four candidate causes, each put to its own experiment.

A sharp route (one key with most of the weight) can come from alignment, key norm, uncorrected
dimension or a low temperature. Each cause predicts a different response to one perturbation,
so `diagnose` runs the perturbations and reports what actually changed:

- alignment: rotate only the query to unrelated directions. If the route follows the query,
  the winner was chosen by direction; if one key keeps winning, look at norms, biases, masks.
- key_norm: give the query and every key unit length (hidden dimensions untouched). If the max
  weight falls, length was doing part of the selecting.
- dimension_scale: drop the hidden dimensions (same visible geometry, same scale setting).
  Implicated when the logits are not scaled by 1/sqrt(d_k) and the max weight falls: the
  uncorrected spread of the extra dimensions was sharpening the route.
- temperature: multiply the temperature by 4. A low temperature is implicated when the route
  broadens with the ranking intact and the temperature was below 1.

Keys are named by their labels (`labels=`; "key 1", "key 2"... by position without them). A
perturbation that would change nothing (no hidden dimensions to drop, vectors already of unit
length) is still reported, with `tested=False`, so a display can leave its row out. `ranked`
orders the tested causes by measured effect, the ones that hand the route to another key first:
that is the cause carrying the decision.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import interventions
from .audit import ranking_violation
from .core import attention
from .dimension import lift
from .wording import N_, Amount, Fixed, Phrase, Significant, listed

CAUSES = ("alignment", "key_norm", "dimension_scale", "temperature")
# A perturbation "matters" when it moves the max weight by at least this much.
MEANINGFUL_DROP = 0.10
# Rotations used to probe alignment: seven directions, 45 degrees apart, none the original.
PROBE_ANGLES_DEG = (45, 90, 135, 180, 225, 270, 315)
TEMPERATURE_FACTOR = 4.0


@dataclass(frozen=True)
class Finding:
    cause: str
    perturbation: str
    before: float  # max weight (alignment: the winner's weight) before the perturbation
    after: float  # the same quantity after it (alignment: mean over the rotations)
    implicated: bool
    note: str
    tested: bool = True  # False: the perturbation would change nothing on this configuration
    decides: bool = False  # undoing this cause hands the top of the route to another key

    @property
    def effect(self) -> float:
        """How much the measured weight fell under the perturbation (negative: it rose)."""
        return self.before - self.after


@dataclass(frozen=True)
class SharpnessReport:
    max_weight: float
    winner: int
    findings: list[Finding] = field(default_factory=list)
    entropy: float = 0.0  # nats

    labels: tuple[str, ...] = ()

    @property
    def implicated(self) -> list[str]:
        return [f.cause for f in self.findings if f.implicated]

    @property
    def winner_label(self) -> str:
        return _name(self.labels, self.winner)

    @property
    def ranked(self) -> list[Finding]:
        """Tested findings, strongest first: implicated before not, then the causes whose undoing
        changes the winner, then by the measured fall of the weight."""
        tested = [f for f in self.findings if f.tested]
        return sorted(tested, key=lambda f: (not f.implicated, not f.decides, -f.effect))

    def finding(self, cause: str) -> Finding:
        for f in self.findings:
            if f.cause == cause:
                return f
        raise ValueError(f"unknown cause {cause!r}; causes are {CAUSES}")

    @property
    def summary(self) -> str:
        causes = ", ".join(f.cause for f in self.ranked if f.implicated)
        causes = causes or "none of the four causes"
        return (
            f"{self.winner_label} takes {self.max_weight:.3f} of the route; implicated, "
            f"strongest first: {causes}."
        )


def _name(labels, i: int) -> str:
    return str(labels[i]) if 0 <= i < len(labels) else _key(i)


def _key(i: int) -> Phrase:
    # TRANSLATORS: a key without a label of its own, numbered from 1.
    return Phrase(N_("key {number}"), {"number": i + 1})


def _unit_rows(x: np.ndarray) -> np.ndarray:
    """Unit length per row; a zero row stays zero (it has no direction and no length)."""
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.where(norms > 0, x / np.where(norms > 0, norms, 1.0), 0.0)


class _Setting:
    def __init__(self, query, keys, values, mask, temperature, scale, d_k, seed, labels=None):
        self.q = np.array(query, dtype=float)
        self.k = np.array(keys, dtype=float)
        self.v = np.array(values, dtype=float)
        if self.q.ndim != 1 or self.q.shape[0] < 2 or self.k.ndim != 2:
            raise ValueError(
                "diagnose expects one query (D,) with D >= 2 and keys (n, D); "
                f"got query {self.q.shape} and keys {self.k.shape}"
            )
        self.mask, self.temperature, self.scale = mask, temperature, scale
        self.d_k, self.seed = d_k, seed
        n = self.k.shape[0]
        self.labels = tuple(str(x) for x in labels) if labels is not None else ()
        if labels is not None and len(self.labels) != n:
            raise ValueError(f"diagnose: {len(self.labels)} labels for {n} keys")
        self.visible = self.q.shape[0]
        self._lifted = lift(self.q, self.k, d_k, seed=seed)  # validates d_k and seed once
        self._hidden = (self._lifted[0][self.visible :], self._lifted[1][:, self.visible :])

    def lift(self, q, k) -> tuple[np.ndarray, np.ndarray]:
        """Visible q and k with this setting's hidden components (drawn once, reused)."""
        return np.concatenate([q, self._hidden[0]]), np.hstack([k, self._hidden[1]])

    def weights(self, q=None, k=None, *, d_k=None, temperature=None) -> np.ndarray:
        """Route weights for (visible) q and k lifted to d_k with this setting's hidden part."""
        q = self.q if q is None else q
        k = self.k if k is None else k
        d_k = self.d_k if d_k is None else d_k  # either the setting's d_k or the visible size
        if d_k != self.visible:
            q, k = self.lift(q, k)
        res = attention(
            q,
            k,
            self.v,
            mask=self.mask,
            scale=self.scale,
            temperature=self.temperature if temperature is None else temperature,
        )
        return np.asarray(res.weights, dtype=float)


def _alignment(s: _Setting, base: np.ndarray, winner: int) -> Finding:
    name = _name(s.labels, winner)
    q_hi, k_hi = s.lift(s.q, s.k)
    probes = np.stack([interventions.rotate(q_hi, np.deg2rad(a)) for a in PROBE_ANGLES_DEG])
    w = np.asarray(
        attention(probes, k_hi, s.v, mask=s.mask, scale=s.scale, temperature=s.temperature).weights,
        dtype=float,
    )
    kept = int(np.sum(np.argmax(w, axis=-1) == winner))
    total = len(PROBE_ANGLES_DEG)
    mean_weight = float(w[:, winner].mean())
    implicated = kept < total / 2
    counted = {"name": name, "kept": kept, "total": total, "mean": Fixed(mean_weight, 3)}
    if implicated:
        # TRANSLATORS: "Why is it sharp?": the rotation test's finding; {name} a key's label.
        note = N_(
            "Rotating the query moves the route: {name} stays on top in only {kept} of {total} "
            "directions (its mean weight across them {mean}). Direction picks the winner."
        )
    else:
        note = N_(
            "{name} stays on top in {kept} of {total} unrelated query directions (mean weight "
            "{mean}): direction is not what selects it. Inspect key norms, biases and the mask."
        )
    angles = ", ".join(str(a) for a in PROBE_ANGLES_DEG)
    return Finding(
        "alignment",
        # TRANSLATORS: "Why is it sharp?": a test, in the table's "test" column.
        Phrase(N_("rotate only the query by {angles} degrees"), {"angles": angles}),
        float(base[winner]),
        mean_weight,
        implicated,
        Phrase(note, counted),
    )


def _key_norm(s: _Setting, base: np.ndarray, winner: int) -> Finding:
    q_unit = _unit_rows(s.q[None, :])[0]
    k_unit = _unit_rows(s.k)
    w = s.weights(q_unit, k_unit)
    before, after = float(base.max()), float(w.max())
    new_winner = int(np.argmax(w))
    drop = before - after
    implicated = drop >= MEANINGFUL_DROP
    norms = np.linalg.norm(s.k, axis=1)
    decides = new_winner != winner
    moved = (
        Phrase(
            N_("; the top key changes from {before} to {after}"),
            {"before": _name(s.labels, winner), "after": _name(s.labels, new_winner)},
        )
        if decides
        else ""
    )
    unit = np.allclose(norms[norms > 0], 1.0, rtol=0, atol=1e-12) and math.isclose(
        float(np.linalg.norm(s.q)), 1.0, abs_tol=1e-12
    )
    if implicated and decides:
        verdict = N_("length decides which key wins")
    elif implicated:
        verdict = N_("length was doing part of the selecting")
    elif decides:  # another key wins, about as sharply
        verdict = N_("length picks which key wins, not how sharp the route is")
    else:
        verdict = N_("length is not what makes it sharp")
    note = Phrase(
        N_(
            "At unit length the max weight goes {before} -> {after}{moved}: {verdict} (key "
            "norms {low}..{high}, query norm {query})."
        ),
        {
            "before": Fixed(before, 3),
            "after": Fixed(after, 3),
            "moved": moved,
            "verdict": Phrase(verdict),
            "low": Significant(norms.min(), 2),
            "high": Significant(norms.max(), 2),
            "query": Significant(np.linalg.norm(s.q), 2),
        },
    )
    if unit:
        note = Phrase(
            N_("The query and every key already have unit length: normalising changes nothing.")
        )
    return Finding(
        "key_norm",
        Phrase(N_("normalise q and k to unit length")),
        before,
        after,
        implicated,
        note,
        tested=not unit,
        decides=decides,
    )


def _dimension(s: _Setting, base: np.ndarray) -> Finding:
    before = float(base.max())
    sizes = {"d_k": s.d_k, "visible": s.visible}
    perturbation = Phrase(N_("drop the hidden dimensions (d_k {d_k} -> {visible})"), sizes)
    if s.d_k == s.visible:
        note = Phrase(
            N_(
                "d_k is {d_k}, the visible geometry's own size: there are no hidden dimensions, "
                "so dimension cannot explain the sharpness."
            ),
            sizes,
        )
        return Finding("dimension_scale", perturbation, before, before, False, note, tested=False)
    w_flat = s.weights(d_k=s.visible)
    after = float(w_flat.max())
    decides = int(np.argmax(w_flat)) != int(np.argmax(base))
    corrected = _scale_factor(s.scale, s.d_k) <= 1.01 / np.sqrt(s.d_k)
    sharper = before - after >= MEANINGFUL_DROP
    implicated = sharper and not corrected
    setting = N_("with the same scale setting") if corrected else N_("unscaled")
    measured = Phrase(
        N_("Same geometry at d_k={visible} ({setting}): max weight {before} -> {after}."),
        {
            "visible": s.visible,
            "setting": Phrase(setting),
            "before": Fixed(before, 3),
            "after": Fixed(after, 3),
        },
    )
    if corrected:
        cancelled = (
            N_(
                "Scaling by 1/sqrt(d_k) already cancels the dimension's growth; the hidden "
                "components still add unit-variance noise to each logit, so this route is "
                "partly chance."
            )
            if sharper
            else N_(
                "Scaling by 1/sqrt(d_k) already cancels the dimension's growth; the extra "
                "dimensions are not what makes it sharp."
            )
        )
        note = listed([measured, Phrase(cancelled)])
        return Finding("dimension_scale", perturbation, before, after, False, note, decides=decides)
    note = _unscaled_note(s, base, w_flat, measured, implicated, decides)
    return Finding(
        "dimension_scale", perturbation, before, after, implicated, note, decides=decides
    )


def _unscaled_note(s: _Setting, base, w_flat, measured: Phrase, implicated: bool, decides: bool):
    """What dropping the hidden dimensions showed on unscaled logits, and what 1/sqrt(d_k)
    would have made of them."""
    q_hi, k_hi = s.lift(s.q, s.k)
    fixed = attention(q_hi, k_hi, s.v, mask=s.mask, scale=True, temperature=s.temperature)
    sentences = [
        measured,
        Phrase(
            N_("With 1/sqrt(d_k) scaling at d_k={d_k} it would be {weight}."),
            {"d_k": s.d_k, "weight": Fixed(float(fixed.weights.max()), 3)},
        ),
        Phrase(
            N_(
                "Uncorrected dimension is sharpening the route: its logits' spread grows like "
                "sqrt(d_k)."
            )
            if implicated
            else N_("The extra dimensions are not what makes it sharp.")
        ),
    ]
    if decides:
        winner, flat_winner = int(np.argmax(base)), int(np.argmax(w_flat))
        sentences.append(
            Phrase(
                N_(
                    "Without the hidden components the top key is {flat}, not {winner}: they "
                    "decide the winner."
                ),
                {"flat": _name(s.labels, flat_winner), "winner": _name(s.labels, winner)},
            )
        )
    return listed(sentences)


def _scale_factor(scale, d_k: int) -> float:
    if scale is True or scale is None:
        return 1.0 / np.sqrt(d_k)
    if scale is False:
        return 1.0
    return float(scale)


def _temperature(s: _Setting, base: np.ndarray) -> Finding:
    hotter = s.temperature * TEMPERATURE_FACTOR
    w = s.weights(temperature=hotter)
    before, after = float(base.max()), float(w.max())
    reversal = max(ranking_violation(base, w), ranking_violation(w, base))
    ranking_kept = reversal <= 1e-9
    broadened = before - after >= MEANINGFUL_DROP
    implicated = broadened and ranking_kept and s.temperature < 1.0
    ranking = (
        Phrase(N_("same ranking"))
        if ranking_kept
        else Phrase(N_("ranking changed (by {reversal})"), {"reversal": Significant(reversal, 2)})
    )
    temperature = Significant(s.temperature, 3)
    measured = Phrase(
        N_("Temperature {before_t} -> {after_t}: max weight {before} -> {after}, {ranking}."),
        {
            "before_t": temperature,
            "after_t": Significant(hotter, 3),
            "before": Fixed(before, 3),
            "after": Fixed(after, 3),
            "ranking": ranking,
        },
    )
    if implicated:
        verdict = Phrase(N_("A temperature below 1 is sharpening the competition."))
    elif broadened:
        verdict = Phrase(
            N_(
                "The route is temperature-sensitive, but a temperature of {temperature} does "
                "not sharpen it beyond the logits themselves."
            ),
            {"temperature": temperature},
        )
    else:
        verdict = Phrase(N_("The route barely responds: temperature is not the control here."))
    return Finding(
        "temperature",
        Phrase(N_("multiply temperature by {factor}"), {"factor": Amount(TEMPERATURE_FACTOR)}),
        before,
        after,
        implicated,
        listed([measured, verdict]),
    )


def diagnose(
    query,
    keys,
    values,
    *,
    mask=None,
    temperature: float = 1.0,
    scale: bool | float = True,
    d_k: int = 2,
    seed: int = 0,
    labels=None,
) -> SharpnessReport:
    """Test each of the four causes of a sharp route on this configuration.

    query (D,) and keys (n, D) are the visible geometry; with d_k > D they are lifted with
    `dimension.lift(..., seed=seed)`, as the lab does. `labels` name the keys in the notes.
    Findings come in the order of CAUSES; `report.ranked` orders them by effect.
    """
    s = _Setting(query, keys, values, mask, temperature, scale, d_k, seed, labels)
    base = s.weights()
    winner = int(np.argmax(base))
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = float(-np.sum(np.where(base > 0, base * np.log(base), 0.0)))
    findings = [
        _alignment(s, base, winner),
        _key_norm(s, base, winner),
        _dimension(s, base),
        _temperature(s, base),
    ]
    labels = s.labels or tuple(_key(i) for i in range(len(base)))
    return SharpnessReport(float(base[winner]), winner, findings, max(entropy, 0.0), labels)
