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
