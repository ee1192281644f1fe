"""PyTorch's rule for comparing an optimised kernel with a reference (test_transformers.py).

A result is judged against a *golden* value computed in higher precision (float64; float32 for
half-precision inputs) and a *reference* computed at the test's own precision. The test passes if
its error is at most five times the reference's own error, with a floor of 1e-5:

    max|golden - test| <= max(1e-5, 5 * max|golden - reference|)

NaN must appear in exactly the same places in ``test`` and ``golden`` (a NaN slips through a naive
``<=``), and infinities must match in sign and place.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .backends import to_numpy

ABS_FLOOR = 1e-5
FACTOR = 5.0


class ToleranceCheck(NamedTuple):
    passed: bool
    error: float  # max|golden - test| over the finite entries (inf on a NaN/inf mismatch)
    bound: float  # max(floor, factor * max|golden - reference|)


def _float64(x: Any) -> np.ndarray:
    return np.asarray(to_numpy(x), dtype=np.float64)


def max_abs_error(a: Any, b: Any) -> float:
    """max|a - b| where NaN and +-inf must coincide; inf when they do not."""
    a, b = np.broadcast_arrays(_float64(a), _float64(b))
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return math.inf
    finite = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(a[~finite & ~np.isnan(a)], b[~finite & ~np.isnan(b)]):
        return math.inf  # an infinity on one side only, or of the other sign
    if not finite.any():
        return 0.0
    return float(np.max(np.abs(a[finite] - b[finite])))


def check_close(
    test: Any, golden: Any, reference: Any, *, floor: float = ABS_FLOOR, factor: float = FACTOR
) -> ToleranceCheck:
    """Compare ``test`` with ``golden`` using the error of ``reference`` as the yardstick."""
    if np.shape(to_numpy(test)) != np.shape(to_numpy(golden)):
        raise ValueError(
            f"test {np.shape(to_numpy(test))} and golden {np.shape(to_numpy(golden))} "
            "must have the same shape"
        )
    error = max_abs_error(golden, test)
    ref_error = max_abs_error(golden, reference)
    # A reference that is itself NaN/inf where golden is not is no yardstick: fall back to the
    # floor rather than letting an infinite bound pass anything.
    bound = max(floor, factor * ref_error) if math.isfinite(ref_error) else floor
    return ToleranceCheck(bool(error <= bound), error, bound)
