"""The snapshot: everything the lab's views draw for one valid configuration.

No web imports. Every source of a route builds the same frozen `LabSnapshot`: the hand-made
scenarios (`app.state.pipeline.snapshot_for`) and the trained models' heads
(`engine.heads.head_snapshot`). The views only ever read a snapshot, so a notebook can build one
and inspect exactly what the page would draw.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .core import softmax
from .wording import N_, Fixed, Phrase, Share

# Every temperature the lab accepts (sliders, links, imports, a trained head's own control).
TEMPERATURE_RANGE = (0.05, 20.0)
# The entropy curve's temperatures: log-spaced over the whole range.
SWEEP_TEMPERATURES = np.geomspace(*TEMPERATURE_RANGE, 61)
SWEEP_TEMPERATURES.setflags(write=False)
# The Jacobian covers at most this many candidates (the user's pairs come first).
JACOBIAN_MAX = 64


@dataclass(frozen=True, eq=False)
class TemperatureSweep:
    """Entropy of the current logits against temperature, with the current point marked."""

    temperatures: np.ndarray
    entropy: np.ndarray
    current_temperature: float
    current_entropy: float


@dataclass(frozen=True, eq=False)
class LabSnapshot:
    """Everything the views draw for one valid configuration. Arrays are read-only.

    Rows cover the user's pairs first (`n_pairs` of them), then any distractors. The null
    candidate, when on, is not a row: its weight is `null_weight`.
    """

    labels: tuple[str, ...]
    n_pairs: int
    query: np.ndarray  # (2,) visible geometry of the query
    keys: np.ndarray  # (n, 2)
    values: np.ndarray  # (n, 2)
    legal: np.ndarray  # (n,) bool: takes part in the contest
    scores: np.ndarray  # (n,) raw q.k in d_k dimensions
    scaled: np.ndarray  # (n,) after the 1/sqrt(d_k) factor (when on)
    logits: np.ndarray  # (n,) after temperature; -inf where masked
    weights: np.ndarray  # (n,)
    contributions: np.ndarray  # (n, 2) weight_i * value_i
    contribution_norms: np.ndarray  # (n,)
    output: np.ndarray  # (2,)
    entropy: float  # nats, over every candidate including the null route
    effective_keys: float  # exp(entropy)
    # (m, m) d weights_i / d scaled_j for the first m <= JACOBIAN_MAX rows: the derivative is
    # taken against the scaled score, before the temperature divides it (hence the 1/T in it).
    jacobian: np.ndarray
    null_weight: float | None  # the null candidate's weight when the null route is on
    null_logit: float | None  # its logit (threshold / temperature)
    temperature_sweep: TemperatureSweep
    dimension_sweep: object  # engine.dimension.DimensionSweep at the current temperature
    summary: str
    backend_used: str
    notice: str
    d_k: int
    temperature: float
    scale_factor: float
    # A trained head whose output is zeroed (ablated): the route above is what it computes, and
    # none of it reaches the model. The hand-made scenarios never ablate.
    ablated: bool = False
    # A trained head whose output was patched in from another run (activation patching): the
    # sentence it came from ("" when not patched). The route above is this run's; the output
    # drawn, and passed on, is the other sentence's.
    patched: str = ""
    # The summary as phrases the page translates (engine/wording.py); () when it has none.
    summary_parts: tuple = ()

    @property
    def winner(self) -> int:
        """Row index of the largest weight."""
        return int(np.argmax(self.weights))


def entropy_of(weights: np.ndarray) -> np.ndarray:
    """Shannon entropy in nats along the last axis; zero weights contribute nothing."""
    w = np.asarray(weights, dtype=float)
    safe = np.where(w > 0, w, 1.0)
    return -np.sum(np.where(w > 0, w * np.log(safe), 0.0), axis=-1)


def frozen(a, dtype=float) -> np.ndarray:
    """A read-only copy: a snapshot's arrays cannot be changed by the views that read them."""
    a = np.array(a, dtype=dtype)
    a.setflags(write=False)
    return a


def entropy_curve(base_logits: np.ndarray) -> np.ndarray:
    """Entropy of softmax(base_logits / T) at each of SWEEP_TEMPERATURES (base: at T = 1)."""
    weights = softmax(base_logits[None, :] / SWEEP_TEMPERATURES[:, None], axis=-1)
    return frozen(entropy_of(weights))


def leading_jacobian(weights: np.ndarray, temperature: float) -> np.ndarray:
    """d w_i / d scaled_j = (w_i delta_ij - w_i w_j) / T over the first JACOBIAN_MAX candidates:
    the block the view draws, without forming the whole (n, n) matrix."""
    w = np.asarray(weights, dtype=float)[:JACOBIAN_MAX]
    return (np.diag(w) - np.outer(w, w)) / temperature


def build_snapshot(
    *,
    summary_suffix: str = "",
    jacobian: np.ndarray | None = None,
    jacobian_weights: np.ndarray | None = None,
    **fields,
) -> LabSnapshot:
    """The one way a source makes a snapshot (hand-made scenarios and trained heads alike).

    ``scaled`` is derived (scores x scale_factor); the Jacobian is the leading block of
    ``jacobian_weights`` (default ``weights``: pass every candidate's weights when a null route
    adds one) unless given; every array is frozen; the summary sentence is `describe`'s, with
    ``summary_suffix`` in place of its full stop when given.
    """
    fields["scaled"] = np.asarray(fields["scores"], dtype=float) * float(fields["scale_factor"])
    if jacobian is None:
        weights = fields["weights"] if jacobian_weights is None else jacobian_weights
        jacobian = leading_jacobian(weights, float(fields["temperature"]))
    fields["jacobian"] = jacobian
    for name, value in fields.items():
        if isinstance(value, np.ndarray):
            fields[name] = frozen(value, bool if name == "legal" else float)
    parts = describe_parts(fields)
    sentence = "".join(str(part) for part in parts)
    fields["summary"] = sentence[:-1] + summary_suffix if summary_suffix else sentence
    # A suffix takes the closing full stop's place; one that is plain text (not a `Phrase`)
    # cannot be translated, so its headline is shown as its source wrote it.
    if summary_suffix:
        parts = (*parts[:-1], summary_suffix) if isinstance(summary_suffix, Phrase) else ()
    fields["summary_parts"] = parts
    return LabSnapshot(**fields)


def describe(snap: Mapping[str, object]) -> str:
    """One plain-language sentence about the route (also the screen-reader text)."""
    return "".join(str(part) for part in describe_parts(snap))


def describe_parts(snap: Mapping[str, object]) -> tuple[Phrase, ...]:
    """`describe`'s sentence as phrases the lab translates one by one (engine/wording.py)."""
    weights = snap["weights"]
    norms = snap["contribution_norms"]
    labels = snap["labels"]
    top = int(np.argmax(weights))
    total_norm = float(np.sum(norms))
    share = float(norms[top]) / total_norm if total_norm > 0 else 0.0
    w = float(weights[top])
    if share < w - 0.1:
        # TRANSLATORS: the headline over the plots: the key with the largest weight.
        lead = N_("{label} gets {weight} of the weight but only {share} of the contribution norm")
    elif abs(share - w) <= 0.1:
        lead = N_("{label} gets {weight} of the weight and {share} of the contribution norm")
    else:
        lead = N_("{label} gets {weight} of the weight but {share} of the contribution norm")
    # Entropy is never negative; a one-hot route rounds to -1e-17, which printed "-0.00".
    entropy = max(0.0, float(snap["entropy"]))
    parts = [
        Phrase(lead, {"label": labels[top], "weight": share_of(w), "share": share_of(share)}),
        # TRANSLATORS: the headline, after the top key; "nats": the unit of entropy (ln).
        Phrase(
            N_("; entropy {entropy} nats, about {keys} effective keys"),
            {"entropy": Fixed(entropy, 2), "keys": Fixed(float(snap["effective_keys"]), 1)},
        ),
    ]
    masked = int(np.sum(~np.asarray(snap["legal"], dtype=bool)))
    if masked:
        many = N_("; {count} keys masked") if masked > 1 else N_("; {count} key masked")
        parts.append(Phrase(many, {"count": masked}))
    if snap["null_weight"] is not None:
        share_null = share_of(float(snap["null_weight"]))
        parts.append(Phrase(N_("; the null route takes {share}"), {"share": share_null}))
    if snap.get("ablated"):
        parts.append(Phrase(N_("; ablated: this head's output is zeroed")))
    if snap.get("patched"):
        parts.append(Phrase(N_("; patched: this head's output is taken from another sentence")))
    parts.append(Phrase(N_(".")))
    return tuple(parts)


def share_percent(x: float) -> str:
    """A share in percent that never shows a real share as 0% or 100% (thousands of keys)."""
    return str(share_of(x))


def share_of(x: float) -> Share | Phrase:
    """`share_percent`'s share, as a value a translated sentence formats in its language."""
    p = max(0.0, 100 * x)  # never "-0%"
    if p <= 0 or p >= 100:
        return Share(p / 100, 0)
    if p < 0.1:
        return Phrase(N_("under {share}"), {"share": Share(0.001, 1)})
    if p > 99.9:
        return Phrase(N_("over {share}"), {"share": Share(0.999, 1)})
    return Share(x, 0) if 1 <= p < 99 else Share(x, 1)
