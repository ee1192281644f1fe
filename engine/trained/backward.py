"""Gradients for the trained models (the decoder families and the binding model): d metric / d (every head's output at every position).

``metric`` is a linear function of the next-token logits at the query position, given as its
gradient ``seed`` (d metric / d logits): the attribution map's log P(answer) (`log_prob_seed`) or
the patching map's difference of two logits (`difference_seed`). A head's output is what the
causal map zeroes and the patching map replaces: its attention output before W_O, (n, d_head) per
head, so the gradient has the shape (layers, heads, n, d_head).

Reverse mode, one layer at a time from the top: each layer's activations are recomputed from the
run's residual stream entering it (the run keeps it), then its backward runs and they are
dropped, so memory holds one layer at a time and the forward in ``decoder.py`` and ``binding.py``
stays as it is. Only activations get gradients, never weights, so a layer's backward costs about
one forward of it. Everything goes through the arrays' own namespace (``array_api_compat``), as
the forward does: the same lines run on NumPy and on torch tensors on any device.

Only unedited runs: attribution linearises the model around the clean run (or the corrupted run
of a patching map), and an edit (a mask, a rotation, a temperature) would need its own backward.
"""

from __future__ import annotations

import array_api_compat
import numpy as np

from ..backends import host
from ..core import attention
from . import decoder
from .norms import LN_EPS, layer_norm

# ------------------------------------------------------------------------------------ seeds


def log_prob_seed(logits: np.ndarray, index: int) -> np.ndarray:
    """d log softmax(logits)[index] / d logits = onehot(index) - softmax(logits), float64."""
    z = np.asarray(logits, dtype=np.float64)
    p = np.exp(z - z.max())
    seed = -p / p.sum()
    seed[index] += 1.0
    return seed


def difference_seed(size: int, good: int, bad: int) -> np.ndarray:
    """d (log P(good) - log P(bad)) / d logits: the log-sum-exp cancels, leaving two logits."""
    seed = np.zeros(size)
    seed[good], seed[bad] = 1.0, -1.0
    return seed


# ------------------------------------------------------------------------ backward of each piece


def _xp(x):
    return array_api_compat.array_namespace(x)


VOCAB_CHUNK = 128  # rows of the embedding per partial sum in `vocabulary_backward`


def vocabulary_backward(seed, embed):
    """d h for logits = h @ embed^T: seed (vocab,) @ embed (vocab, d), the one reduction here
    over the whole vocabulary (49,152 terms for SmolLM2), summed one chunk of VOCAB_CHUNK rows
    at a time and then over the chunks. Why: torch's float32 product on the CPU adds the terms
    with about 16 times NumPy's rounding error (measured on SmolLM2's embedding), which left
    torch's gradients at five times NumPy float32's error; in chunks of 128 the two match."""
    xp = _xp(embed)
    vocab, d = embed.shape
    whole = vocab - vocab % VOCAB_CHUNK
    chunks = whole // VOCAB_CHUNK
    partials = xp.reshape(seed[:whole], (chunks, 1, VOCAB_CHUNK)) @ xp.reshape(
        embed[:whole], (chunks, VOCAB_CHUNK, d)
    )
    total = xp.sum(xp.reshape(partials, (chunks, d)), axis=0)
    return total + seed[whole:] @ embed[whole:] if whole < vocab else total


def linear_backward(dy, w):
    """d x for y = x @ w, with x (B, n, d_in): dy @ w^T."""
    return decoder.linear(dy, _xp(dy).matrix_transpose(w))


def rms_norm_backward(x, weight, eps: float, dy):
    """d x for y = x * r * weight, r = 1 / sqrt(mean(x^2) + eps) along the last axis."""
    xp = _xp(x)
    g = dy * weight
    r = 1.0 / xp.sqrt(xp.mean(x * x, axis=-1, keepdims=True) + eps)
    return r * g - x * r**3 * xp.mean(x * g, axis=-1, keepdims=True)


def layer_norm_backward(x, weight, eps: float, dy):
    """d x for y = (x - mean) / sqrt(var + eps) * weight + bias along the last axis."""
    xp = _xp(x)
    g = dy * weight
    centred = x - xp.mean(x, axis=-1, keepdims=True)
    inv = 1.0 / xp.sqrt(xp.mean(centred * centred, axis=-1, keepdims=True) + eps)
    normed = centred * inv
    mean_g = xp.mean(g, axis=-1, keepdims=True)
    return inv * (g - mean_g - normed * xp.mean(g * normed, axis=-1, keepdims=True))


def rope_backward(dy, cos, sin):
    """d x for y = x * cos + rotate_half(x) * sin: rotate_half's transpose turns the other way."""
    xp = _xp(dy)
    half = dy.shape[-1] // 2
    s = dy * sin
    return dy * cos + xp.concat([s[..., half:], -s[..., :half]], axis=-1)


def norm_backward(shape: decoder.Shape, x, w: dict, name: str, dy):
    """d x through `decoder.norm` with the weights called ``name`` (a shift has no say in it)."""
    if shape.norm == "layer":
        return layer_norm_backward(x, w[name], shape.eps, dy)
    return rms_norm_backward(x, w[name], shape.eps, dy)


def gelu_backward(x, dy):
    """d x for GPT-2's y = 0.5 x (1 + tanh(c (x + 0.044715 x^3)))."""
    xp = _xp(x)
    t = xp.tanh(decoder.GELU_C * (x + 0.044715 * x * x * x))
    slope = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * decoder.GELU_C * (1.0 + 0.134145 * x * x)
    return dy * slope


def silu_backward(x, dy):
    """d x for y = x * sigmoid(x)."""
    xp = _xp(x)
    sig = 1.0 / (1.0 + xp.exp(-x))
    return dy * sig * (1.0 + x * (1.0 - sig))


def attention_backward(q, k, v, weights, factor: float, d_out):
    """(dq, dk, dv) for out = softmax(factor * q k^T, masked) @ v, given its weights (B, H, n, n).
    A masked key has weight 0, so it gets no gradient: the softmax Jacobian w (delta - w) is
    zero on its row and column."""
    xp = _xp(q)
    d_weights = d_out @ xp.matrix_transpose(v)
    d_logits = weights * (d_weights - xp.sum(d_weights * weights, axis=-1, keepdims=True))
    d_logits = d_logits * factor
    return d_logits @ k, xp.matrix_transpose(d_logits) @ q, xp.matrix_transpose(weights) @ d_out


def _causal_attention(q, k, v, options: dict):
    """engine.attention with the forward's causal mask (every row has a key: no edits)."""
    return attention(q, k, v, is_causal=True, **options)


def _factor(result) -> float:
    return result.scale / result.temperature


# ------------------------------------------------------------------------ the decoder block


def block_backward(shape: decoder.Shape, w: dict, x, cos, sin, d_next):
    """One unedited decoder block, backwards: (d x, d head outputs (B, heads, n, d_head)) from
    d x_next, its activations recomputed from x (B, n, d_model)."""
    xp = _xp(x)
    q, k, v = decoder.project_qkv(shape, w, x, cos, sin)
    att = _causal_attention(q, k, v, decoder.backend_of(x))
    x_mid = x + decoder.affine(decoder.merge_heads(att.output), w["wo"], w.get("bo"))
    d_mid = d_next + mlp_backward(shape, w, x_mid, d_next)
    d_out = decoder.split_heads(linear_backward(d_mid, w["wo"]), shape.n_heads, shape.d_head)
    dq, dk, dv = attention_backward(q, k, v, att.weights, _factor(att), d_out)
    # Each query head read its own copy of a shared key/value head: the copies' gradients add.
    dk, dv = _sum_over_groups(dk, shape), _sum_over_groups(dv, shape)
    if shape.rope:
        dq, dk = rope_backward(dq, cos, sin), rope_backward(dk, cos, sin)
    merged = [decoder.merge_heads(d) for d in (dq, dk, dv)]
    dh = linear_backward(xp.concat(merged, axis=-1), w["wqkv"])
    return d_mid + norm_backward(shape, x, w, "attn_norm", dh), d_out


def mlp_backward(shape: decoder.Shape, w: dict, x_mid, dy):
    """d x_mid through the feed-forward branch only, mlp(norm(x_mid)) (the residual adds dy)."""
    xp = _xp(x_mid)
    h = decoder.norm(shape, x_mid, w, "ffn_norm")
    d_act = linear_backward(dy, w["wd"])
    if shape.mlp == "gelu":
        pre = decoder.affine(h, w["wup"], w.get("bup"))
        dh = linear_backward(gelu_backward(pre, d_act), w["wup"])
    else:
        gate_up = decoder.linear(h, w["wgu"])
        gate, up = gate_up[..., : shape.d_ff], gate_up[..., shape.d_ff :]
        d_gate = silu_backward(gate, d_act * up)
        d_up = d_act * decoder.silu(gate)
        dh = linear_backward(xp.concat([d_gate, d_up], axis=-1), w["wgu"])
    return norm_backward(shape, x_mid, w, "ffn_norm", dh)


def _sum_over_groups(d, shape: decoder.Shape):
    """(B, heads, n, d_head) -> (B, kv_heads, n, d_head): query head h read kv head h // group."""
    xp = _xp(d)
    b, heads, n, dh = d.shape
    grouped = xp.reshape(d, (b, shape.n_kv_heads, heads // shape.n_kv_heads, n, dh))
    return xp.sum(grouped, axis=2)


def decoder_head_gradients(model, run, seed: np.ndarray) -> np.ndarray:
    """d (seed . logits) / d every head's output in an unedited run of a decoder model (Llama,
    Qwen2, GPT-2): (layers, heads, n, d_head) on the host."""
    _refuse_edits(run)
    n, qpos, shape = len(run.ids), run.query_position, model.shape
    with model.running_on(run.backend) as placed:
        cos, sin = decoder.rope_rows(placed, n)
        dtype = run.residual(0).dtype  # the model's own precision (float32)
        top = placed.put(run.residual(model.n_layers)[qpos])
        d_hf = vocabulary_backward(placed.put(seed.astype(dtype)), decoder.output_matrix(placed.w))
        d_top = norm_backward(shape, top, placed.w, "norm", d_hf)
        d_x = _at_row(placed.put(np.zeros((1, n, model.d_model), dtype)), qpos, d_top)
        grads = [None] * model.n_layers
        for layer in reversed(range(model.n_layers)):
            x = placed.put(run.residual(layer))[None]
            w = placed.layers[layer]
            d_x, d_out = block_backward(shape, w, x, cos, sin, d_x)
            grads[layer] = host(d_out[0])
    return np.stack(grads)


def _at_row(zeros, row: int, value):
    """``zeros`` (1, n, d) with row ``row`` set to ``value`` (d,)."""
    zeros[0, row] = value
    return zeros


def _refuse_edits(run) -> None:
    if run.edits:
        raise ValueError(
            "gradients are taken on an unedited run (the edits would need their own backward): "
            f"this run has {len(run.edits)} edit(s)"
        )


# -------------------------------------------------------------------------- the binding model


def binding_layer_backward(model, w: dict, layer: int, x, d_next, options: dict):
    """One unedited attention-only layer of the binding model, backwards: (d x, d head outputs
    (B, heads, n, d_head)) from d x_next, its activations recomputed from x (B, n, d_model)."""
    heads, dh = model.n_heads, model.d_head
    h = layer_norm(x, w[f"ln{layer}.weight"], w[f"ln{layer}.bias"])
    q, k, v = (decoder.split_heads(h @ w[f"{m}{layer}"], heads, dh) for m in ("wq", "wk", "wv"))
    att = _causal_attention(q, k, v, options)
    d_out = decoder.split_heads(linear_backward(d_next, w[f"wo{layer}"]), heads, dh)
    dq, dk, dv = attention_backward(q, k, v, att.weights, _factor(att), d_out)
    dh_total = sum(
        linear_backward(decoder.merge_heads(d), w[f"{m}{layer}"])
        for d, m in ((dq, "wq"), (dk, "wk"), (dv, "wv"))
    )
    return d_next + layer_norm_backward(x, w[f"ln{layer}.weight"], LN_EPS, dh_total), d_out


def binding_head_gradients(model, run, seed: np.ndarray) -> np.ndarray:
    """d (seed . answer logits) / d every head's output in an unedited run of the binding
    model: (layers, heads, n, d_head) on the host."""
    _refuse_edits(run)
    n, qpos = len(run.ids), run.query_position
    with model.running_on(run.backend) as placed:
        w = placed.w
        top = placed.put(run.residual(model.n_layers)[qpos])
        d_hf = placed.put(seed) @ _xp(top).matrix_transpose(w["unembed.weight"])
        d_top = layer_norm_backward(top, w["ln_f.weight"], LN_EPS, d_hf)
        d_x = _at_row(placed.put(np.zeros((1, n, model.d_model))), qpos, d_top)
        grads = [None] * model.n_layers
        for layer in reversed(range(model.n_layers)):
            x = placed.put(run.residual(layer))[None]
            options = placed.attention_options
            d_x, d_out = binding_layer_backward(model, w, layer, x, d_x, options)
            grads[layer] = host(d_out[0])
    return np.stack(grads)
