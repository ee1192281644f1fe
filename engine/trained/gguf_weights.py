"""A GGUF model file's configuration, weights and tokenizer, read in NumPy, for the three families
the lab runs: Llama (``llama``: Llama 2 and 3, SmolLM, TinyLlama, Mistral-style files), Qwen2
(``qwen2``) and GPT-2 (``gpt2``).

``gguf`` parses the file and dequantises every tensor type it knows (F32, F16, BF16, Q8_0, Q4_0,
Q4_1, the K-quants...); the weights come back as read-only float32 (in, out) matrices in the
original model's row order, fused per layer as the forward (``decoder.py``) reads them. The file
is checked before anything is dequantised: that it is GGUF, complete, of a family the lab runs,
and small enough for the memory the operator allows. Each problem is a ValueError naming the file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .decoder import Shape

ARCHITECTURES = ("llama", "qwen2", "gpt2")
MB = 1 << 20


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
    arch: str = "llama"
    context: int = 0  # the file's context length (0: not stated)
    name: str = ""  # general.name, what the file calls its model

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    @property
    def shape(self) -> Shape:
        """The forward's `decoder.Shape` for this family."""
        gpt2 = self.arch == "gpt2"
        return Shape(
            self.n_heads,
            self.n_kv_heads,
            self.d_head,
            self.d_ff,
            self.eps,
            norm="layer" if gpt2 else "rms",
            mlp="gelu" if gpt2 else "swiglu",
            rope=not gpt2,
        )


def unpermute_rows(w: np.ndarray, n_heads: int) -> np.ndarray:
    """Undo llama.cpp's q/k row order. The converter interleaves each head's two halves so
    llama.cpp can rotate adjacent pairs; this puts them back in the original model's order,
    whose RoPE rotates dimension i with dimension i + d_head/2 (``rotate_half``)."""
    out, inp = w.shape
    half = out // n_heads // 2
    return w.reshape(n_heads, half, 2, inp).swapaxes(1, 2).reshape(out, inp)


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


class ModelFile:
    """One GGUF file opened and checked: its fields, its tensors by name and its `Config`."""

    def __init__(self, path: Path):
        import gguf

        self.path = Path(path)
        try:
            self.reader = gguf.GGUFReader(str(self.path))
        except (ValueError, IndexError, KeyError, OSError, EOFError) as exc:
            raise self.error(f"is not a complete GGUF file ({exc})") from None
        self.tensors = {t.name: t for t in self.reader.tensors}
        self.arch = str(self.field("general.architecture") or "")
        if self.arch not in ARCHITECTURES:
            named = repr(self.arch) if self.arch else "no architecture"
            raise self.error(
                f"holds {named}; the lab runs {', '.join(ARCHITECTURES)} (the Llama, Qwen2 "
                "and GPT-2 families)"
            )
        self.cfg = self._config()

    def error(self, problem: str) -> ValueError:
        return ValueError(f"{self.path.name}: {problem}")

    def field(self, key: str):
        """The field's contents, or None when the file does not have it."""
        found = self.reader.fields.get(key)
        return None if found is None else found.contents()

    def need(self, key: str):
        value = self.field(key)
        if value is None:
            raise self.error(f"lacks the field {key!r}, which a {self.arch} model needs")
        return value

    def tensor(self, name: str):
        if name not in self.tensors:
            raise self.error(f"lacks the tensor {name!r}, which a {self.arch} model needs")
        return self.tensors[name]

    def _config(self) -> Config:
        a = self.arch + "."
        n_heads = int(self.need(a + "attention.head_count"))
        n_kv = self.field(a + "attention.head_count_kv")
        d_model = int(self.need(a + "embedding_length"))
        eps_key = (
            "attention.layer_norm_epsilon"
            if self.arch == "gpt2"
            else ("attention.layer_norm_rms_epsilon")
        )
        cfg = Config(
            n_layers=int(self.need(a + "block_count")),
            d_model=d_model,
            n_heads=n_heads,
            n_kv_heads=n_heads if n_kv is None else int(n_kv),
            d_ff=int(self.need(a + "feed_forward_length")),
            vocab=int(self.tensor("token_embd.weight").shape[-1]),
            rope_base=float(self.field(a + "rope.freq_base") or 10000.0),
            eps=float(self.need(a + eps_key)),
            arch=self.arch,
            context=int(self.field(a + "context_length") or 0),
            name=str(self.field("general.name") or ""),
        )
        self._check_shape(cfg)
        return cfg

    def _check_shape(self, cfg: Config) -> None:
        a = self.arch + "."
        d_head = self.field(a + "attention.key_length")
        rope_dims = self.field(a + "rope.dimension_count")
        if cfg.d_model % cfg.n_heads or (d_head is not None and int(d_head) != cfg.d_head):
            raise self.error(
                f"has heads of {d_head} dimensions with {cfg.n_heads} heads over a "
                f"{cfg.d_model}-wide stream; the lab runs heads that split the stream evenly"
            )
        if cfg.n_heads % cfg.n_kv_heads:
            raise self.error(
                f"shares {cfg.n_kv_heads} key/value heads among {cfg.n_heads} query heads, "
                "which do not divide evenly"
            )
        if cfg.arch != "gpt2" and rope_dims is not None and int(rope_dims) != cfg.d_head:
            raise self.error(
                f"rotates {rope_dims} of each head's {cfg.d_head} dimensions; the lab runs "
                "rotary positions over the whole head"
            )

    def float32_mb(self) -> float:
        """What the weights take as float32 arrays, the form the lab runs them in."""
        return sum(int(t.n_elements) for t in self.reader.tensors) * 4 / MB

    def check_size(self, max_mb: float | None) -> None:
        size = self.float32_mb()
        if max_mb is not None and size > max_mb:
            raise self.error(
                f"needs about {_mb(size)} MB as float32 weights; this lab allows {_mb(max_mb)} MB "
                "(the operator's --max-model-mb)"
            )

    def dequantised(self, name: str) -> np.ndarray:
        import gguf

        t = self.tensor(name)
        try:
            data = gguf.quants.dequantize(t.data, t.tensor_type)
        except (ValueError, NotImplementedError) as exc:
            raise self.error(
                f"stores {name} as {t.tensor_type.name}, which gguf cannot read ({exc})"
            ) from None
        return np.asarray(data, dtype=np.float32)

    def maybe(self, name: str) -> np.ndarray | None:
        return _frozen(self.dequantised(name)) if name in self.tensors else None


def _mb(size: float) -> str:
    """Megabytes as a person reads them: 1,234 or 0.25."""
    return f"{size:,.0f}" if size >= 10 else f"{size:.2g}"


# ------------------------------------------------------------------------ each family's layers


def _qkv(f: ModelFile, p: str) -> dict[str, np.ndarray]:
    """wqkv = [q | k | v] (and Qwen2's bqkv) from separate q, k, v tensors; Llama files have
    their q and k rows in llama.cpp's order, which is undone."""
    cfg = f.cfg
    wq, wk, wv = (f.dequantised(f"{p}attn_{m}.weight") for m in "qkv")
    if cfg.arch == "llama":
        wq, wk = unpermute_rows(wq, cfg.n_heads), unpermute_rows(wk, cfg.n_kv_heads)
    out = {"wqkv": np.concatenate([wq, wk, wv]).T}
    biases = [f"{p}attn_{m}.bias" for m in "qkv"]
    if all(b in f.tensors for b in biases):
        out["bqkv"] = np.concatenate([f.dequantised(b) for b in biases])
    return out


def _llama_layer(f: ModelFile, i: int) -> dict[str, np.ndarray]:
    p = f"blk.{i}."
    return _qkv(f, p) | {
        "wo": f.dequantised(p + "attn_output.weight").T,
        "wgu": np.concatenate(
            [f.dequantised(p + "ffn_gate.weight"), f.dequantised(p + "ffn_up.weight")]
        ).T,
        "wd": f.dequantised(p + "ffn_down.weight").T,
        "attn_norm": f.dequantised(p + "attn_norm.weight"),
        "ffn_norm": f.dequantised(p + "ffn_norm.weight"),
    }


def _gpt2_layer(f: ModelFile, i: int) -> dict[str, np.ndarray]:
    p = f"blk.{i}."
    names = {
        "wqkv": "attn_qkv.weight",
        "bqkv": "attn_qkv.bias",
        "wo": "attn_output.weight",
        "bo": "attn_output.bias",
        "wup": "ffn_up.weight",
        "bup": "ffn_up.bias",
        "wd": "ffn_down.weight",
        "bd": "ffn_down.bias",
        "attn_norm": "attn_norm.weight",
        "attn_norm_b": "attn_norm.bias",
        "ffn_norm": "ffn_norm.weight",
        "ffn_norm_b": "ffn_norm.bias",
    }
    out = {key: f.dequantised(p + name) for key, name in names.items()}
    return out | {key: out[key].T for key in ("wqkv", "wo", "wup", "wd")}


def _model_weights(f: ModelFile) -> dict[str, np.ndarray]:
    """The weights outside the layers: embedding, final norm, output layer, positions."""
    w = {"embed": f.maybe("token_embd.weight"), "norm": f.maybe("output_norm.weight")}
    if w["norm"] is None:
        f.tensor("output_norm.weight")  # names the missing tensor
    w["norm_b"] = f.maybe("output_norm.bias")
    w["pos_embed"] = f.maybe("position_embd.weight")
    # A file whose output layer is a copy of the embedding (GPT-2's converter writes one) is
    # tied: the copy would only double the memory.
    if "output.weight" in f.tensors:
        output = f.maybe("output.weight")
        if not np.array_equal(output, w["embed"]):
            w["output"] = output
    if f.cfg.arch == "gpt2" and w["pos_embed"] is None:
        f.tensor("position_embd.weight")
    return {key: a for key, a in w.items() if a is not None}


def read_gguf(
    path: Path,
    progress: Callable[[float, str], None] | None = None,
    max_mb: float | None = None,
):
    """(config, weights, tokenizer, rope factors or None) from a GGUF file; ValueError naming the
    file for one the lab cannot run. Linear weights come back as float32 (in, out) matrices,
    fused per layer (wqkv = [q | k | v]; wgu = [gate | up]). Float32 storage: float16 halved it
    but cast every matrix on every forward, which was 60% of SmolLM2's forward time."""
    from .tokenizer import from_gguf

    report = progress or (lambda fraction, message: None)
    report(0.0, "opening the GGUF file")
    f = ModelFile(path)
    f.check_size(max_mb)
    cfg = f.cfg
    report(0.01, "building the tokenizer")
    try:
        tokenizer = from_gguf(f.field, cfg.vocab)
    except ValueError as exc:  # a vocabulary the lab cannot rebuild: say which file
        raise f.error(str(exc)) from None
    report(0.04, "reading the token embedding")
    w = _model_weights(f)
    layer = _gpt2_layer if cfg.arch == "gpt2" else _llama_layer
    for i in range(cfg.n_layers):
        report(0.06 + 0.9 * i / cfg.n_layers, f"dequantising layer {i + 1} of {cfg.n_layers}")
        w |= {f"{key}{i}": _frozen(a) for key, a in layer(f, i).items()}
    factors = f.maybe("rope_freqs.weight")
    return cfg, w, tokenizer, factors
