"""``attention`` and ``softmax``: the routing contract, its validation and its result object.

Conventions (PyTorch >= 2.5 where the seed says nothing):

- ``q (..., Lq, Dk)`` or ``(Dk,)``, ``k (..., Lk, Dk)``, ``v (..., Lk, Dv)``; leading batch/head
  dimensions broadcast by NumPy's rules, and any other mismatch is a ``ValueError``.
- ``logits = (scale * (q . k) + float_mask) / temperature``; illegal keys get ``-inf`` through
  ``where``, so they receive exactly zero weight.
- ``mask``: bool (True = the key takes part) or float (added before the temperature; ``-inf``
  entries make a key illegal, a finite value, however negative, does not).
- ``is_causal``: query i sees keys 0..i, aligned top-left when Lq != Lk (torch's convention;
  FlashAttention >= 2.1 aligns bottom-right instead). Rows past Lk see every key; a 1-D q is
  query 0 and sees key 0 only (pass a mask to place a single query elsewhere).
- Non-finite q, k or v is an error even in a key the mask hides: torch lets such a NaN leak
  through ``where`` (pytorch#101967); refusing it up front is the clearer contract.
- A query with no legal key: ``fully_masked="error"`` raises; ``"zero"`` gives zero weights, zero
  output and lse = -inf (torch's safe softmax).
- float16/bfloat16 inputs are computed in float32; every field comes back in the input dtype.
"""

from __future__ import annotations

import math
from functools import cached_property
from numbers import Integral, Real
from typing import Any

import numpy as np

from . import kernels
from .backends import Backend, blas_threads, can_pin_blas_threads, resolve, to_numpy

FULLY_MASKED_POLICIES = ("error", "zero")
KERNELS = ("auto", "reference", "tiled")
# kernel="auto" switches to the tiled kernel once the materialised (..., Lq, Lk) logits would
# exceed this many bytes: 64 MiB, i.e. 16M float32 entries, e.g. one head at n = 4096.
AUTO_TILED_BYTES = 64 * 2**20
_MAX_LISTED = 10


# ----------------------------------------------------------------------------- validation helpers


def _check_positive(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return value


def _resolve_scale(scale: Any, d_k: int) -> float:
    if scale is None or scale is True:
        return 1.0 / math.sqrt(d_k)
    if scale is False:
        return 1.0
    return _check_positive("scale", scale)


def _as_array(name: str, x: Any, be: Backend) -> Any:
    """``x`` as an array of the backend, on its device, with a numeric dtype."""
    if be.is_numpy:
        arr = to_numpy(x) if _is_torch(x) else np.asarray(x)
        if arr.dtype.kind not in "biuf":
            raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype}")
        return arr
    import torch

    if not isinstance(x, torch.Tensor):
        host = np.asarray(x)
        if host.dtype.kind not in "biuf":
            raise ValueError(f"{name} must hold real numbers, got dtype {host.dtype}")
        x = torch.as_tensor(host)
    if x.is_complex():
        raise ValueError(f"{name} must hold real numbers, got dtype {x.dtype}")
    return x.to(be.device)


def _is_torch(x: Any) -> bool:
    from .backends import is_torch_array

    return is_torch_array(x)


def _dtypes(be: Backend, *arrays: Any) -> tuple[Any, Any]:
    """(compute dtype, output dtype) for the inputs: half precisions compute in float32."""
    if be.is_numpy:
        out = np.result_type(*(a.dtype for a in arrays))
        if out.kind != "f":
            out = np.dtype(np.float64)
        return (np.dtype(np.float32) if out == np.float16 else out), out
    import torch

    out = arrays[0].dtype
    for a in arrays[1:]:
        out = torch.promote_types(out, a.dtype)
    if not out.is_floating_point:
        out = torch.float64
    if out == torch.float64 and be.device_name == "mps":
        raise ValueError(
            "the MPS device has no float64; pass float32 (or float16) q, k and v for device='mps'"
        )
    return (torch.float32 if out in (torch.float16, torch.bfloat16) else out), out


def _is_half(xp: Any, dtype: Any) -> bool:
    # Careful: np.dtype("float64") == None is True, so never compare against a missing dtype.
    halves = [xp.float16] + ([xp.bfloat16] if hasattr(xp, "bfloat16") else [])
    return any(dtype == h for h in halves)


def _check_finite(name: str, x: Any, xp: Any) -> None:
    bad = ~xp.isfinite(x)
    if bool(xp.any(bad)):
        count = int(xp.sum(xp.astype(bad, xp.int64)))
        raise ValueError(
            f"{name} must be finite, but {count} of its entries are NaN or inf (shape {tuple(x.shape)})"
        )


def _broadcast_batch(q_shape, k_shape, v_shape) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(q_shape[:-2], k_shape[:-2], v_shape[:-2]))
    except ValueError:
        raise ValueError(
            f"batch dimensions of q {tuple(q_shape)}, k {tuple(k_shape)} and v {tuple(v_shape)} "
            "do not broadcast (each leading dimension must match or be 1)"
        ) from None


def _check_options(fully_masked, kernel, block_size, is_causal, mask) -> None:
    if fully_masked not in FULLY_MASKED_POLICIES:
        raise ValueError(
            f"fully_masked must be one of {FULLY_MASKED_POLICIES}, got {fully_masked!r}"
        )
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    if block_size is not None:
        if isinstance(block_size, bool) or not isinstance(block_size, Integral) or block_size < 1:
            raise ValueError(f"block_size must be a positive integer or None, got {block_size!r}")
        if kernel == "reference":
            raise ValueError("block_size applies to kernel='tiled' (or 'auto'), not 'reference'")
    if not isinstance(is_causal, bool | np.bool_):
        raise ValueError(f"is_causal must be True or False, got {is_causal!r}")
    if is_causal and mask is not None:
        raise ValueError(
            "pass either mask or is_causal=True, not both (as in torch); "
            "to combine them, fold the causal triangle into the mask"
        )


def _check_inputs(q, k, v, be: Backend):
    """Arrays of the backend with checked shapes: (q, k, v, squeezed 1-D q?, batch shape)."""
    q, k, v = (_as_array(name, x, be) for name, x in (("q", q), ("k", k), ("v", v)))
    if q.ndim < 1 or k.ndim < 2 or v.ndim < 2:
        raise ValueError(
            "expected q (..., Lq, Dk) or (Dk,), k (..., Lk, Dk) and v (..., Lk, Dv), got "
            f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"
        )
    squeeze = q.ndim == 1
    if squeeze:
        q = q[None, :]
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must share the key dimension Dk: q {tuple(q.shape)} has Dk={q.shape[-1]}, "
            f"k {tuple(k.shape)} has Dk={k.shape[-1]}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must hold one value per key: k {tuple(k.shape)} has Lk={k.shape[-2]}, "
            f"v {tuple(v.shape)} has {v.shape[-2]}"
        )
    if k.shape[-2] == 0 or k.shape[-1] == 0:
        raise ValueError(f"k must hold at least one key of dimension >= 1, got k {tuple(k.shape)}")
    batch = _broadcast_batch(q.shape, k.shape, v.shape)
    for name, x in (("q", q), ("k", k), ("v", v)):
        _check_finite(name, x, be.xp)
    return q, k, v, squeeze, batch


def _prepare_mask(
    mask: Any, target: tuple[int, ...], temperature: float, dtype, be: Backend, squeeze: bool
):
    """(bias, legal) views broadcast to ``target`` = (..., Lq, Lk), from a bool or float mask."""
    xp = be.xp
    m = _as_array("mask", mask, be)
    caller_shape = tuple(m.shape)
    if squeeze and m.ndim >= 1:
        m = m[..., None, :]  # a 1-D q has no query axis: its mask is (..., Lk)
    try:
        shape = tuple(np.broadcast_shapes(tuple(m.shape), target))
    except ValueError:
        shape = None
    if shape != target:
        wanted = target[:-2] + target[-1:] if squeeze else target
        axes = "(..., Lk)" if squeeze else "(..., Lq, Lk)"
        raise ValueError(
            f"mask of shape {caller_shape} does not broadcast to the logits' shape {wanted} {axes}"
        )
    if xp.isdtype(m.dtype, "bool"):
        # A copy, so that editing the caller's mask later cannot change lazy views.
        return None, xp.broadcast_to(xp.asarray(m, copy=True), target)
    if not xp.isdtype(m.dtype, "real floating"):
        raise ValueError(
            f"mask must be bool (True = legal key) or floating (added to the logits), "
            f"got dtype {m.dtype}"
        )
    if bool(xp.any(xp.isnan(m))) or bool(xp.any(m == math.inf)):
        raise ValueError(f"mask must not contain NaN or +inf (shape {tuple(m.shape)})")
    legal = m != -math.inf
    # Work in the wider of the mask's and the compute dtype (a half mask widens exactly). The
    # bias stays finite wherever the key is legal: a huge finite mask is clipped into the compute
    # range rather than overflowing to -inf, so it never turns into a full mask by accident.
    m = xp.astype(m, xp.result_type(m.dtype, dtype))
    info = xp.finfo(dtype)
    with np.errstate(over="ignore"):
        scaled = xp.where(legal, m, xp.zeros_like(m)) / temperature
    bias = xp.astype(xp.clip(scaled, min=float(info.min), max=float(info.max)), dtype)
    return xp.broadcast_to(bias, target), xp.broadcast_to(legal, target)


def _rows_without_keys(legal: Any, target: tuple[int, ...], be: Backend) -> np.ndarray:
    """Indices (batch..., query) of rows with no legal key, as a NumPy integer array."""
    has_key = to_numpy(be.xp.any(legal, axis=-1))
    return np.argwhere(~np.broadcast_to(has_key, target[:-1]))


def _describe_rows(rows: np.ndarray, squeezed: bool) -> str:
    listed = []
    for r in rows[:_MAX_LISTED]:
        pos = tuple(int(i) for i in r)
        if squeezed:
            pos = pos[:-1]  # 1-D q: the query axis is not the caller's
        if not pos:
            return "(the only query)"
        listed.append(str(pos[0]) if len(pos) == 1 else str(pos))
    more = f" and {len(rows) - _MAX_LISTED} more" if len(rows) > _MAX_LISTED else ""
    return ", ".join(listed) + more


# ------------------------------------------------------------------------------------- the result


class AttentionResult:
    """What one attention call produced, with its derived views computed on first access.

    ``output`` and ``lse`` always exist. ``weights``, ``logits`` and ``scores`` come from the
    reference kernel directly; after the tiled kernel they are recomputed from q, k and the mask
    on first access (the full (..., Lq, Lk) matrix is only built if you ask for it).

    ``jacobian`` is d weights / d z with z = scale * scores + float_mask, the logits *before* the
    temperature: (1/T) (diag w - w w^T), shape (..., Lq, Lk, Lk).
    For a 1-D q the query axis is squeezed out of every field.
    """

    def __init__(self, source: _Source, *, squeeze: bool, meta: dict[str, Any]):
        self._source = source
        self._squeeze = squeeze
        self.kernel: str = meta["kernel"]
        self.backend: str = meta["backend"]
        self.device: str = meta["device"]
        self.scale: float = meta["scale"]
        self.temperature: float = meta["temperature"]

    def _out(self, x: Any, query_axis: int) -> Any:
        if not self._squeeze:
            return x
        xp = self._source.xp
        return xp.squeeze(x, axis=query_axis)

    @cached_property
    def output(self) -> Any:
        """(..., Lq, Dv): the weighted sum of values."""
        return self._out(self._source.get("output"), -2)

    @cached_property
    def lse(self) -> Any:
        """(..., Lq): log-sum-exp of each query's logits over legal keys (-inf with none)."""
        return self._out(self._source.get("lse"), -1)

    @cached_property
    def weights(self) -> Any:
        """(..., Lq, Lk): softmax of the logits; exactly 0 on illegal keys."""
        return self._out(self._source.get("weights"), -2)

    @cached_property
    def logits(self) -> Any:
        """(..., Lq, Lk): (scale * scores + float_mask) / temperature; -inf on illegal keys."""
        return self._out(self._source.get("logits"), -2)

    @cached_property
    def scores(self) -> Any:
        """(..., Lq, Lk): raw dot products q . k, before scale, mask and temperature."""
        return self._out(self._source.get("scores"), -2)

    @cached_property
    def _weights_compute(self) -> Any:
        return self._source.get("weights", cast=False)

    @cached_property
    def contributions(self) -> Any:
        """(..., Lq, Lk, Dv): w_j * v_j, each key's share of the output."""
        w = self._weights_compute
        v = self._source.get("values", cast=False)
        return self._out(self._source.cast(w[..., :, :, None] * v[..., None, :, :]), -3)

    @cached_property
    def _entropy_compute(self) -> Any:
        xp = self._source.xp
        w = self._weights_compute
        safe = xp.where(w > 0, w, xp.ones_like(w))  # 0 * log 0 = 0
        return -xp.sum(w * xp.log(safe), axis=-1)

    @cached_property
    def entropy(self) -> Any:
        """(..., Lq): entropy of each query's weights in nats (0 for a zeroed row)."""
        return self._out(self._source.cast(self._entropy_compute), -1)

    @cached_property
    def effective_keys(self) -> Any:
        """(..., Lq): exp(entropy), the number of equally weighted keys with the same entropy.

        0 for a zeroed (fully masked) row, where no key takes part.
        """
        xp = self._source.xp
        w = self._weights_compute
        has_mass = xp.sum(w, axis=-1) > 0
        eff = xp.where(has_mass, xp.exp(self._entropy_compute), xp.zeros_like(w[..., 0]))
        return self._out(self._source.cast(eff), -1)

    @cached_property
    def jacobian(self) -> Any:
        """(..., Lq, Lk, Lk): d w_i / d s_j = (1/T) w_i (delta_ij - w_j), where s is the scaled
        score before the temperature divides it (the snapshot's `scaled`)."""
        xp = self._source.xp
        w = self._weights_compute
        eye = xp.eye(w.shape[-1], dtype=w.dtype, device=kernels.device_of(w))
        jac = (
            w[..., :, :, None] * eye - w[..., :, :, None] * w[..., :, None, :]
        ) / self.temperature
        return self._out(self._source.cast(jac), -3)

    def to_numpy(self) -> AttentionResult:
        """A NumPy copy of this result (fields still computed on demand, from this one's)."""
        meta = {
            "kernel": self.kernel,
            "backend": self.backend,
            "device": self.device,
            "scale": self.scale,
            "temperature": self.temperature,
        }
        return AttentionResult(_NumpyCopy(self._source), squeeze=self._squeeze, meta=meta)

    def __repr__(self) -> str:
        shape = tuple(self.output.shape)
        return (
            f"AttentionResult(output{shape}, kernel={self.kernel!r}, backend={self.backend!r}, "
            f"device={self.device!r}, scale={self.scale:.6g}, temperature={self.temperature:.6g})"
        )


class _Source:
    """Holds one call's arrays in the compute dtype and recomputes the materialised ones."""

    def __init__(self, xp, q, k, v, rule, fields: dict[str, Any], out_dtype):
        self.xp = xp
        self._q, self._k, self._v, self._rule = q, k, v, rule
        self._fields = dict(fields, values=v)
        self._out_dtype = out_dtype

    def cast(self, x: Any) -> Any:
        return x if x.dtype == self._out_dtype else self.xp.astype(x, self._out_dtype)

    def get(self, name: str, *, cast: bool = True) -> Any:
        if name not in self._fields:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                full = kernels.reference(self._q, self._k, self._v, self._rule)
            for key in ("weights", "logits", "scores"):
                self._fields.setdefault(key, full[key])
        x = self._fields[name]
        return self.cast(x) if cast else x


class _NumpyCopy:
    """The NumPy view of another result's source: each field is converted on first access."""

    def __init__(self, source: _Source | _NumpyCopy):
        import array_api_compat.numpy as np_xp

        self.xp = np_xp
        self._source = source
        self._cache: dict[tuple[str, bool], Any] = {}
        probe = source.xp.zeros(1, device=kernels.device_of(source.get("lse", cast=False)))
        self._out_dtype = to_numpy(source.cast(probe)).dtype

    def cast(self, x: Any) -> Any:
        return x if x.dtype == self._out_dtype else x.astype(self._out_dtype)

    def get(self, name: str, *, cast: bool = True) -> Any:
        key = (name, cast)
        if key not in self._cache:
            self._cache[key] = to_numpy(self._source.get(name, cast=cast))
        return self._cache[key]


# ------------------------------------------------------------------------------------- public API


def _tiled_threading(be: Backend) -> dict[str, Any]:
    """Threads for the tiled kernel: NumPy gets one task per core, each with a one-thread BLAS
    (otherwise every matmul would also spawn a thread per core); torch parallelises itself."""
    if be.is_numpy and can_pin_blas_threads():
        return {"workers": kernels.default_workers(), "task_context": lambda: blas_threads(1)}
    return {"workers": 1}


def attention(
    q: Any,
    k: Any,
    v: Any,
    *,
    mask: Any = None,
    is_causal: bool = False,
    scale: bool | float | None = True,
    temperature: float = 1.0,
    fully_masked: str = "error",
    backend: str = "numpy",
    device: str | None = None,
    kernel: str = "auto",
    block_size: int | None = None,
) -> AttentionResult:
    """Scaled dot-product attention with its whole routing record.

    ``scale``: True (or None) -> 1/sqrt(Dk), False -> 1, a positive number -> that factor.
    ``temperature`` (> 0) divides the scaled logits; it is a separate control from ``scale``.
    ``kernel``: "reference" materialises the logits, "tiled" streams key blocks of
    ``block_size`` (default 512) with an online softmax, "auto" picks tiled when the logits would
    exceed ``AUTO_TILED_BYTES``. See the module docstring for masks, causality and dtypes.
    """
    _check_options(fully_masked, kernel, block_size, is_causal, mask)
    temperature = _check_positive("temperature", temperature)
    be = resolve(backend, device)
    xp = be.xp
    q, k, v, squeeze, batch = _check_inputs(q, k, v, be)
    factor = _resolve_scale(scale, int(q.shape[-1]))

    compute, out_dtype = _dtypes(be, q, k, v)
    # A copy: the result's lazy views must not change if the caller edits the inputs later.
    q, k, v = (xp.astype(x, compute, copy=True) for x in (q, k, v))
    target = batch + (int(q.shape[-2]), int(k.shape[-2]))

    bias = legal = None
    if mask is not None:
        bias, legal = _prepare_mask(mask, target, temperature, compute, be, squeeze)
        empty_rows = _rows_without_keys(legal, target, be)
        if len(empty_rows) and fully_masked == "error":
            raise ValueError(
                f"{len(empty_rows)} query row(s) have no legal key under the mask of shape "
                f"{np.shape(to_numpy(mask))}: query positions "
                f"{_describe_rows(empty_rows, squeeze)}; every query needs at least one legal "
                "key (or pass fully_masked='zero')"
            )
    rule = kernels.LogitRule(xp, factor / temperature, bias, legal, bool(is_causal))

    if kernel == "auto":
        logit_bytes = math.prod(target) * np.dtype(str(compute).removeprefix("torch.")).itemsize
        tiled = block_size is not None or logit_bytes > AUTO_TILED_BYTES
        kernel = "tiled" if tiled else "reference"
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if kernel == "reference":
            fields = kernels.reference(q, k, v, rule)
        else:
            block_k = int(block_size or kernels.DEFAULT_BLOCK_K)
            fields = kernels.tiled(q, k, v, rule, block_k=block_k, **_tiled_threading(be))
    if not bool(xp.all(xp.isfinite(fields["output"]))):
        raise ValueError(
            f"the logits overflowed {compute}: q {tuple(q.shape)} . k {tuple(k.shape)} times "
            f"scale / temperature = {factor / temperature:.3g} leaves its range; use smaller "
            "inputs, a larger temperature or a wider dtype"
        )
    source = _Source(xp, q, k, v, rule, fields, out_dtype)
    meta = {
        "kernel": kernel,
        "backend": be.name,
        "device": be.device_name,
        "scale": factor,
        "temperature": temperature,
    }
    return AttentionResult(source, squeeze=squeeze, meta=meta)


def softmax(x: Any, axis: int = -1, temperature: float = 1.0) -> Any:
    """Numerically stable softmax of ``x / temperature`` along ``axis``.

    ``-inf`` entries get weight 0; NaN, +inf, or a slice with no finite entry is a ValueError.
    Works on NumPy arrays (and array-likes) and torch tensors; half precisions compute in float32.
    """
    temperature = _check_positive("temperature", temperature)
    if _is_torch(x):
        import array_api_compat.torch as xp
    else:
        import array_api_compat.numpy as xp

        x = np.asarray(x)
        if x.dtype.kind not in "biuf":
            raise ValueError(f"softmax needs real numbers, got dtype {x.dtype}")
    if x.ndim == 0:
        raise ValueError("softmax needs at least one axis, got a scalar")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of range for x of shape {tuple(x.shape)}")
    out_dtype = x.dtype if xp.isdtype(x.dtype, "real floating") else xp.float64
    compute = xp.float32 if _is_half(xp, out_dtype) else out_dtype
    z = xp.moveaxis(xp.astype(x, compute), axis, -1)
    if bool(xp.any(xp.isnan(z))) or bool(xp.any(z == math.inf)):
        raise ValueError(f"softmax input must not contain NaN or +inf (shape {tuple(x.shape)})")
    if bool(xp.any(xp.all(z == -math.inf, axis=-1))):
        raise ValueError(
            f"softmax of x with shape {tuple(x.shape)} has a slice along axis {axis} whose "
            "entries are all -inf: there is nothing to normalise"
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        weights, _ = kernels.masked_softmax(xp, z / temperature)
    return xp.astype(xp.moveaxis(weights, -1, axis), out_dtype)
