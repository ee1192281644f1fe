"""Synthetic dimension model: what raising d_k does to logits when nothing new is learned.

The lab draws its geometry in 2-D. `lift` embeds that geometry in d_k dimensions by appending
hidden components drawn i.i.d. from N(0, 1): every extra coordinate adds one unit-variance
product to each dot product, so the spread of unscaled logits grows like sqrt(d_k) and the
route sharpens for purely statistical reasons. `sweep` measures that growth by Monte Carlo.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .core import softmax

# Hidden components for keys come in blocks with their own random stream, so adding keys
# (distractors) never changes the hidden components of the keys already there.
_KEY_BLOCK = 64
MAX_D_K = 4096
MAX_TRIALS = 10_000
MAX_SWEEP_KEYS = 4096


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def _check_count(name: str, x, maximum: int) -> int:
    if isinstance(x, bool) or not isinstance(x, int | np.integer) or not 2 <= x <= maximum:
        raise ValueError(f"{name} must be an integer in [2, {maximum}], got {x!r}")
    return int(x)


def _check_d_k(d_k, minimum: int) -> int:
    if isinstance(d_k, bool) or not isinstance(d_k, int | np.integer):
        raise ValueError(f"d_k must be an integer, got {d_k!r}")
    if not minimum <= d_k <= MAX_D_K:
        raise ValueError(f"d_k must be between {minimum} and {MAX_D_K}, got {d_k}")
    return int(d_k)


def hidden_components(n_keys: int, n_hidden: int, *, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded N(0, 1) hidden coordinates: (query (n_hidden,), keys (n_keys, n_hidden)).

    Coordinates are drawn coordinate-major from fixed streams, so for one seed the first m
    hidden coordinates are the same whatever n_hidden, and key j's are the same whatever
    n_keys: sliding d_k or adding keys extends the draw instead of reshuffling it.
    """
    seed = _check_seed(seed)
    q_hidden = np.random.default_rng([seed, 0]).standard_normal(n_hidden)
    k_hidden = np.empty((n_keys, n_hidden))
    for start in range(0, n_keys, _KEY_BLOCK):
        rng = np.random.default_rng([seed, 1, start // _KEY_BLOCK])
        block = rng.standard_normal((n_hidden, _KEY_BLOCK))
        k_hidden[start : start + _KEY_BLOCK] = block.T[: n_keys - start]
    return q_hidden, k_hidden


def lift(query, keys, d_k: int, *, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Embed visible geometry in d_k dimensions: visible coordinates first, then hidden ones.

    query (D,) and keys (n, D) keep their D visible coordinates; the remaining d_k - D are
    seeded i.i.d. N(0, 1) (see `hidden_components`). d_k == D returns copies unchanged.
    """
    q = np.asarray(query, dtype=float)
    k = np.asarray(keys, dtype=float)
    if q.ndim != 1 or k.ndim != 2 or k.shape[1] != q.shape[0]:
        raise ValueError(
            f"lift needs query (D,) and keys (n, D) with the same D, got {q.shape} and {k.shape}"
        )
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(k))):
        raise ValueError("lift needs finite query and keys")
    visible = q.shape[0]
    d_k = _check_d_k(d_k, max(2, visible))
    q_hidden, k_hidden = hidden_components(k.shape[0], d_k - visible, seed=seed)
    return np.concatenate([q, q_hidden]), np.hstack([k, k_hidden])


@dataclass(frozen=True, eq=False)
class DimensionSweep:
    """Monte-Carlo logit spread and route entropy against d_k (arrays are read-only)."""

    d_k: np.ndarray
    logit_std_scaled: np.ndarray
    logit_std_unscaled: np.ndarray
    entropy_scaled: np.ndarray  # mean entropy of one query's route, nats
    entropy_unscaled: np.ndarray
    theory_std: np.ndarray  # sqrt(d_k): unscaled std for unit-variance components
    n_keys: int = 8
    trials: int = 200
    temperature: float = 1.0

    @property
    def max_entropy(self) -> float:
        """Entropy of a uniform route over n_keys: the ceiling for both curves."""
        return float(np.log(self.n_keys))


@functools.lru_cache(maxsize=256)
def _unscaled_logits(d_k: int, n_keys: int, trials: int, seed: int) -> np.ndarray:
    """trials x n_keys raw dot products q . k_j of i.i.d. N(0, 1) vectors, one stream per d_k.

    Sampled exactly without building the d_k-dimensional keys: for Gaussian keys, q . k_j given
    q is N(0, |q|^2), independently for each key, and |q|^2 (a sum of d_k unit-variance
    squares) is chi-square with d_k degrees of freedom. The cost is independent of d_k, so the
    UI can ask for d_k up to thousands live; tests check it against literal dot products.
    Cached because the UI asks again on every temperature change.
    """
    rng = np.random.default_rng([seed, 2, d_k])
    q_norm = np.sqrt(rng.chisquare(d_k, size=(trials, 1)))
    logits = q_norm * rng.standard_normal((trials, n_keys))
    logits.setflags(write=False)
    return logits


def _mean_entropy(logits: np.ndarray, temperature: float) -> float:
    w = softmax(logits, axis=-1, temperature=temperature)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(w > 0, w * np.log(w), 0.0)
    return float(np.mean(-terms.sum(axis=-1)))


def _frozen(x, dtype=float) -> np.ndarray:
    arr = np.asarray(x, dtype=dtype)
    arr.setflags(write=False)
    return arr


def sweep(
    d_ks, *, n_keys: int = 8, trials: int = 200, seed: int = 0, temperature: float = 1.0
) -> DimensionSweep:
    """Logit std and mean route entropy at each d_k, with and without 1/sqrt(d_k) scaling.

    Query and key components are i.i.d. N(0, 1), the regime the sqrt(d_k) argument assumes.
    Each d_k has its own random stream, so a value does not depend on which other d_ks are
    asked for.
    """
    dims = np.asarray(d_ks)
    if dims.ndim != 1 or dims.size == 0 or not np.issubdtype(dims.dtype, np.integer):
        raise ValueError(f"d_ks must be a non-empty list of integers, got {d_ks!r}")
    dims = [_check_d_k(int(d), 1) for d in dims]
    n_keys = _check_count("n_keys", n_keys, MAX_SWEEP_KEYS)
    trials = _check_count("trials", trials, MAX_TRIALS)
    seed = _check_seed(seed)
    try:
        temperature = float(temperature)
    except (TypeError, ValueError):
        raise ValueError(f"temperature must be a number, got {temperature!r}") from None
    if not (np.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be finite and > 0, got {temperature}")

    std_s, std_u, ent_s, ent_u = [], [], [], []
    for d in dims:
        raw = _unscaled_logits(d, n_keys, trials, seed)
        scaled = raw / np.sqrt(d)
        std_u.append(raw.std())
        std_s.append(scaled.std())
        ent_u.append(_mean_entropy(raw, temperature))
        ent_s.append(_mean_entropy(scaled, temperature))
    return DimensionSweep(
        d_k=_frozen(dims, dtype=int),
        logit_std_scaled=_frozen(std_s),
        logit_std_unscaled=_frozen(std_u),
        entropy_scaled=_frozen(ent_s),
        entropy_unscaled=_frozen(ent_u),
        theory_std=_frozen(np.sqrt(dims)),
        n_keys=n_keys,
        trials=trials,
        temperature=temperature,
    )
