"""Audit: the mechanism's invariants and metamorphic checks, run on one configuration.

Each check runs attention again on an edited configuration (permuted, shifted, masked, tiled,
on torch...) and compares what must agree. A passing audit says the implementation obeys the
routing contract on this input; it says nothing about whether a learned model routes sensibly.

The metamorphic checks run in float64. The kernel comparisons (tiled, torch) run in float32
and are judged by PyTorch's rule: the float32 reference kernel's own error against the float64
result sizes the tolerance. Checks that need a feature the configuration lacks (two different
values to swap, a masked key, torch) come back with ``applicable=False``,
``passed=True`` and ``error=0.0``, and their detail says why, so the UI can show them as
"not applicable" rather than as a failure or a silent pass.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .backends import backends, to_numpy
from .core import attention
from .tolerance import check_close
from .wording import N_, Amount, Phrase, Scientific, Significant, listed

# Float64 rounding across reordered sums stays far below this relative size; every broken
# mechanism the tests inject shows errors many orders of magnitude larger.
REL_TOL = 1e-10
# The constant added to every legal logit (logit units before temperature). Large enough to
# matter, small enough that float64 keeps the differences exact (see NOTES: fp32 breaks ~1e6).
LOGIT_SHIFT = 10.0
TEMPERATURE_FACTORS = (0.25, 4.0)


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    error: float  # the measured discrepancy; 0.0 when the check does not apply
    detail: str
    applicable: bool = True

    @property
    def status(self) -> str:
        """'pass', 'fail' or 'n/a', for display."""
        if not self.applicable:
            return "n/a"
        return "pass" if self.passed else "fail"


def _not_applicable(name: str, why: str) -> Check:
    # TRANSLATORS: the Audit's detail column: why a check does not apply here.
    detail = Phrase(N_("not applicable: {why}"), {"why": why})
    return Check(name, True, 0.0, detail, applicable=False)


def ranking_violation(base, other) -> float:
    """Largest amount by which `other` reverses a strict order of `base` (last axis).

    0 when every pair with base_i > base_j keeps other_i >= other_j. Ties in either array are
    allowed, because a very low temperature legitimately underflows small weights to 0.
    """
    base = np.asarray(base, dtype=float)
    other = np.asarray(other, dtype=float)
    b2 = base.reshape(-1, base.shape[-1])
    o2 = other.reshape(-1, other.shape[-1])
    worst = 0.0
    for b_row, o_row in zip(b2, o2, strict=True):
        order = np.lexsort((-o_row, -b_row))  # by base descending, ties by other descending
        seq = o_row[order]
        if seq.size < 2:
            continue
        later_max = np.maximum.accumulate(seq[::-1])[::-1][1:]
        worst = max(worst, float(np.max(later_max - seq[:-1])))
    return max(worst, 0.0)


def _max_abs(a, b) -> float:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return math.inf
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return math.inf
    return float(np.max(np.abs(a - b))) if a.size else 0.0


class _Config:
    """One audited configuration, with the edits the checks need."""

    def __init__(self, query, keys, values, mask, temperature, scale, fn):
        self.q = np.array(query, dtype=float)
        self.k = np.array(keys, dtype=float)
        self.v = np.array(values, dtype=float)
        if self.q.ndim not in (1, 2) or self.k.ndim != 2 or self.v.ndim != 2:
            raise ValueError(
                "run_audit expects query (Dk,) or (Lq, Dk), keys (n, Dk) and values (n, Dv); "
                f"got {self.q.shape}, {self.k.shape}, {self.v.shape}"
            )
        self.n = self.k.shape[0]
        self.shape = (self.n,) if self.q.ndim == 1 else (self.q.shape[0], self.n)
        self.temperature = temperature
        self.scale = scale
        self.fn = fn
        if mask is None:
            self.mask = None
            self.legal = np.ones(self.shape, dtype=bool)
        else:
            m = np.asarray(mask)
            try:
                m = np.broadcast_to(m, self.shape).copy()
            except ValueError:
                raise ValueError(
                    f"mask of shape {np.shape(mask)} does not broadcast to {self.shape}"
                ) from None
            if m.dtype == bool:
                self.mask, self.legal = m, m
            else:
                self.mask = m.astype(float)
                self.legal = self.mask != -np.inf

    def run(self, *, keys=None, values=None, mask="same", **kw):
        return self.fn(
            self.q,
            self.k if keys is None else keys,
            self.v if values is None else values,
            mask=self.mask if isinstance(mask, str) else mask,
            scale=self.scale,
            temperature=kw.pop("temperature", self.temperature),
            **kw,
        )

    def run_low(self, **kw):
        """The same call in float32: the precision whose own error sizes the kernel tolerances."""
        mask = self.mask
        if mask is not None and mask.dtype != bool:
            mask = mask.astype(np.float32)
        return self.fn(
            self.q.astype(np.float32),
            self.k.astype(np.float32),
            self.v.astype(np.float32),
            mask=mask,
            scale=self.scale,
            temperature=self.temperature,
            **kw,
        )

    def logit_bound(self) -> float:
        """An upper bound on |logit| from the inputs, to size rounding tolerances."""
        factor = 1.0 / math.sqrt(self.k.shape[1]) if self.scale is True else 1.0
        if self.scale not in (True, False, None):
            factor = float(self.scale)
        qn = np.linalg.norm(self.q, axis=-1).max()
        kn = np.linalg.norm(self.k, axis=-1).max() if self.n else 0.0
        bias = 0.0
        if self.mask is not None and self.mask.dtype != bool and np.any(self.legal):
            bias = float(np.abs(self.mask[self.legal]).max())
        return (factor * qn * kn + bias) / self.temperature

    def float_mask(self) -> np.ndarray:
        if self.mask is None:
            return np.zeros(self.shape)
        if self.mask.dtype == bool:
            return np.where(self.mask, 0.0, -np.inf)
        return self.mask.copy()

    def masked_key(self, j: int) -> np.ndarray:
        if self.mask is None or self.mask.dtype == bool:
            m = self.legal.copy()
            m[..., j] = False
            return m
        m = self.mask.copy()
        m[..., j] = -np.inf
        return m


def _weights_and_output(res) -> tuple[np.ndarray, np.ndarray]:
    return (
        np.asarray(to_numpy(res.weights), dtype=float),
        np.asarray(to_numpy(res.output), dtype=float),
    )


def _check_sum(cfg, w, w_tol) -> Check:
    name = "weights sum to 1 over legal keys"
    sums = np.where(cfg.legal, w, 0.0).sum(axis=-1)
    err = _max_abs(sums, np.ones_like(sums))
    negative = float(np.min(w)) < 0 if w.size else False
    if negative:
        found = {"weight": Significant(float(np.min(w)), 3)}
        return Check(name, False, err, Phrase(N_("negative weight {weight} found"), found))
    ok = err <= w_tol
    detail = Phrase(
        N_("largest |sum - 1| is {error} (tolerance {tolerance})"),
        {"error": Scientific(err), "tolerance": Scientific(w_tol, 1)},
    )
    return Check(name, ok, err, detail)


def _check_masked_zero(cfg, w) -> Check:
    name = "masked keys get exactly 0"
    if cfg.legal.all():
        return _not_applicable(name, Phrase(N_("every key is legal")))
    leaked = np.abs(np.where(cfg.legal, 0.0, w))
    err = float(leaked.max()) if np.all(np.isfinite(w)) else math.inf
    count = int(np.sum(~cfg.legal))
    detail = Phrase(
        N_("{count} masked entries; largest weight on one: {error}"),
        {"count": count, "error": Scientific(err)},
    )
    return Check(name, err == 0.0, err, detail)


def _check_output_range(cfg, w, out, out_tol) -> Check:
    name = "output lies within the legal values' range"
    legal_rows = np.atleast_2d(cfg.legal)
    outs = np.atleast_2d(out)
    err = 0.0
    for row_legal, row_out in zip(legal_rows, outs, strict=True):
        lo = cfg.v[row_legal].min(axis=0)
        hi = cfg.v[row_legal].max(axis=0)
        if not np.all(np.isfinite(row_out)):
            err = math.inf
            break
        err = max(err, float(np.max(np.maximum(lo - row_out, row_out - hi))), 0.0)
    detail = Phrase(N_("largest excursion outside [min, max]: {error}"), {"error": Scientific(err)})
    return Check(name, err <= out_tol, err, detail)


def _check_permutation(cfg, w, out, w_tol, out_tol) -> Check:
    name = "permuting keys with values permutes weights, keeps output"
    if cfg.n < 2:
        return _not_applicable(name, Phrase(N_("only one key")))
    perm = np.roll(np.arange(cfg.n), 1)  # moves every key: no fixed point hides a bug
    mask = None if cfg.mask is None else cfg.mask[..., perm]
    res = cfg.run(keys=cfg.k[perm], values=cfg.v[perm], mask=mask)
    wp, op = _weights_and_output(res)
    err_w = _max_abs(wp, w[..., perm])
    err_o = _max_abs(op, out)
    ok = err_w <= w_tol and err_o <= out_tol
    return Check(
        name,
        ok,
        max(err_w, err_o),
        Phrase(
            N_("cyclic shift of {count} keys: weights differ by {weights}, output by {output}"),
            {"count": cfg.n, "weights": Scientific(err_w), "output": Scientific(err_o)},
        ),
    )


def _check_swap(cfg, w, out, w_tol, out_tol) -> Check:
    name = "swapping two values keeps weights, changes output"
    # Pick the pair whose swap must move the output most: (w_i - w_j)(v_j - v_i) per query.
    w_rows = np.atleast_2d(w)
    i = int(np.argmax(w_rows.sum(axis=0)))
    gap = np.abs(w_rows - w_rows[:, [i]]).max(axis=0)
    dist = np.linalg.norm(cfg.v - cfg.v[i], axis=1)
    effect = gap * dist
    j = int(np.argmax(effect))
    if effect[j] <= out_tol:
        if np.all(dist == 0):
            why = N_("all values are equal, so no swap can change the output")
        else:
            why = N_("keys with different values carry equal weight, so a swap cannot show")
        return _not_applicable(name, Phrase(why))
    v_swapped = cfg.v.copy()
    v_swapped[[i, j]] = cfg.v[[j, i]]
    ws, os_ = _weights_and_output(cfg.run(values=v_swapped))
    err_w = _max_abs(ws, w)
    predicted = (w[..., i] - w[..., j])[..., None] * (cfg.v[j] - cfg.v[i])
    err_change = _max_abs(os_ - out, predicted)
    moved = float(np.max(np.abs(os_ - out))) if np.all(np.isfinite(os_)) else 0.0
    ok = err_w <= w_tol and err_change <= out_tol and moved > out_tol
    return Check(
        name,
        ok,
        max(err_w, err_change),
        Phrase(
            N_(
                "swapped values {i} and {j}: weights moved {weights}; output moved {moved}, "
                "{off} away from the predicted (w_i - w_j)(v_j - v_i)"
            ),
            {
                "i": i,
                "j": j,
                "weights": Scientific(err_w),
                "moved": Significant(moved, 3),
                "off": Scientific(err_change),
            },
        ),
    )


def _check_shift(cfg, w, w_tol) -> Check:
    name = "adding a constant to every logit keeps weights"
    shifted = cfg.float_mask() + LOGIT_SHIFT
    ws, _ = _weights_and_output(cfg.run(mask=shifted))
    err = _max_abs(ws, w)
    tol = w_tol * (1 + LOGIT_SHIFT / cfg.temperature)
    detail = Phrase(
        N_("shift by {shift}: weights moved {error}"),
        {"shift": Amount(LOGIT_SHIFT), "error": Scientific(err)},
    )
    return Check(name, err <= tol, err, detail)


def _check_temperature(cfg, w, w_tol) -> Check:
    name = "temperature keeps the ranking"
    worst = 0.0
    parts = []
    for factor in TEMPERATURE_FACTORS:
        t = cfg.temperature * factor
        wt, _ = _weights_and_output(cfg.run(temperature=t))
        if not np.all(np.isfinite(wt)):
            worst = math.inf
            break
        v = max(ranking_violation(w, wt), ranking_violation(wt, w))
        worst = max(worst, v)
        parts.append(Phrase("T={t}: {v}", {"t": Significant(t, 3), "v": Scientific(v)}))
    return Check(
        name,
        worst <= w_tol,
        worst,
        Phrase(
            N_("largest order reversal (ties from underflow allowed): {parts}"),
            {"parts": listed(parts, ", ")},
        ),
    )


def _check_mask_delete(cfg, w, w_tol, out_tol) -> Check:
    name = "masking a key equals deleting it"
    legal_rows = np.atleast_2d(cfg.legal)
    counts = legal_rows.sum(axis=1)
    # A key can be masked if every query that may use it keeps another legal key.
    candidates = legal_rows.any(axis=0) & bool(np.all(counts >= 2))
    if not candidates.any():
        return _not_applicable(
            name, Phrase(N_("masking any key would leave a query with no legal key"))
        )
    # Mask the key carrying the most weight: the largest change a wrong mask could hide.
    j = int(np.argmax(np.where(candidates, np.atleast_2d(w).sum(axis=0), -np.inf)))
    wm, om = _weights_and_output(cfg.run(mask=cfg.masked_key(j)))
    keep = np.delete(np.arange(cfg.n), j)
    del_mask = None if cfg.mask is None else np.delete(cfg.mask, j, axis=-1)
    wd, od = _weights_and_output(cfg.run(keys=cfg.k[keep], values=cfg.v[keep], mask=del_mask))
    leak = float(np.max(np.abs(wm[..., j]))) if np.all(np.isfinite(wm)) else math.inf
    err_w = _max_abs(wm[..., keep], wd)
    err_o = _max_abs(om, od)
    err = max(leak, err_w, err_o)
    ok = leak == 0.0 and err_w <= w_tol and err_o <= out_tol
    return Check(
        name,
        ok,
        err,
        Phrase(
            N_(
                "masked vs deleted key {key}: weight left on it {leak}, other weights differ by "
                "{weights}, output by {output}"
            ),
            {
                "key": j,
                "leak": Scientific(leak),
                "weights": Scientific(err_w),
                "output": Scientific(err_o),
            },
        ),
    )


def _tiled_block(n: int) -> int:
    """About three blocks, preferring a size that does not divide n (a ragged last block)."""
    b = max(1, -(-n // 3))
    if b > 1 and n % b == 0:
        b -= 1
    return b


def _check_tiled(cfg, ref) -> Check:
    # PyTorch's rule: golden is the float64 reference; the float32 reference kernel's own error
    # against it sizes the tolerance for the float32 tiled kernel.
    name = "tiled kernel equals the reference"
    block = _tiled_block(cfg.n)
    low_ref = cfg.run_low(kernel="reference")
    res = cfg.run_low(kernel="tiled", block_size=block)
    c_out = check_close(to_numpy(res.output), to_numpy(ref.output), to_numpy(low_ref.output))
    c_lse = check_close(to_numpy(res.lse), to_numpy(ref.lse), to_numpy(low_ref.lse))
    err = max(c_out.error, c_lse.error)
    return Check(
        name,
        c_out.passed and c_lse.passed,
        err,
        Phrase(
            N_(
                "float32, block size {block} over {count} keys: output error {output}, "
                "log-sum-exp error {lse} (bound {bound}, from the float32 reference kernel's "
                "own error)"
            ),
            {
                "block": block,
                "count": cfg.n,
                "output": Scientific(c_out.error),
                "lse": Scientific(c_lse.error),
                "bound": Scientific(c_out.bound, 1),
            },
        ),
    )


def _torch_status(device: str | None) -> tuple[bool, str]:
    rows = [b for b in backends() if b.name == "torch"]
    if device is not None:
        rows = [b for b in rows if b.device == device]
    usable = [b for b in rows if b.available]
    if usable:
        return True, usable[0].device
    return False, rows[0].reason if rows else "torch not installed"


def _check_torch(cfg, w, out, torch_check: bool, device: str | None) -> Check:
    name = "torch equals numpy"
    if not torch_check:
        return _not_applicable(name, Phrase(N_("not requested (torch_check=False)")))
    available, where = _torch_status(device)
    if not available:
        return _not_applicable(name, where)
    res = cfg.run_low(backend="torch", device=where)
    wt, ot = _weights_and_output(res)
    w_low, out_low = _weights_and_output(cfg.run_low(kernel="reference"))
    c_w = check_close(wt, w, w_low)
    c_o = check_close(ot, out, out_low)
    return Check(
        name,
        c_w.passed and c_o.passed,
        max(c_w.error, c_o.error),
        Phrase(
            N_(
                "torch on {device}, float32: weights error {weights}, output error {output} "
                "(bound {bound}, from numpy's float32 error)"
            ),
            {
                "device": where,
                "weights": Scientific(c_w.error),
                "output": Scientific(c_o.error),
                "bound": Scientific(c_o.bound, 1),
            },
        ),
    )


# Each check's name: its identity (tests and exports compare it) and, translated, its row.
CHECK_NAMES = (
    N_("weights sum to 1 over legal keys"),
    N_("masked keys get exactly 0"),
    N_("output lies within the legal values' range"),
    N_("permuting keys with values permutes weights, keeps output"),
    N_("swapping two values keeps weights, changes output"),
    N_("adding a constant to every logit keeps weights"),
    N_("temperature keeps the ranking"),
    N_("masking a key equals deleting it"),
    N_("tiled kernel equals the reference"),
    N_("torch equals numpy"),
)


def run_audit(
    query,
    keys,
    values,
    *,
    mask=None,
    temperature: float = 1.0,
    scale: bool | float = True,
    torch_check: bool = True,
    torch_device: str | None = None,
    attention_fn: Callable[..., Any] | None = None,
) -> list[Check]:
    """Run every check on one configuration; returns one Check per entry of CHECK_NAMES.

    `attention_fn` (default `engine.attention`) lets tests feed a deliberately broken
    implementation through the same checks. An invalid configuration (bad shapes, a query
    with no legal key) raises the ValueError attention itself raises. A check whose own call
    fails is reported as failed with the exception in its detail.
    """
    fn = attention if attention_fn is None else attention_fn
    cfg = _Config(query, keys, values, mask, temperature, scale, fn)
    ref = cfg.run(kernel="reference")
    w, out = _weights_and_output(ref)

    bound = cfg.logit_bound()
    w_tol = REL_TOL * (1.0 + bound)
    out_tol = w_tol * (1.0 + float(np.abs(cfg.v).max(initial=0.0)))

    steps = (
        lambda: _check_sum(cfg, w, w_tol),
        lambda: _check_masked_zero(cfg, w),
        lambda: _check_output_range(cfg, w, out, out_tol),
        lambda: _check_permutation(cfg, w, out, w_tol, out_tol),
        lambda: _check_swap(cfg, w, out, w_tol, out_tol),
        lambda: _check_shift(cfg, w, w_tol),
        lambda: _check_temperature(cfg, w, w_tol),
        lambda: _check_mask_delete(cfg, w, w_tol, out_tol),
        lambda: _check_tiled(cfg, ref),
        lambda: _check_torch(cfg, w, out, torch_check, torch_device),
    )
    checks = []
    for name, step in zip(CHECK_NAMES, steps, strict=True):
        try:
            checks.append(step())
        except Exception as exc:  # noqa: BLE001 - a crashing check is a failed check
            raised = Phrase(N_("raised {error}"), {"error": f"{type(exc).__name__}: {exc}"})
            checks.append(Check(name, False, math.inf, raised))
    return checks
