"""Interventions: small, pure edits of a query/key/value configuration.

Each function returns new arrays and never modifies its inputs, so the lab can compare a
configuration before and after one change. Indices are plain non-negative positions; anything
out of range, non-finite or of the wrong shape raises ValueError naming the argument.
"""

from __future__ import annotations

import numpy as np

# Inserting more candidates than this is a long-context lesson, not a lab interaction.
MAX_DISTRACTORS = 4096
# Distractors spread around the requested cosine (half-width, in cosine units) and length
# (relative half-width), so a crowd shows as a cloud instead of two stacked dots.
DISTRACTOR_SPREAD = 0.15
DISTRACTOR_NORM_SPREAD = 0.2


def _vectors(name: str, x, *, ndim: int | None = None) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}")
    if arr.ndim == 0:
        raise ValueError(f"{name} must be a vector or an array of vectors, got a scalar")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got non-finite entries in shape {arr.shape}")
    return arr


def _index(name: str, i, n: int, what: str = "keys") -> int:
    if isinstance(i, bool) or not isinstance(i, int | np.integer):
        raise ValueError(f"{name} must be an integer index, got {i!r}")
    if not 0 <= i < n:
        raise ValueError(f"{name}={i} is out of range for {n} {what} (valid: 0..{n - 1})")
    return int(i)


def _finite_number(name: str, x) -> float:
    try:
        value = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {x!r}") from None
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def _pairs(keys, values) -> tuple[np.ndarray, np.ndarray]:
    k = _vectors("keys", keys, ndim=2)
    v = _vectors("values", values, ndim=2)
    if k.shape[0] != v.shape[0]:
        raise ValueError(
            f"keys and values must have one row per key, got keys {k.shape} and values {v.shape}"
        )
    return k, v


def rotate(vec, angle_rad: float, plane: tuple[int, int] = (0, 1)) -> np.ndarray:
    """Rotate vectors (along the last axis) by angle_rad within the plane of two coordinates.

    Positive angles turn coordinate plane[0] towards plane[1]; other coordinates are untouched.
    """
    x = _vectors("vec", vec)
    angle = _finite_number("angle_rad", angle_rad)
    d = x.shape[-1]
    if len(plane) != 2:
        raise ValueError(f"plane must name two coordinates, got {plane!r}")
    a, b = (_index(f"plane[{n}]", p, d, "coordinates") for n, p in enumerate(plane))
    if a == b:
        raise ValueError(f"plane must name two different coordinates, got {plane!r}")
    c, s = np.cos(angle), np.sin(angle)
    out = x.copy()
    out[..., a] = c * x[..., a] - s * x[..., b]
    out[..., b] = s * x[..., a] + c * x[..., b]
    return out


def swap_values(values, i: int, j: int) -> np.ndarray:
    """Exchange the values of keys i and j; keys, and therefore the route, stay put."""
    v = _vectors("values", values, ndim=2)
    i = _index("i", i, v.shape[0])
    j = _index("j", j, v.shape[0])
    out = v.copy()
    out[[i, j]] = v[[j, i]]
    return out


def replace_key(keys, i: int, new_key) -> np.ndarray:
    """Return keys with row i replaced by new_key."""
    k = _vectors("keys", keys, ndim=2)
    i = _index("i", i, k.shape[0])
    new = _vectors("new_key", new_key, ndim=1)
    if new.shape[0] != k.shape[1]:
        raise ValueError(f"new_key must have {k.shape[1]} components, got shape {new.shape}")
    out = k.copy()
    out[i] = new
    return out


def set_key_norm(keys, i: int, norm: float) -> np.ndarray:
    """Rescale key i to the given length, keeping its direction."""
    k = _vectors("keys", keys, ndim=2)
    i = _index("i", i, k.shape[0])
    target = _finite_number("norm", norm)
    if target < 0:
        raise ValueError(f"norm must be >= 0, got {target}")
    current = float(np.linalg.norm(k[i]))
    if current == 0.0 and target > 0:
        raise ValueError(f"key {i} is the zero vector: it has no direction to stretch")
    out = k.copy()
    out[i] = k[i] * (target / current) if current > 0 else 0.0
    return out


def normalise(x) -> np.ndarray:
    """Unit length along the last axis; a zero vector has no direction and is an error."""
    arr = _vectors("x", x)
    norms = np.linalg.norm(arr, axis=-1, keepdims=True)
    if np.any(norms == 0):
        zero_rows = np.argwhere(norms[..., 0] == 0).tolist() if arr.ndim > 1 else []
        where = f" at rows {zero_rows}" if zero_rows else ""
        raise ValueError(f"cannot normalise a zero vector{where} (shape {arr.shape})")
    return arr / norms


def permute_pairs(keys, values, perm) -> tuple[np.ndarray, np.ndarray]:
    """Reorder keys and values together: row r of the result is row perm[r] of the input."""
    k, v = _pairs(keys, values)
    p = np.asarray(perm)
    n = k.shape[0]
    if p.shape != (n,) or not np.issubdtype(p.dtype, np.integer):
        raise ValueError(f"perm must be {n} integers, got {p.tolist()!r}")
    if not np.array_equal(np.sort(p), np.arange(n)):
        raise ValueError(f"perm must be a permutation of 0..{n - 1}, got {p.tolist()!r}")
    return k[p], v[p]


def shift_bias(n_keys: int, c: float) -> np.ndarray:
    """A float mask that adds c to every logit (before temperature); softmax ignores it."""
    n = _positive_count("n_keys", n_keys)
    return np.full(n, _finite_number("c", c))


def _positive_count(name: str, n) -> int:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {n!r}")
    return int(n)


def _directions_around_cosine(
    query: np.ndarray, count: int, similarity: float, rng, spread_rng
) -> np.ndarray:
    """Unit vectors whose cosines with query spread evenly around `similarity`.

    Cosine j is similarity + w * u_j with u_j uniform in [-1, 1] and a half-width
    w = min(DISTRACTOR_SPREAD, 1 - |similarity|), so every cosine stays in [-1, 1] and their
    expected mean is exactly `similarity` (at +-1 there is no room: every distractor lies on
    the query's line). In two dimensions the remaining sine component is a seeded side (+-) of
    the query's perpendicular, so turning the query turns the whole cloud with it; in more
    dimensions it is a random direction orthogonal to the query.
    """
    d = query.shape[0]
    q_hat = query / np.linalg.norm(query)
    if d == 1:
        if abs(similarity) != 1.0:
            raise ValueError("in one dimension a distractor's similarity must be -1 or 1")
        return np.full((count, 1), similarity * q_hat[0])
    width = min(DISTRACTOR_SPREAD, 1.0 - abs(similarity))
    cos = np.clip(similarity + width * spread_rng.uniform(-1.0, 1.0, count), -1.0, 1.0)
    raw = rng.standard_normal((count, d))
    if d == 2:
        side = np.where(raw[:, 0] >= 0, 1.0, -1.0)
        ortho = side[:, None] * np.array([-q_hat[1], q_hat[0]])
    else:
        # A random direction, made orthogonal to the query, carries the remaining sin component.
        raw -= np.outer(raw @ q_hat, q_hat)
        lengths = np.linalg.norm(raw, axis=1, keepdims=True)
        # Degenerate samples fall back to a fixed orthogonal axis (deterministic).
        fallback = np.zeros(d)
        fallback[int(np.argmin(np.abs(q_hat)))] = 1.0
        fallback -= (fallback @ q_hat) * q_hat
        fallback /= np.linalg.norm(fallback)
        ortho = np.where(lengths > 1e-12, raw / np.maximum(lengths, 1e-300), fallback)
    sin = np.sqrt(np.maximum(0.0, 1.0 - cos**2))
    return cos[:, None] * q_hat + sin[:, None] * ortho


def insert_distractors(
    query, keys, values, *, count: int, norm: float, similarity: float, seed: int
) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Append `count` distractor keys around length `norm` and cosine `similarity` to the query.

    Each distractor's cosine is spread evenly within DISTRACTOR_SPREAD of `similarity` (less
    near +-1, see `_directions_around_cosine`) and its length within DISTRACTOR_NORM_SPREAD
    (relative) of `norm`; both spreads are centred, so their expected means are exactly the
    requested ones. Distractor values point in random directions with the median length of the existing
    values, so they carry content that is plausible in size but unrelated. The same seed gives
    the same first m distractors whatever the count, so raising the count only adds candidates.
    Returns (keys, values, labels of the added rows: "d1", "d2", ...).
    """
    q = _vectors("query", query, ndim=1)
    k, v = _pairs(keys, values)
    if k.shape[1] != q.shape[0]:
        raise ValueError(f"query has {q.shape[0]} components but keys have {k.shape[1]}")
    if isinstance(count, bool) or not isinstance(count, int | np.integer):
        raise ValueError(f"count must be an integer, got {count!r}")
    if not 0 <= count <= MAX_DISTRACTORS:
        raise ValueError(f"count must be between 0 and {MAX_DISTRACTORS}, got {count}")
    length = _finite_number("norm", norm)
    if length <= 0:
        raise ValueError(f"norm must be > 0, got {length}")
    cos = _finite_number("similarity", similarity)
    if not -1.0 <= cos <= 1.0:
        raise ValueError(f"similarity is a cosine and must lie in [-1, 1], got {cos}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if count == 0:
        return k.copy(), v.copy(), ()
    if not np.any(q):
        raise ValueError("query is the zero vector: similarity to it is undefined")

    # Separate streams for keys and values keep each prefix-stable as the count grows.
    key_rng = np.random.default_rng([int(seed), 1])
    value_rng = np.random.default_rng([int(seed), 2])
    spread_rng = np.random.default_rng([int(seed), 3])
    norm_rng = np.random.default_rng([int(seed), 4])
    directions = _directions_around_cosine(q, int(count), cos, key_rng, spread_rng)
    lengths = length * (1.0 + DISTRACTOR_NORM_SPREAD * norm_rng.uniform(-1.0, 1.0, int(count)))
    new_keys = lengths[:, None] * directions
    value_length = float(np.median(np.linalg.norm(v, axis=1))) if v.shape[0] else 1.0
    raw = value_rng.standard_normal((int(count), v.shape[1]))
    raw_len = np.linalg.norm(raw, axis=1, keepdims=True)
    new_values = value_length * raw / np.where(raw_len > 0, raw_len, 1.0)
    labels = tuple(f"d{r + 1}" for r in range(int(count)))
    return np.vstack([k, new_keys]), np.vstack([v, new_values]), labels


def null_route(
    keys, values, threshold: float, *, legal=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Append a "none of these" candidate: a zero key, a zero value and a fixed logit.

    The returned float mask (bias) is 0 for every real key and `threshold` for the null
    candidate (last index), in logit units before temperature: with a zero key its score is 0,
    so its logit is threshold / temperature whatever the scale. Its weight is the share of the
    route refused because no real key beat the threshold; the refused share contributes zero.
    With `legal` (bool per real key) the bias is -inf for illegal keys, so one float mask carries
    both the legality and the null candidate.
    """
    k, v = _pairs(keys, values)
    t = _finite_number("threshold", threshold)
    bias = np.zeros(k.shape[0] + 1)
    bias[-1] = t
    if legal is not None:
        ok = np.asarray(legal)
        if ok.shape != (k.shape[0],) or ok.dtype != bool:
            raise ValueError(
                f"legal must be {k.shape[0]} booleans (one per key), got {ok.dtype} {ok.shape}"
            )
        bias[:-1][~ok] = -np.inf
    keys_aug = np.vstack([k, np.zeros((1, k.shape[1]))])
    values_aug = np.vstack([v, np.zeros((1, v.shape[1]))])
    return keys_aug, values_aug, bias
