"""The decoder forward of every model file the lab opens (Llama, Qwen2, GPT-2), written once for
NumPy and torch: the block, then the model, as nanoGPT reads.

The block: a norm, attention over every head through ``engine.attention`` (grouped-query where
the file shares key/value heads), a feed-forward branch. The three families differ in a few
places, each a field of `Shape`: the norm (RMSNorm; GPT-2's LayerNorm with a bias), the
positions (rotary, with the file's base and Llama 3's per-frequency factors when the file has
them; GPT-2's learned table added to the embedding), the feed-forward (SwiGLU; GPT-2's GELU) and
biases (Qwen2's on q/k/v; GPT-2's everywhere), which are present in a layer's weights or not.

It is batched over sequences of one length: ``x`` is (B, n, d_model). Edits act on every
sequence of the batch alike; ``replace`` sets one head's output in one sequence (zero for an
ablation, another run's output for activation patching), which is how the causal map and the
patching map run a whole layer's heads as one batch.

The model: the token embedding, every block, a final norm and the output matrix (the input
embedding when the file ties them). `forward` runs one sentence and keeps every head's record;
`replacement_logits` is its batched twin for the maps. Both take the model (``shape``,
``n_layers``, its host weights ``w``) and its weights placed on one backend (`place`).

The arithmetic goes through the array's own namespace (``array_api_compat``), so the same lines
run on NumPy arrays and on torch tensors on any device. Masks and edits' bookkeeping stay in NumPy
on the host: they are (heads, n, n) booleans, small next to the matrices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import array_api_compat
import numpy as np

from ..backends import Backend, host
from ..core import attention
from .causal import Cancelled
from .edits import EditedHead, edit_head, turn_query_rows
from .norms import layer_norm
from .placed import PlacedWeights
from .runs import HeadRecord, Pass, read_only

# Each layer's weights, named without the layer's number (``wqkv3`` is layer 3's "wqkv"):
# wqkv = [q | k | v] and wgu = [gate | up] (SwiGLU) or wup (GELU), (in, out) matrices; the two
# norms' scales; and where the family has them, biases ("b...") and the norms' shifts ("..._b").
LAYER_WEIGHTS = (
    "attn_norm",
    "attn_norm_b",
    "wqkv",
    "bqkv",
    "wo",
    "bo",
    "ffn_norm",
    "ffn_norm_b",
    "wgu",
    "wup",
    "bup",
    "wd",
    "bd",
)
# Rows per matrix product in the maps' batched passes (16-token sentences: 256 of them).
BATCH_ROWS = 4096


@dataclass(frozen=True)
class Shape:
    n_heads: int
    n_kv_heads: int
    d_head: int
    d_ff: int
    eps: float
    norm: str = "rms"  # "rms" (Llama, Qwen2) or "layer" (GPT-2's LayerNorm, with a shift)
    mlp: str = "swiglu"  # "swiglu" or "gelu" (GPT-2's, the tanh approximation)
    rope: bool = True  # rotary positions; False: a learned table added to the embedding

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


def norm(shape: Shape, x, w: dict[str, Any], name: str):
    """The family's norm with the weights called ``name`` (and ``name + "_b"``, LayerNorm's)."""
    if shape.norm == "layer":
        return layer_norm(x, w[name], w[name + "_b"], shape.eps)
    return rms_norm(x, w[name], shape.eps)


def rope_tables(
    n: int, d_head: int, base: float, factors: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """cos, sin (n, d_head) for positions 0..n-1, in rotate_half order (frequencies repeated).
    ``factors`` (d_head / 2,) divide the frequencies: Llama 3's long-context scaling, which a
    file carries as its ``rope_freqs`` tensor (llama.cpp divides by them the same way)."""
    inv = base ** (-np.arange(0, d_head, 2, dtype=np.float64) / d_head)
    if factors is not None:
        inv = inv / np.asarray(factors, dtype=np.float64)
    ang = np.arange(n, dtype=np.float64)[:, None] * inv[None, :]
    ang = np.concatenate([ang, ang], axis=-1)
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def apply_rope(x, cos, sin):
    """x (..., n, d_head) rotated: x * cos + rotate_half(x) * sin."""
    xp = array_api_compat.array_namespace(x)
    half = x.shape[-1] // 2
    rot = xp.concat([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rot * sin


def silu(x):
    """x * sigmoid(x), SwiGLU's gate."""
    xp = array_api_compat.array_namespace(x)
    return x / (1.0 + xp.exp(-x))


def gelu(x):
    """GPT-2's GELU, the tanh approximation (transformers' "gelu_new", llama.cpp's ggml_gelu)."""
    xp = array_api_compat.array_namespace(x)
    return 0.5 * x * (1.0 + xp.tanh(GELU_C * (x + 0.044715 * x * x * x)))


GELU_C = float(np.sqrt(2.0 / np.pi))


def mlp(x, w: dict[str, Any], shape: Shape):
    """The feed-forward branch on normed ``x``: SwiGLU, (silu(x @ gate) * (x @ up)) @ down with
    gate and up fused in ``w["wgu"]``; or GPT-2's gelu(x @ up + b) @ down + b."""
    if shape.mlp == "gelu":
        return affine(gelu(affine(x, w["wup"], w.get("bup"))), w["wd"], w.get("bd"))
    gate_up = linear(x, w["wgu"])
    d_ff = shape.d_ff
    return linear(silu(gate_up[..., :d_ff]) * gate_up[..., d_ff:], w["wd"])


def affine(x, w, b=None):
    """`linear`, then the bias when the family has one."""
    y = linear(x, w)
    return y if b is None else y + b


def linear(x, w):
    """x (B, n, d_in) @ w (d_in, d_out) as one (B * n)-row product: NumPy's stacked matmul
    calls the BLAS once per sequence, which throws away what batching the sequences buys."""
    xp = array_api_compat.array_namespace(x)
    b, n, d = x.shape
    return xp.reshape(xp.reshape(x, (b * n, d)) @ w, (b, n, w.shape[1]))


def split_heads(a, heads: int, d_head: int):
    """(B, n, heads * d_head) -> (B, heads, n, d_head)."""
    xp = array_api_compat.array_namespace(a)
    b, n, _ = a.shape
    return xp.permute_dims(xp.reshape(a, (b, n, heads, d_head)), (0, 2, 1, 3))


def merge_heads(a):
    """(B, heads, n, d_head) -> (B, n, heads * d_head)."""
    xp = array_api_compat.array_namespace(a)
    b, heads, n, d_head = a.shape
    return xp.reshape(xp.permute_dims(a, (0, 2, 1, 3)), (b, n, heads * d_head))


def _like(x, a):
    """NumPy array ``a`` on ``x``'s backend and device."""
    if isinstance(x, np.ndarray):
        return a
    import torch

    return torch.as_tensor(a, device=x.device)


def backend_of(x) -> dict[str, str]:
    """engine.attention's backend options for arrays like ``x``."""
    if isinstance(x, np.ndarray):
        return {"backend": "numpy"}
    return {"backend": "torch", "device": x.device.type}  # "cuda", not "cuda:0"


def _contiguous(x):
    if isinstance(x, np.ndarray):
        return np.ascontiguousarray(x)
    return x.contiguous()


def project_qkv(shape: Shape, w: dict[str, Any], x, cos, sin):
    """Queries, keys and values (B, heads, n, d_head), RoPE applied. Each query head gets its
    own copy of the key/value head it shares (grouped-query attention), so an edit on one
    query head's keys or values leaves the other heads of its group alone."""
    nh, nkv, dh = shape.n_heads, shape.n_kv_heads, shape.d_head
    qkv = affine(norm(shape, x, w, "attn_norm"), w["wqkv"], w.get("bqkv"))
    q_end, k_end = nh * dh, (nh + nkv) * dh
    q = split_heads(qkv[..., :q_end], nh, dh)
    k = split_heads(qkv[..., q_end:k_end], nkv, dh)
    v = split_heads(qkv[..., k_end:], nkv, dh)
    if shape.rope:
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
    # C order, the layout the forward has always handed engine.attention (and its goldens).
    q = _contiguous(q)
    kv_of = _like(x, np.arange(nh) // (nh // nkv))
    return q, k[:, kv_of], v[:, kv_of]


def causal_mask(heads: int, n: int) -> np.ndarray:
    """(heads, n, n) bool, one copy per head for the edits to change: row i reads keys 0..i."""
    return np.repeat(np.tril(np.ones((n, n), dtype=bool))[None], heads, axis=0)


def apply_head_edits(edits, layer: int, k, v, legal: np.ndarray, qpos: int) -> list[EditedHead]:
    """Each head's edits in one pass: its keys, values (B, heads, n, d_head) and mask
    (heads, n, n) changed in place, and what acts around its attention noted, per head."""
    return [
        edit_head(edits, layer, hd, k[:, hd], v[:, hd], legal[hd], qpos) for hd in range(len(legal))
    ]


@dataclass(frozen=True)
class _Rows:
    """Where one head's weights, scores and logits are: an engine.attention result and the
    head's index in it (None: the call was for this head alone). Read on demand, since the
    tiled kernel builds them only when asked."""

    result: Any
    index: int | None

    def get(self, name: str):
        """The head's (B, n_q, n) ``name`` array."""
        a = getattr(self.result, name)
        return a if self.index is None else a[:, self.index]


@dataclass
class Attended:
    """One layer's attention: every head's output and where its rows are."""

    out: Any  # (B, heads, n_q, d_head) on the forward's backend
    rows: list[_Rows]  # per head
    temperature: np.ndarray  # (heads,) as engine.attention applied it
    scale: float


def attend(q, k, v, legal: np.ndarray, heads: list[EditedHead], qpos: int) -> Attended:
    """Every head through engine.attention: one call for all heads of one temperature (with no
    temperature edit, one call per layer), then each rotated head again alone."""
    xp = array_api_compat.array_namespace(q)
    out = xp.empty(q.shape, dtype=q.dtype, device=array_api_compat.device(q))
    rows: list[_Rows] = [None] * len(heads)
    temperature = np.ones(len(heads))
    for t, idx in _by_temperature(heads):
        sel = _like(q, idx)
        opts = {"temperature": t, "fully_masked": "zero"} | backend_of(q)
        res = attention(q[:, sel], k[:, sel], v[:, sel], mask=_like(q, legal[idx]), **opts)
        out[:, sel] = res.output
        for j, hd in enumerate(idx):
            temperature[hd] = float(res.temperature)
            rows[hd] = _Rows(res, j)
            if heads[hd].degrees:
                weights = rows[hd].get("weights")
                one = _rotated(q, k, v, hd, legal[hd], weights, qpos, heads[hd].degrees, opts)
                out[:, hd] = one.output
                rows[hd] = _Rows(one, None)
    return Attended(out, rows, temperature, float(res.scale))


def _by_temperature(heads: list[EditedHead]) -> list[tuple[float, np.ndarray]]:
    """(temperature, head indices) for each distinct temperature, lowest first."""
    temps = np.array([h.temperature for h in heads])
    return [(float(t), np.flatnonzero(temps == t)) for t in np.unique(temps)]


def _rotated(q, k, v, hd, legal, weights, qpos, degrees, opts):
    """Head ``hd`` recomputed with each sequence's query row turned towards its top key."""
    # The turned row goes through float32, as it always has (a float64 model's row too).
    turn_query_rows(
        q[:, hd], k[:, hd], weights, qpos, degrees, lambda a: _like(q, a.astype(np.float32))
    )
    return attention(q[:, hd], k[:, hd], v[:, hd], mask=_like(q, legal), **opts)


def set_outputs(out, heads: list[EditedHead], replace, rows: slice):
    """The outputs that replace computed ones, in place: PatchHead's, zero for an ablated
    head, then ``replace[(b, head)]`` in sequence b (None: zero), cut to ``rows``."""
    for hd, head in enumerate(heads):
        if head.output is not None:
            out[:, hd] = _like(out, head.output)
    ablated = np.flatnonzero([h.ablated for h in heads])
    if ablated.size:
        out[:, _like(out, ablated)] = 0.0
    for (seq, hd), value in (replace or {}).items():
        out[seq, hd] = 0.0 if value is None else _like(out, np.asarray(value)[rows])


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
    q, k, v = project_qkv(shape, w, x, cos, sin)
    legal = causal_mask(shape.n_heads, x.shape[1])
    rows = slice(None)
    if query_only:
        if edits or detail:
            raise ValueError("query_only is for a layer without edits or records")
        rows = slice(qpos, qpos + 1)
        q, legal, x = q[:, :, rows], legal[:, rows], x[:, rows]
        qpos = 0
    heads = apply_head_edits(edits, layer, k, v, legal, qpos)
    att = attend(q, k, v, legal, heads, qpos)
    set_outputs(att.out, heads, replace, rows)
    x = x + affine(merge_heads(att.out), w["wo"], w.get("bo"))
    x = x + mlp(norm(shape, x, w, "ffn_norm"), w, shape)
    return x, (layer_detail(q, k, v, legal, heads, att, qpos) if detail else None)


def layer_detail(q, k, v, legal, heads: list[EditedHead], att: Attended, qpos: int) -> LayerDetail:
    """The first sequence's arrays on the host, as the page's records read them."""
    weights = np.empty((len(heads), *legal.shape[1:]), dtype=np.float32)
    for hd, found in enumerate(att.rows):
        weights[hd] = host(found.get("weights")[0])
    return LayerDetail(
        q=host(q[0]),
        k=host(k[0]),
        v=host(v[0]),
        scores=np.stack([host(found.get("scores")[0, qpos]) for found in att.rows]),
        logits=np.stack([host(found.get("logits")[0, qpos]) for found in att.rows]),
        weights=weights,
        out=host(att.out[0]),
        legal=legal,
        temperature=att.temperature,
        ablated=np.array([h.ablated for h in heads]),
        scale=att.scale,
    )


# ------------------------------------------------------------------------------- the model


def place(
    weights: dict[str, np.ndarray],
    be: Backend,
    max_tokens: int,
    shape: Shape,
    rope_base: float = 10000.0,
    rope_factors: np.ndarray | None = None,
):
    """The model's weights on ``be`` (`PlacedWeights`: torch on the CPU wraps the NumPy arrays
    without a copy, an accelerator gets one copy), each layer's LAYER_WEIGHTS as ``layers[i]``,
    and for rotary positions the tables for ``max_tokens`` positions as "cos" and "sin"."""
    tables = {}
    if shape.rope:
        cos, sin = rope_tables(max_tokens, shape.d_head, rope_base, rope_factors)
        tables = {"cos": cos, "sin": sin}
    return PlacedWeights.of({**weights, **tables}, be, LAYER_WEIGHTS)


def rope_rows(placed: PlacedWeights, n: int):
    """The rotary tables' first n rows, (None, None) for a model with learned positions."""
    if "cos" not in placed.w:
        return None, None
    return placed.w["cos"][:n], placed.w["sin"][:n]


def embed(placed: PlacedWeights, ids):
    """(1, n, d_model): the tokens' embeddings, plus positions 0..n-1 where they are learned."""
    x = placed.w["embed"][placed.index(ids)]
    if "pos_embed" in placed.w:
        x = x + placed.w["pos_embed"][: len(ids)]
    return x[None]


def output_matrix(w: dict[str, Any]):
    """(vocab, d_model): the file's output layer, or the token embedding where they are tied."""
    return w["output"] if "output" in w else w["embed"]


def forward(
    model, placed: PlacedWeights, ids, edits=(), start=0, resid=None, heads=None, query=None
):
    """One sentence ``ids`` (n,) through the model: a `Pass` with the residual stream, every
    head's record at position ``query`` (default: the last) and the next-token logits there.
    With ``start`` > 0, the layers below it come from ``resid`` and ``heads`` (a cached run)."""
    n = len(ids)
    qpos = n - 1 if query is None else int(query)
    if start == 0:
        x = embed(placed, ids)
        resid = [read_only(host(x[0]))]
        heads = {}
    else:
        resid = list(resid[: start + 1])
        heads = {lh: r for lh, r in heads.items() if lh[0] < start}
        x = placed.put(resid[start])[None]
    cos, sin = rope_rows(placed, n)
    for layer in range(start, model.n_layers):
        x, d = block(
            model.shape,
            placed.layers[layer],
            x,
            layer=layer,
            cos=cos,
            sin=sin,
            edits=edits,
            qpos=qpos,
            detail=True,
        )
        resid.append(read_only(host(x[0])))
        heads.update(head_records(model, layer, d, qpos))
    hf = norm(model.shape, x[0, qpos], placed.w, "norm")
    return Pass(resid, heads, read_only(host(output_matrix(placed.w) @ hf)), query=qpos)


def logits_everywhere(model, final) -> np.ndarray:
    """The next-token logits (n, vocab) at every position, from the residual stream after the
    last layer (n, d_model) on the host: the final norm, then the output matrix, in the
    weights' precision as the forward's own prediction is made."""
    x = np.asarray(final, dtype=model.w["embed"].dtype)
    return norm(model.shape, x, model.w, "norm") @ output_matrix(model.w).T


def head_records(model, layer: int, d: LayerDetail, qpos: int) -> dict:
    """{(layer, head): HeadRecord} from one layer's detail, read-only on the host."""
    n_heads, dh = model.shape.n_heads, model.shape.d_head
    wo = model.w[f"wo{layer}"]
    # Every head's whole pattern is kept in float32 (a long text's runs are large): a float16
    # copy would halve that, at the price of NumPy's slow cast on every forward.
    patterns = d.weights
    contributions = np.einsum("hd,hdm->hm", d.out[:, qpos], wo.reshape(n_heads, dh, -1))
    for a in (d.q, d.k, d.v, d.legal, d.out, d.weights, d.logits, d.scores, patterns):
        read_only(a)
    return {
        (layer, hd): HeadRecord(
            layer=layer,
            head=hd,
            q=d.q[hd, qpos],
            k=d.k[hd],
            v=d.v[hd],
            scores=d.scores[hd],
            logits=d.logits[hd],
            weights=d.weights[hd, qpos],
            output=d.out[hd, qpos],
            legal=d.legal[hd, qpos],
            scale_factor=d.scale,
            temperature=float(d.temperature[hd]),
            contribution=read_only(contributions[hd]),
            all_weights=patterns[hd],
            ablated=bool(d.ablated[hd]),
            all_outputs=d.out[hd],
        )
        for hd in range(n_heads)
    }


def replacement_logits(model, placed: PlacedWeights, run, requests, progress=None, cancel=None):
    """Next-token logits (len(requests), vocab): for each (layer, head, value), the run
    with that head's output at that layer replaced by ``value`` (None: zero), the run's
    edits kept and the layers below reused from the run (the causal and patching maps).

    Requests for later layers join the batch on its way up, so one pass through the upper
    layers carries every sequence started below them: the matrices see up to
    ``BATCH_ROWS`` rows at once instead of n. Without edits, the last layer computes the
    query row only (nothing reads the others)."""
    per_chunk = max(model.n_heads, BATCH_ROWS // len(run.ids))
    order = sorted(range(len(requests)), key=lambda i: requests[i][0])
    logits = [None] * len(requests)
    done, total = 0, sum(model.n_layers - requests[i][0] for i in order)

    def layer_done(at: int, sequences: int) -> None:
        nonlocal done
        done += sequences
        if progress is not None:
            progress(done / total, f"layer {at + 1} of {model.n_layers}")

    for first in range(0, len(order), per_chunk):
        chunk = order[first : first + per_chunk]
        outs = joined_pass(model, placed, run, [requests[i] for i in chunk], layer_done, cancel)
        for i, out in zip(chunk, outs, strict=True):
            logits[i] = out
    return np.stack(logits)


def joined_pass(model, placed: PlacedWeights, run, chunk, layer_done, cancel) -> np.ndarray:
    """Next-token logits (len(chunk), vocab) for requests sorted by layer, as one batch on
    its way up: each request's sequence joins at its layer, from the run's residual stream."""
    n = len(run.ids)
    cos, sin = rope_rows(placed, n)
    x, in_batch = None, 0
    for at in range(chunk[0][0], model.n_layers):
        if cancel is not None and cancel():
            raise Cancelled(f"stopped at layer {at}")
        joining = [(head, value) for layer, head, value in chunk if layer == at]
        if joining:
            start = placed.put(np.repeat(run.residual(at)[None], len(joining), 0))
            x = start if x is None else placed.concat(x, start)
        replace = {(in_batch + j, head): value for j, (head, value) in enumerate(joining)}
        in_batch += len(joining)
        x, _ = block(
            model.shape,
            placed.layers[at],
            x,
            layer=at,
            cos=cos,
            sin=sin,
            edits=run.edits,
            qpos=run.query_position,
            replace=replace,
            query_only=at == model.n_layers - 1 and not run.edits,
        )
        layer_done(at, in_batch)
    row = 0 if x.shape[1] == 1 else run.query_position
    hf = norm(model.shape, x[:, row], placed.w, "norm")
    return host(hf @ output_matrix(placed.w).T)
