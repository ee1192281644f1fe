"""SmolLM2's configuration, weights and tokenizer read from its GGUF file, in NumPy.

``gguf`` dequantises the tensors; the weights come back as read-only float32 (in, out) matrices
in the original model's row order, fused per layer as the forward (``llama.py``) reads them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .tokenizer import build_tokenizer


@dataclass(frozen=True)
class Config:
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    d_ff: int
    vocab: int
    rope_base: float
    eps: float

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads


def unpermute_rows(w: np.ndarray, n_heads: int) -> np.ndarray:
    """Undo llama.cpp's q/k row order. The converter interleaves each head's two halves so
    llama.cpp can rotate adjacent pairs; this puts them back in the original model's order,
    whose RoPE rotates dimension i with dimension i + d_head/2 (``rotate_half``)."""
    out, inp = w.shape
    half = out // n_heads // 2
    return w.reshape(n_heads, half, 2, inp).swapaxes(1, 2).reshape(out, inp)


def _config(field: Callable[[str], object]) -> Config:
    return Config(
        n_layers=int(field("llama.block_count")),
        d_model=int(field("llama.embedding_length")),
        n_heads=int(field("llama.attention.head_count")),
        n_kv_heads=int(field("llama.attention.head_count_kv")),
        d_ff=int(field("llama.feed_forward_length")),
        vocab=int(field("llama.vocab_size")),
        rope_base=float(field("llama.rope.freq_base")),
        eps=float(field("llama.attention.layer_norm_rms_epsilon")),
    )


def _frozen(a: np.ndarray) -> np.ndarray:
    """``a`` as a read-only C-ordered float32 array of our own."""
    # A view of the memory-mapped file (an F32 tensor) would keep all its pages resident:
    # copy those; a dequantised array is already our own, so cast it without a second copy.
    base = a
    while isinstance(base, np.ndarray) and not isinstance(base, np.memmap):
        base = base.base
    a = np.array(a, dtype=np.float32, order="C", copy=True if base is not None else None)
    a.setflags(write=False)
    return a


def _layer(deq: Callable[[str], np.ndarray], cfg: Config, i: int) -> dict[str, np.ndarray]:
    """Layer i's weights as the forward reads them: wqkv = [q | k | v], wgu = [gate | up]."""
    p = f"blk.{i}."
    wq = unpermute_rows(deq(p + "attn_q.weight"), cfg.n_heads)
    wk = unpermute_rows(deq(p + "attn_k.weight"), cfg.n_kv_heads)
    wv = deq(p + "attn_v.weight")
    return {
        f"wqkv{i}": _frozen(np.concatenate([wq, wk, wv]).T),
        f"wo{i}": _frozen(deq(p + "attn_output.weight").T),
        f"wgu{i}": _frozen(
            np.concatenate([deq(p + "ffn_gate.weight"), deq(p + "ffn_up.weight")]).T
        ),
        f"wd{i}": _frozen(deq(p + "ffn_down.weight").T),
        f"attn_norm{i}": _frozen(deq(p + "attn_norm.weight")),
        f"ffn_norm{i}": _frozen(deq(p + "ffn_norm.weight")),
    }


def read_gguf(path: Path, progress: Callable[[float, str], None] | None = None):
    """(config, weights, tokenizer) from the GGUF. Linear weights come back as float32
    (in, out) matrices, fused per layer: wqkv = [q | k | v], wgu = [gate | up]. Float32 storage
    is 540 MB; float16 halved that but cast every matrix on every forward, which was 60% of a
    forward's time (316 of 559 ms for 16 tokens)."""
    import gguf

    report = progress or (lambda fraction, message: None)
    report(0.0, "opening the GGUF file")
    reader = gguf.GGUFReader(str(path))

    def field(key):
        return reader.fields[key].contents()

    cfg = _config(field)
    tensors = {t.name: t for t in reader.tensors}
    if "output.weight" in tensors:
        raise ValueError("this GGUF has a separate output layer; the reader expects a tied one")

    def deq(name: str) -> np.ndarray:
        t = tensors[name]
        return np.asarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float32)

    report(0.02, "reading the token embedding")
    w = {"embed": _frozen(deq("token_embd.weight")), "norm": _frozen(deq("output_norm.weight"))}
    for i in range(cfg.n_layers):
        report(0.05 + 0.9 * i / cfg.n_layers, f"dequantising layer {i + 1} of {cfg.n_layers}")
        w |= _layer(deq, cfg, i)
    report(0.96, "building the tokenizer")
    tokenizer = build_tokenizer(
        list(field("tokenizer.ggml.tokens")),
        list(field("tokenizer.ggml.merges")),
        list(field("tokenizer.ggml.token_type")),
    )
    return cfg, w, tokenizer
