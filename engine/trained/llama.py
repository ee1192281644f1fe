"""One Llama block (SmolLM2's architecture), written once for NumPy and torch.

RMSNorm, grouped-query attention with rotary positions (every head through ``engine.attention``),
SwiGLU. The block is batched over sequences of one length: ``x`` is (B, n, d_model). Edits act on
every sequence of the batch alike; ``replace`` sets one head's output in one sequence (zero for
an ablation, another run's output for activation patching), which is how the causal map and the
patching map run a whole layer's heads as one batch.

The arithmetic goes through the array's own namespace (``array_api_compat``), so the same lines
run on NumPy arrays and on torch tensors on any device. Masks and edits' bookkeeping stay in NumPy
on the host: they are (heads, n, n) booleans, small next to the matrices.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import array_api_compat
import numpy as np

from ..backends import to_numpy
from ..core import attention
from .edits import rotate_towards


@dataclass(frozen=True)
class Shape:
    n_heads: int
    n_kv_heads: int
    d_head: int
    d_ff: int
    eps: float

    @property
    def d_model(self) -> int:
        return self.n_heads * self.d_head


@dataclass
class LayerDetail:
    """What the page reads from one layer of a single-sequence forward (NumPy, batch dropped)."""

    q: np.ndarray  # (heads, n, d_head) after RoPE and any rotation
    k: np.ndarray  # (heads, n, d_head) each query head's copy of its key head, after edits
    v: np.ndarray  # (heads, n, d_head)
    scores: np.ndarray  # (heads, n) the query row's
    logits: np.ndarray  # (heads, n) the query row's
    weights: np.ndarray  # (heads, n, n)
    out: np.ndarray  # (heads, n, d_head), zero where ablated
    legal: np.ndarray  # (heads, n, n) bool
    temperature: np.ndarray  # (heads,)
    ablated: np.ndarray  # (heads,) bool
    scale: float


def rms_norm(x, weight, eps: float):
    xp = array_api_compat.array_namespace(x)
    return x / xp.sqrt(xp.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def rope_tables(n: int, d_head: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """cos, sin (n, d_head) for positions 0..n-1, in rotate_half order (frequencies repeated)."""
    inv = base ** (-np.arange(0, d_head, 2, dtype=np.float64) / d_head)
    ang = np.arange(n, dtype=np.float64)[:, None] * inv[None, :]
    ang = np.concatenate([ang, ang], axis=-1)
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def apply_rope(x, cos, sin):
    """x (..., n, d_head) rotated: x * cos + rotate_half(x) * sin."""
    xp = array_api_compat.array_namespace(x)
    half = x.shape[-1] // 2
    rot = xp.concat([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rot * sin


def _linear(x, w):
    """x (B, n, d_in) @ w (d_in, d_out) as one (B * n)-row product: NumPy's stacked matmul
    calls the BLAS once per sequence, which throws away what batching the sequences buys."""
    xp = array_api_compat.array_namespace(x)
    b, n, d = x.shape
    return xp.reshape(xp.reshape(x, (b * n, d)) @ w, (b, n, w.shape[1]))


def _like(x, a):
    """NumPy array ``a`` on ``x``'s backend and device."""
    if isinstance(x, np.ndarray):
        return a
    import torch

    return torch.as_tensor(a, device=x.device)


def _backend_of(x) -> dict[str, str]:
    """engine.attention's backend options for arrays like ``x``."""
    if isinstance(x, np.ndarray):
        return {"backend": "numpy"}
    return {"backend": "torch", "device": str(x.device)}


def _host(x) -> np.ndarray:
    return x if isinstance(x, np.ndarray) else to_numpy(x)


def block(
    shape: Shape,
    w: dict[str, Any],
    x,
    *,
    layer: int,
    cos,
    sin,
    edits=(),
    qpos: int,
    replace: dict[tuple[int, int], Any] | None = None,
    detail: bool = False,
    query_only: bool = False,
):
    """x (B, n, d_model) through one block; returns (x_next, LayerDetail or None).

    ``w`` holds this layer's weights on x's backend: wqkv (d, d + 2 kv), wo, wgu (d, 2 d_ff), wd,
    attn_norm, ffn_norm. ``replace[(b, head)]`` is None (zero: ablation) or an (n, d_head) array
    that becomes that head's output in sequence b. ``detail`` (B = 1 only) returns what the
    page's records need, on the host. ``query_only`` (a last layer with no edits, whose other
    rows nothing reads) returns only the query row: (B, 1, d_model)."""
    xp = array_api_compat.array_namespace(x)
    b, n, dm = x.shape
    nh, nkv, dh = shape.n_heads, shape.n_kv_heads, shape.d_head
    kv_of = np.arange(nh) // (nh // nkv)

    h = rms_norm(x, w["attn_norm"], shape.eps)
    qkv = _linear(h, w["wqkv"])
    q = xp.permute_dims(xp.reshape(qkv[..., :dm], (b, n, nh, dh)), (0, 2, 1, 3))
    k = xp.permute_dims(xp.reshape(qkv[..., dm : dm + nkv * dh], (b, n, nkv, dh)), (0, 2, 1, 3))
    v = xp.permute_dims(xp.reshape(qkv[..., dm + nkv * dh :], (b, n, nkv, dh)), (0, 2, 1, 3))
    q = apply_rope(q, cos, sin)
    if not isinstance(q, np.ndarray):
        q = q.contiguous()
    else:
        q = np.ascontiguousarray(q)
    k = apply_rope(k, cos, sin)
    # One copy of the shared key/value head per query head, so an edit acts on one head only.
    index = _like(x, kv_of)
    kq = k[:, index]
    vq = v[:, index]

    legal = np.repeat(np.tril(np.ones((n, n), dtype=bool))[None], nh, axis=0)
    rows = slice(None)
    if query_only:
        if edits or detail:
            raise ValueError("query_only is for a layer without edits or records")
        rows = slice(qpos, qpos + 1)
        q, legal, x = q[:, :, rows], legal[:, rows], x[:, rows]
        qpos = 0
    temps = np.ones(nh)
    degrees = np.zeros(nh)
    ablated = np.zeros(nh, dtype=bool)
    patched: dict[int, np.ndarray] = {}
    for hd in range(nh):
        for e in edits:
            if e.targets(layer, hd):
                e.edit_kv(kq[:, hd], vq[:, hd])
                e.edit_legal(legal[hd])
                temps[hd] *= e.temperature_factor()
                degrees[hd] += e.rotation()
                ablated[hd] = ablated[hd] or e.ablates()
                if (value := e.replaced_output()) is not None:
                    patched[hd] = _check_patch(value, n, dh)
        if not legal[hd, qpos].any():
            raise ValueError(
                f"the edits leave the query position {qpos} no key to attend to in "
                f"layer {layer} head {hd}: at least one position must stay visible"
            )

    n_out = q.shape[2]
    out = xp.empty((b, nh, n_out, dh), dtype=x.dtype, device=array_api_compat.device(x))
    weights_all = np.empty((nh, n_out, n), dtype=np.float32) if detail else None
    kept = {"logits": [None] * nh, "scores": [None] * nh}  # only the query row of each
    scale = 1.0 / math.sqrt(dh)
    temp_of = np.ones(nh)
    # Heads of one temperature share one call; a rotated head is recomputed alone.
    for t in np.unique(temps):
        idx = np.flatnonzero(temps == t)
        sel = _like(x, idx)
        opts = {"temperature": float(t), "fully_masked": "zero"} | _backend_of(x)
        res = attention(q[:, sel], kq[:, sel], vq[:, sel], mask=_like(x, legal[idx]), **opts)
        scale = float(res.scale)
        out[:, sel] = res.output
        for j, hd in enumerate(idx):
            temp_of[hd] = float(res.temperature)
            if degrees[hd]:
                one = _rotated(q, kq, vq, hd, legal[hd], res.weights[:, j], qpos, degrees[hd], opts)
                out[:, hd] = one.output
                source, at = one, (0,)
            else:
                source, at = res, (0, j)
            if detail:
                weights_all[hd] = _host(source.weights[at])
                for name in kept:
                    kept[name][hd] = _host(getattr(source, name)[at][qpos])
    for hd, value in patched.items():
        out[:, hd] = _like(x, value)
    if ablated.any():
        out[:, _like(x, np.flatnonzero(ablated))] = 0.0
    for (seq, hd), value in (replace or {}).items():
        out[seq, hd] = 0.0 if value is None else _like(x, np.asarray(value)[rows])

    x = x + _linear(xp.reshape(xp.permute_dims(out, (0, 2, 1, 3)), (b, n_out, nh * dh)), w["wo"])
    h2 = rms_norm(x, w["ffn_norm"], shape.eps)
    gu = _linear(h2, w["wgu"])
    gate, up = gu[..., : shape.d_ff], gu[..., shape.d_ff :]
    x = x + _linear(gate / (1.0 + xp.exp(-gate)) * up, w["wd"])
    if not detail:
        return x, None
    info = LayerDetail(
        q=_host(q[0]),
        k=_host(kq[0]),
        v=_host(vq[0]),
        scores=np.stack(kept["scores"]),
        logits=np.stack(kept["logits"]),
        weights=weights_all,
        out=_host(out[0]),
        legal=legal,
        temperature=temp_of,
        ablated=ablated,
        scale=scale,
    )
    return x, info


def _check_patch(value: np.ndarray, n: int, d_head: int) -> np.ndarray:
    if value.shape != (n, d_head):
        raise ValueError(
            f"PatchHead: the output has shape {value.shape}; this head's is ({n}, {d_head})"
        )
    return value


def _rotated(q, kq, vq, hd, legal, weights, qpos, degrees, opts):
    """Head ``hd`` recomputed with each sequence's query row turned towards its top key."""
    for row in range(q.shape[0]):
        top = int(np.argmax(_host(weights[row, qpos])))
        turned = rotate_towards(_host(q[row, hd, qpos]), _host(kq[row, hd, top]), degrees)
        q[row, hd, qpos] = _like(q, turned.astype(np.float32))
    return attention(q[:, hd], kq[:, hd], vq[:, hd], mask=_like(q, legal), **opts)
