"""SmolLM2's tokenizer, rebuilt from its GGUF's vocabulary and merges with ``tokenizers``, and
how each token is shown (a token holding part of a UTF-8 character shows its bytes)."""

from __future__ import annotations

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


# ------------------------------------------------------------------ any GGUF file's tokenizer

BYTE_TOKEN = 6  # GGUF token type of SentencePiece's "<0xNN>" byte-fallback tokens
USER_DEFINED = 4  # GGUF token type of an added token matched whole, like "<think>"

# llama.cpp's pre-tokenizer regexes (src/llama-vocab.cpp, llm_tokenizer_bpe): each one splits the
# pieces the one before it left, keeping what it does not match, as a Split "isolated" does.
GPT2_SPLIT = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
LLAMA3_SPLIT = (
    r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+"
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2_SPLIT = (
    r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
PRE_SPLITS: dict[str, tuple[str, ...]] = {
    "gpt-2": (GPT2_SPLIT,),
    # llama.cpp's "default" (also what it uses for a file with no pre-tokenizer name)
    "default": (r"[\p{P}\$\+<=>\^~\|]+", GPT2_SPLIT, r"\p{N}+", r"[0-9][0-9][0-9]"),
    "llama-bpe": (LLAMA3_SPLIT,),
    "llama3": (LLAMA3_SPLIT,),
    "llama-v3": (LLAMA3_SPLIT,),
    "qwen2": (QWEN2_SPLIT,),
    "deepseek-r1-qwen": (QWEN2_SPLIT,),
    "smollm": (r"\p{N}", GPT2_SPLIT),  # single digits, then GPT-2's
}
# Llama 3's vocabulary is used whole when a word is one token (llama.cpp's ignore_merges), and
# llama.cpp adds its BOS unless the file says otherwise.
LLAMA3_FAMILY = frozenset({"llama-bpe", "llama3", "llama-v3"})


def pre_splits(pre: str | None) -> tuple[str, ...]:
    """The regexes llama.cpp splits text with for the file's ``tokenizer.ggml.pre``. A name
    this table does not know falls back to GPT-2's (llama.cpp would use its "default", which
    also cuts punctuation runs apart: GPT-2's is what most byte-level vocabularies were
    trained with)."""
    if not pre:
        return PRE_SPLITS["default"]
    return PRE_SPLITS.get(pre, PRE_SPLITS["gpt-2"])


def _byte_level(tokens, merges, types, pre):
    """A byte-level BPE (``tokenizer.ggml.model`` "gpt2") split the way llama.cpp splits."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    vocab = {t: i for i, t in enumerate(tokens)}
    pairs = [tuple(m.split(" ", 1)) for m in merges]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=pairs, ignore_merges=pre in LLAMA3_FAMILY))
    splits = [pre_tokenizers.Split(Regex(r), behavior="isolated") for r in pre_splits(pre)]
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [*splits, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    )
    tok.decoder = decoders.ByteLevel()
    return tok


def spm_merges(tokens: list[str], scores: list[float]) -> list[tuple[str, str]]:
    """BPE merges equivalent to SentencePiece's scores (as transformers' GGUF converter derives
    them): every split of a piece into two pieces of the vocabulary, the higher the piece's
    score the earlier its merge (llama.cpp merges the adjacent pair whose join scores best)."""
    vocab = set(tokens)
    found = []
    for rank, (piece, score) in enumerate(zip(tokens, scores, strict=True)):
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in vocab and right in vocab:
                found.append((-score, rank, cut, left, right))
    return [(left, right) for *_, left, right in sorted(found)]


def _sentencepiece(tokens, scores, unk_id):
    """A SentencePiece vocabulary (``tokenizer.ggml.model`` "llama") as a BPE over characters,
    bytes falling back to "<0xNN>", spaces written "▁" and one "▁" put in front, as llama.cpp
    does (add_space_prefix): "  hi" becomes "▁▁▁hi"."""
    from tokenizers import Tokenizer, decoders, models, normalizers

    vocab = {t: i for i, t in enumerate(tokens)}
    unk = tokens[unk_id] if unk_id is not None else None
    model = models.BPE(
        vocab=vocab, merges=spm_merges(tokens, scores), unk_token=unk, byte_fallback=True
    )
    model.fuse_unk = True
    tok = Tokenizer(model)
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
    )
    return tok


def _spm_shown(piece: str, kind: int) -> str:
    """A SentencePiece token as the lab shows it: "▁" as a space, a byte token as its
    character when the byte is one (ASCII), else as "<0xNN>"."""
    if kind == BYTE_TOKEN and len(piece) == 6 and piece.startswith("<0x"):
        byte = int(piece[3:5], 16)
        return chr(byte) if byte < 0x80 else piece
    return piece.replace("▁", " ")


def _holds_stray_bytes(piece: str) -> bool:
    """Whether a byte-level token holds part of a character (its bytes are not UTF-8)."""
    if not piece or not all(c in BYTE_DECODER for c in piece):
        return False
    try:
        bytes(BYTE_DECODER[c] for c in piece).decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _byte_level_shown(piece: str) -> str:
    """A byte-level token as the lab shows it (``readable``): stray bytes of a character split
    over tokens as "<0xNN>"; a token outside the byte alphabet (a control token) as written."""
    if piece and all(c in BYTE_DECODER for c in piece):
        return readable(bytes(BYTE_DECODER[c] for c in piece))
    return piece


class GGUFTokenizer:
    """The tokenizer a GGUF file describes, as llama.cpp runs it: ``encode`` (with the BOS
    when the file asks for one), ``encode_with_offsets``, ``decode``, ``texts`` (each id as
    the lab shows it), ``bos_id``, ``eos_id``, ``id_of_text`` and ``inner`` (the
    ``tokenizers.Tokenizer``, which never adds the BOS itself)."""

    def __init__(self, inner, kind: str, texts, bos_id, eos_id, add_bos, control, by_bytes):
        self.inner = inner
        self.kind = kind  # "gpt2" (byte-level BPE) or "llama" (SentencePiece)
        self.texts: list[str] = texts
        self.bos_id: int | None = bos_id
        self.eos_id: int | None = eos_id
        self.add_bos: bool = bool(add_bos and bos_id is not None)
        self._control = frozenset(control)
        # A token shown by its bytes ("<0xF0><0x9F>") is no text to encode: look it up here.
        self._shown_by_bytes = {texts[i]: i for i in by_bytes}

    def __len__(self) -> int:
        return len(self.texts)

    def encode(self, text: str) -> list[int]:
        return self.encode_with_offsets(text)[0]

    def encode_with_offsets(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Ids and each one's (start, end) characters in ``text``; the BOS gets (0, 0)."""
        enc = self.inner.encode(text, add_special_tokens=False)
        ids, spans = list(enc.ids), [tuple(o) for o in enc.offsets]
        if self.kind == "llama" and ids and self.inner.id_to_token(ids[0]) == "▁":
            spans[0] = (0, 0)  # the space put in front stands for no character of the text
        if self.add_bos:
            ids, spans = [self.bos_id, *ids], [(0, 0), *spans]
        return ids, spans

    def decode(self, ids) -> str:
        """The text of ``ids``, control tokens written out; SentencePiece's leading space (the
        one ``encode`` puts in front) is taken off again."""
        ids = [int(i) for i in ids]
        if self.kind != "llama":
            return self.inner.decode(ids, skip_special_tokens=False)
        lead = 0
        while lead < len(ids) and ids[lead] in self._control:
            lead += 1
        head = "".join(self.texts[i] for i in ids[:lead])
        body = self.inner.decode(ids[lead:], skip_special_tokens=False)
        return head + (body[1:] if body.startswith(" ") else body)

    def id_of_text(self, text: str) -> int | None:
        """The id of a token shown by its bytes (see ``texts``), else None."""
        return self._shown_by_bytes.get(text)


def _field_list(field, key) -> list:
    value = field(key)
    return [] if value is None else list(value)


def from_gguf(field, vocab_size: int) -> GGUFTokenizer:
    """The tokenizer of a GGUF file, from ``field(key)`` (a field's contents, or None when the
    file has no such key). ``vocab_size`` is the embedding's rows: the token list must match."""
    kind = field("tokenizer.ggml.model")
    tokens = _field_list(field, "tokenizer.ggml.tokens")
    if len(tokens) != vocab_size:
        raise ValueError(f"the file lists {len(tokens)} tokens for {vocab_size} embedding rows")
    types = _field_list(field, "tokenizer.ggml.token_type") or [1] * len(tokens)
    bos, eos = field("tokenizer.ggml.bos_token_id"), field("tokenizer.ggml.eos_token_id")
    add_bos = field("tokenizer.ggml.add_bos_token")
    pre = field("tokenizer.ggml.pre")
    if kind == "gpt2":
        inner = _byte_level(tokens, _field_list(field, "tokenizer.ggml.merges"), types, pre)
        texts = [_byte_level_shown(t) for t in tokens]
        by_bytes = [i for i, t in enumerate(tokens) if _holds_stray_bytes(t)]
        default_bos = pre in LLAMA3_FAMILY
    elif kind == "llama":
        scores = _field_list(field, "tokenizer.ggml.scores") or [0.0] * len(tokens)
        unk = field("tokenizer.ggml.unknown_token_id")
        inner = _sentencepiece(tokens, scores, 0 if unk is None else int(unk))
        texts = [_spm_shown(t, k) for t, k in zip(tokens, types, strict=True)]
        by_bytes = [i for i, t in enumerate(texts) if t == tokens[i] and types[i] == BYTE_TOKEN]
        default_bos = True
    else:
        raise ValueError(
            f"tokenizer {kind!r} is not one the lab reads: byte-level BPE ('gpt2') or "
            "SentencePiece ('llama')"
        )
    control = [i for i, k in enumerate(types) if k == CONTROL_TOKEN]
    _add_whole_tokens(inner, tokens, types)
    return GGUFTokenizer(
        inner,
        kind,
        texts,
        None if bos is None else int(bos),
        None if eos is None else int(eos),
        default_bos if add_bos is None else bool(add_bos),
        control,
        by_bytes,
    )


def _add_whole_tokens(inner, tokens: list[str], types: list[int]) -> None:
    """Control tokens ("<|endoftext|>") and user-defined ones ("<think>") are matched whole in
    the text, as llama.cpp does, never cut into pieces."""
    from tokenizers import AddedToken

    kinds = list(zip(tokens, types, strict=True))
    special = [
        AddedToken(t, special=True, normalized=False) for t, k in kinds if k == CONTROL_TOKEN
    ]
    user = [AddedToken(t, special=False, normalized=False) for t, k in kinds if k == USER_DEFINED]
    if special:
        inner.add_special_tokens(special)
    if user:
        inner.add_tokens(user)
