"""Tiny random GGUF models of the three architectures the lab opens (Llama, Qwen2, GPT-2), laid
out exactly as llama.cpp's converter (``convert_hf_to_gguf.py``) writes a real one, with
``gguf``'s writer. The tests hold the lab against Hugging Face transformers reading the same
file, and ``tools/bench_lm.py`` writes a GPT-2-small-sized one, so nothing is downloaded.

>>> from engine.trained.random_gguf import write_random
>>> path = write_random(tmp / "tiny.gguf", "qwen2", n_kv_heads=2, qtype="Q8_0")

The weights are random but seeded and scaled like an initialised model (each matrix's entries
~ N(0, gain^2 / fan_in), norms near 1), so attention patterns are not flat. The tokenizer is a
real one, trained here deterministically on a small multilingual corpus (``CORPUS``): a
byte-level BPE (``tokenizer="bpe"``, every one of the 256 bytes a token, so any text encodes) or
a SentencePiece-style vocabulary (``tokenizer="spm"``, with Llama 2's "<unk>", "<s>", "</s>" and
"<0xNN>" byte tokens).

Choices where the converter leaves room: a tied GPT-2 writes no ``output.weight`` (today's
converter; those of 2024 wrote a copy of ``token_embd``, so a reader must accept both), and an
untied one of any architecture writes its own random ``output.weight``. ``rope.dimension_count``
is written for Llama only, as the converter does.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from .tokenizer import pre_splits

ARCHITECTURES = ("llama", "qwen2", "gpt2")
QTYPES = ("F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q4_K", "Q6_K")
# gguf cannot quantise the K-quants in NumPy: their blocks are drawn at random instead (each
# block's bytes random, its float16 scales set so the weights come out about initialisation's
# size). (bytes per 256 weights, {byte offset of a float16 scale: its value}).
K_BLOCKS = {"Q4_K": (144, {0: 2e-4, 2: 1e-3}), "Q6_K": (210, {208: 1e-4})}
DEFAULT_PRE = {"llama": "llama-bpe", "qwen2": "qwen2", "gpt2": "gpt-2"}
# Each family's control tokens, as its real files name them: (tokens, bos, eos).
SPECIALS = {
    "gpt-2": (["<|endoftext|>"], 0, 0),
    "qwen2": (["<|endoftext|>", "<|im_start|>", "<|im_end|>"], 0, 0),
    "llama-bpe": (["<|begin_of_text|>", "<|end_of_text|>"], 0, 1),
    "smollm": (["<|endoftext|>", "<|im_start|>", "<|im_end|>"], 1, 2),
}
BPE_MERGES = 300
SPM_MERGES = 300
NORMAL, UNKNOWN, CONTROL, UNUSED, BYTE = 1, 2, 3, 5, 6  # GGUF token types

# Fixed, so the trained vocabularies never change: English, Spanish, Chinese, Arabic, digits,
# code and emoji, each line several times over so its common pairs are merged.
CORPUS = (
    "The capital of France is Paris. The bank approved the loan because it was safe.\n"
    "Attention is a weighted average: the query meets every key, and the values are mixed.\n"
    "It is what it is, and that's why we're here; they'll see what I've done.\n"
    "El niño comió una manzana en la mañana. ¿Dónde está la estación? Año nuevo, vida nueva.\n"
    "La atención es un promedio ponderado de los valores.\n"
    "我们的模型很小。注意力机制是加权平均。今天天气很好。\n"
    "مرحبا بالعالم. الانتباه هو متوسط مرجح للقيم.\n"
    "In 2024 there were 12345 tokens, 3.14159 radians and 1000000 steps; call 555-0199.\n"
    "def attention(q, k, v):\n    w = softmax(q @ k.T / sqrt(d))\n    return w @ v\n"
    "for i in range(10):\n    print(i, i ** 2)  # squares\n"
    "Emoji: 🙂 😀 👍 🎉 🚀 — all good!\n"
)


def _corpus_lines() -> list[str]:
    return [line for line in CORPUS.splitlines(keepends=True) for _ in range(4)]


def _merge_pairs(tokenizer) -> list[tuple[str, str]]:
    """A trained ``tokenizers`` BPE's merges, in rank order (strings or pairs by version)."""
    merges = json.loads(tokenizer.to_str())["model"]["merges"]
    return [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in merges]


@lru_cache(maxsize=8)
def bpe_vocabulary(pre: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[int, ...], int, int]:
    """(tokens, merges, token types, bos id, eos id) of a byte-level BPE trained on ``CORPUS``
    with llama.cpp's split for ``pre``: the 256 byte characters, the merged tokens, then the
    family's control tokens (at the start for SmolLM, at the end for the others)."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    splits = [pre_tokenizers.Split(Regex(r), behavior="isolated") for r in pre_splits(pre)]
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [*splits, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    )
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(
        vocab_size=len(alphabet) + BPE_MERGES, initial_alphabet=alphabet, show_progress=False
    )
    tok.train_from_iterator(_corpus_lines(), trainer=trainer)
    learned = sorted(tok.get_vocab().items(), key=lambda kv: kv[1])
    tokens = [t for t, _ in learned]
    merges = [f"{a} {b}" for a, b in _merge_pairs(tok)]
    specials, bos, eos = SPECIALS.get(pre, SPECIALS["gpt-2"])
    first = pre == "smollm"
    types = [NORMAL] * len(tokens)
    if first:
        tokens, types = [*specials, *tokens], [CONTROL] * len(specials) + types
        offset = 0
    else:
        offset = len(tokens)
        tokens, types = [*tokens, *specials], types + [CONTROL] * len(specials)
    return tuple(tokens), tuple(merges), tuple(types), offset + bos, offset + eos


@lru_cache(maxsize=1)
def spm_vocabulary() -> tuple[tuple[str, ...], tuple[float, ...], tuple[int, ...]]:
    """(tokens, scores, token types) of a SentencePiece-style vocabulary trained on ``CORPUS``,
    in Llama 2's order: "<unk>", "<s>", "</s>", the 256 "<0xNN>" byte tokens, the merged pieces
    (the earlier the merge the higher the score), then the single characters."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    trainer = trainers.BpeTrainer(vocab_size=10_000, limit_alphabet=1000, show_progress=False)
    tok.train_from_iterator([" ".join(_corpus_lines()).replace("\n", " ")], trainer=trainer)
    pairs = _merge_pairs(tok)[:SPM_MERGES]
    merged = list(dict.fromkeys(a + b for a, b in pairs))
    chars = sorted({t for t in tok.get_vocab() if len(t) == 1})
    pieces = [*merged, *chars]
    tokens = ["<unk>", "<s>", "</s>", *(f"<0x{b:02X}>" for b in range(256)), *pieces]
    scores = [0.0] * 259 + [-float(i) for i in range(len(pieces))]
    types = [UNKNOWN, CONTROL, CONTROL, *[BYTE] * 256, *[NORMAL] * len(pieces)]
    return tuple(tokens), tuple(scores), tuple(types)


def _padded(tokens, types, size: int | None):
    """The vocabulary grown to ``size`` with unused tokens (a real model's vocabulary is tens of
    thousands of tokens: the benchmark's GPT-2-small-sized file has GPT-2's 50,257 rows)."""
    if size is None or size <= len(tokens):
        return list(tokens), list(types)
    extra = size - len(tokens)
    return [*tokens, *(f"<|unused_{i}|>" for i in range(extra))], [*types, *[UNUSED] * extra]


def _write_tokenizer(
    writer, arch: str, tokenizer: str, pre: str | None, add_bos, size: int | None = None
) -> int:
    """The tokenizer keys as the converter writes them; returns the vocabulary's size."""
    if tokenizer == "spm":
        tokens, scores, types = spm_vocabulary()
        writer.add_tokenizer_model("llama")
        writer.add_tokenizer_pre("default")
        writer.add_token_list(list(tokens))
        writer.add_token_scores(list(scores))
        writer.add_token_types(list(types))
        writer.add_bos_token_id(1)
        writer.add_eos_token_id(2)
        writer.add_unk_token_id(0)
        writer.add_add_bos_token(True if add_bos is None else bool(add_bos))
    elif tokenizer == "bpe":
        pre = pre or DEFAULT_PRE[arch]
        tokens, merges, types, bos, eos = bpe_vocabulary(pre)
        tokens, types = _padded(tokens, types, size)
        writer.add_tokenizer_model("gpt2")
        writer.add_tokenizer_pre(pre)
        writer.add_token_list(list(tokens))
        writer.add_token_types(list(types))
        writer.add_token_merges(list(merges))
        writer.add_bos_token_id(bos)
        writer.add_eos_token_id(eos)
        writer.add_add_bos_token(False if add_bos is None else bool(add_bos))
    else:
        raise ValueError(f"tokenizer {tokenizer!r} is not 'bpe' or 'spm'")
    writer.add_add_eos_token(False)
    return len(tokens)


def _qtype(qtype: str):
    """The ggml type of the 2-D weights, or a ValueError naming what can be written."""
    import gguf

    if qtype not in QTYPES:
        known = qtype in gguf.GGMLQuantizationType.__members__
        why = "gguf cannot quantise it in NumPy (it only dequantises it)" if known else "unknown"
        raise ValueError(f"qtype {qtype!r}: {why}; write one of {', '.join(QTYPES)}")
    return gguf.GGMLQuantizationType[qtype]


def _file_type(qtype: str) -> int:
    import gguf

    names = {"F32": "ALL_F32", "F16": "MOSTLY_F16", "BF16": "MOSTLY_BF16", "Q4_K": "MOSTLY_Q4_K_M"}
    return int(gguf.LlamaFileType[names.get(qtype, f"MOSTLY_{qtype}")])


def permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's converter's row order for q and k (``LlamaModel.permute``): each head's two
    halves interleaved, so llama.cpp can rotate adjacent pairs."""
    return (
        w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
        .swapaxes(1, 2)
        .reshape(w.shape)
    )


class _Draw:
    """Seeded random tensors scaled like an initialised model."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def matrix(self, rows: int, cols: int, gain: float = 1.0) -> np.ndarray:
        return (self.rng.standard_normal((rows, cols)) * gain / np.sqrt(cols)).astype(np.float32)

    def norm(self, n: int) -> np.ndarray:
        return (1.0 + 0.1 * self.rng.standard_normal(n)).astype(np.float32)

    def bias(self, n: int) -> np.ndarray:
        return (0.1 * self.rng.standard_normal(n)).astype(np.float32)


def _llama_block(draw: _Draw, arch: str, shape: dict) -> dict[str, np.ndarray]:
    """One Llama or Qwen2 block in the converter's names; Llama's q and k rows permuted."""
    d, dh, nh, nkv, ff = (shape[k] for k in ("d", "dh", "nh", "nkv", "ff"))
    wq, wk = draw.matrix(nh * dh, d, 1.5), draw.matrix(nkv * dh, d, 1.5)
    out = {"attn_norm.weight": draw.norm(d)}
    if arch == "llama":
        out |= {"attn_q.weight": permute(wq, nh), "attn_k.weight": permute(wk, nkv)}
    else:
        out |= {"attn_q.weight": wq, "attn_q.bias": draw.bias(nh * dh)}
        out |= {"attn_k.weight": wk, "attn_k.bias": draw.bias(nkv * dh)}
    out["attn_v.weight"] = draw.matrix(nkv * dh, d)
    if arch == "qwen2":
        out["attn_v.bias"] = draw.bias(nkv * dh)
    return out | {
        "attn_output.weight": draw.matrix(d, nh * dh),
        "ffn_norm.weight": draw.norm(d),
        "ffn_gate.weight": draw.matrix(ff, d),
        "ffn_up.weight": draw.matrix(ff, d),
        "ffn_down.weight": draw.matrix(d, ff),
    }


def _gpt2_block(draw: _Draw, shape: dict) -> dict[str, np.ndarray]:
    """One GPT-2 block: HF's Conv1D weights transposed to (out, in) as the converter does."""
    d, ff = shape["d"], shape["ff"]
    return {
        "attn_norm.weight": draw.norm(d),
        "attn_norm.bias": draw.bias(d),
        "attn_qkv.weight": np.concatenate(
            [draw.matrix(d, d, 1.5), draw.matrix(d, d, 1.5), draw.matrix(d, d)]
        ),
        "attn_qkv.bias": draw.bias(3 * d),
        "attn_output.weight": draw.matrix(d, d),
        "attn_output.bias": draw.bias(d),
        "ffn_norm.weight": draw.norm(d),
        "ffn_norm.bias": draw.bias(d),
        "ffn_up.weight": draw.matrix(ff, d),
        "ffn_up.bias": draw.bias(ff),
        "ffn_down.weight": draw.matrix(d, ff),
        "ffn_down.bias": draw.bias(d),
    }


def random_tensors(arch: str, shape: dict, seed: int) -> dict[str, np.ndarray]:
    """Every tensor of the model, float32, in the converter's names and (out, in) layout."""
    draw = _Draw(seed)
    d, vocab = shape["d"], shape["vocab"]
    out = {"token_embd.weight": draw.matrix(vocab, d, 2.0)}
    if arch == "gpt2":
        out["position_embd.weight"] = draw.matrix(shape["context"], d, 2.0)
    for i in range(shape["layers"]):
        block = _gpt2_block(draw, shape) if arch == "gpt2" else _llama_block(draw, arch, shape)
        out |= {f"blk.{i}.{name}": w for name, w in block.items()}
    out["output_norm.weight"] = draw.norm(d)
    if arch == "gpt2":
        out["output_norm.bias"] = draw.bias(d)
    if not shape["tied"]:
        out["output.weight"] = draw.matrix(vocab, d, 2.0)
    if shape["rope_factors"] is not None:
        out["rope_freqs.weight"] = np.asarray(shape["rope_factors"], dtype=np.float32)
    return out


def _add_tensor(writer, name: str, w: np.ndarray, qtype) -> None:
    """A 2-D weight in ``qtype`` (F16 where its rows do not fill whole blocks, as the converter
    falls back); norms, biases and rope factors stay F32 as the converter keeps them."""
    import gguf

    if w.ndim == 1 or qtype == gguf.GGMLQuantizationType.F32:
        writer.add_tensor(name, w)
        return
    if qtype.name in K_BLOCKS and w.shape[1] % 256 == 0:
        writer.add_tensor(name, _k_blocks(w, qtype.name), raw_dtype=qtype)
        return
    try:
        if qtype.name in K_BLOCKS:  # rows shorter than a block of 256
            raise gguf.QuantError(qtype.name)
        data = gguf.quants.quantize(w, qtype)
    except gguf.QuantError:
        qtype = gguf.GGMLQuantizationType.F16
        data = gguf.quants.quantize(w, qtype)
    writer.add_tensor(name, data, raw_dtype=qtype)


def _k_blocks(w: np.ndarray, qtype: str) -> np.ndarray:
    """(rows, bytes) of random K-quant blocks for a matrix of ``w``'s shape, seeded by its
    values (the same model gives the same bytes)."""
    size, scales = K_BLOCKS[qtype]
    rng = np.random.default_rng(zlib.crc32(w.tobytes()))
    blocks = rng.integers(0, 256, (w.shape[0], w.shape[1] // 256, size), dtype=np.uint8)
    for at, value in scales.items():
        blocks[..., at : at + 2] = np.frombuffer(np.float16(value).tobytes(), np.uint8)
    return blocks.reshape(w.shape[0], -1)


def _write_config(writer, arch: str, shape: dict, rope_base: float, qtype: str) -> None:
    """The hyperparameter keys under the converter's names for ``arch``."""
    import gguf

    writer.add_name(f"random-{arch}")
    writer.add_block_count(shape["layers"])
    writer.add_context_length(shape["context"])
    writer.add_embedding_length(shape["d"])
    writer.add_feed_forward_length(shape["ff"])
    writer.add_head_count(shape["nh"])
    if arch == "gpt2":
        writer.add_layer_norm_eps(1e-5)
    else:
        writer.add_head_count_kv(shape["nkv"])
        writer.add_rope_freq_base(float(rope_base))
        writer.add_layer_norm_rms_eps(1e-5 if arch == "llama" else 1e-6)
    if arch == "llama":
        writer.add_vocab_size(shape["vocab"])
        writer.add_rope_dimension_count(shape["dh"])
    writer.add_file_type(_file_type(qtype))
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)


def _check(arch, d_model, n_heads, n_kv_heads, rope_factors) -> None:
    if arch not in ARCHITECTURES:
        raise ValueError(f"architecture {arch!r} is not one of {', '.join(ARCHITECTURES)}")
    if d_model % n_heads or (d_model // n_heads) % 2:
        raise ValueError(f"d_model {d_model} does not split into {n_heads} heads of even size")
    if n_heads % n_kv_heads:
        raise ValueError(f"{n_heads} query heads do not share {n_kv_heads} key/value heads")
    if arch == "gpt2" and n_kv_heads != n_heads:
        raise ValueError("GPT-2 has no grouped-query attention: leave n_kv_heads out")
    if rope_factors is not None and arch != "llama":
        raise ValueError("rope_factors (Llama 3's rope_freqs.weight) is for llama only")
    if rope_factors is not None and len(rope_factors) != d_model // n_heads // 2:
        raise ValueError(f"rope_factors needs {d_model // n_heads // 2} values, one a pair")


def write_random(
    path,
    arch: str,
    *,
    n_layers: int = 2,
    d_model: int = 64,
    n_heads: int = 4,
    n_kv_heads: int | None = None,
    d_ff: int | None = None,
    context: int = 64,
    tokenizer: str = "bpe",
    pre: str | None = None,
    tied: bool = True,
    qtype: str = "F32",
    rope_base: float = 10000.0,
    rope_factors: Sequence[float] | None = None,
    seed: int = 0,
    add_bos: bool | None = None,
    vocab_size: int | None = None,
) -> Path:
    """Write a random ``arch`` model ("llama", "qwen2" or "gpt2") to ``path`` and return it.
    ``pre`` names the byte-level BPE's pre-tokenizer (default: "llama-bpe", "qwen2" or "gpt-2"
    by architecture); ``add_bos`` defaults to True for "spm" and False for "bpe"; ``d_ff``
    defaults to 128, and for GPT-2 must be 4 x d_model (its default). transformers reads a GPT-2
    file's position table only at context=1024 (it ignores ``gpt2.context_length``).
    ``vocab_size`` pads a byte-level BPE vocabulary with unused tokens up to that size."""
    import gguf

    n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
    d_ff = (4 * d_model if arch == "gpt2" else 128) if d_ff is None else d_ff
    _check(arch, d_model, n_heads, n_kv_heads, rope_factors)
    if arch == "gpt2" and d_ff != 4 * d_model:
        # The converter writes 4 * n_embd whatever the checkpoint says: GPT-2's MLP is 4x wide.
        raise ValueError(f"GPT-2's feed-forward is 4 x d_model ({4 * d_model}), not {d_ff}")
    ggml_type = _qtype(qtype)
    path = Path(path)
    writer = gguf.GGUFWriter(str(path), arch)
    vocab = _write_tokenizer(writer, arch, tokenizer, pre, add_bos, vocab_size)
    shape = {
        "layers": n_layers, "d": d_model, "nh": n_heads, "nkv": n_kv_heads,
        "dh": d_model // n_heads, "ff": d_ff, "context": context, "vocab": vocab,
        "tied": tied, "rope_factors": rope_factors,
    }  # fmt: skip
    _write_config(writer, arch, shape, rope_base, qtype)
    for name, w in random_tensors(arch, shape, seed).items():
        _add_tensor(writer, name, w, ggml_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
