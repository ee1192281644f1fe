"""engine.trained.random_gguf writes files that Hugging Face transformers reads as the model the
writer was asked for: its config, its weights in the original row order (Llama's q/k
permutation undone the way transformers undoes llama.cpp's), non-flat attention; the keys and
tensor types are the converter's; bad requests are a clear ValueError."""

from __future__ import annotations

import logging

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")
pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")
pytest.importorskip("accelerate")

from engine.trained.random_gguf import permute, write_random  # noqa: E402

# name: (architecture, options); GPT-2 at context 1024 (see test_documented_gpt2_context)
CASES = {
    "llama-bpe-F32-gqa-untied": ("llama", dict(n_kv_heads=2, tied=False)),
    "llama-spm-Q8_0": ("llama", dict(tokenizer="spm", qtype="Q8_0")),
    "llama-bpe-Q4_1-rope": ("llama", dict(qtype="Q4_1", rope_factors=[1.0, 2.0, 4.0, 8.0] * 2)),
    "qwen2-bpe-Q4_0-gqa": ("qwen2", dict(n_kv_heads=1, qtype="Q4_0")),
    "qwen2-bpe-BF16-untied": ("qwen2", dict(qtype="BF16", tied=False)),
    "gpt2-bpe-F16": ("gpt2", dict(qtype="F16", context=1024)),
    "gpt2-bpe-F32": ("gpt2", dict(context=1024, n_layers=3)),
}


def _reader(path):
    return gguf.GGUFReader(str(path))


def _deq(reader, name) -> np.ndarray:
    t = next(t for t in reader.tensors if t.name == name)
    return np.asarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float32)


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """name -> (path, options, transformers' model); each file read once."""
    folder = tmp_path_factory.mktemp("random_gguf")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    out = {}
    for name, (arch, options) in CASES.items():
        path = write_random(folder / f"{name}.gguf", arch, **options)
        model = transformers.AutoModelForCausalLM.from_pretrained(
            folder, gguf_file=path.name, attn_implementation="eager"
        )
        transformers.AutoTokenizer.from_pretrained(folder, gguf_file=path.name)
        out[name] = (path, arch, options, model.eval())
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_transformers_config_is_what_the_writer_was_given(loaded, name):
    path, arch, options, model = loaded[name]
    c = model.config
    n_heads = 4
    vocab = len(_reader(path).fields["tokenizer.ggml.tokens"].contents())
    assert c.model_type == arch
    assert c.num_hidden_layers == options.get("n_layers", 2)
    assert c.num_attention_heads == n_heads and c.hidden_size == 64 and c.vocab_size == vocab
    if arch == "gpt2":
        assert c.n_inner in (None, 256) and c.n_positions == 1024
    else:
        assert c.num_key_value_heads == options.get("n_kv_heads", n_heads)
        assert c.intermediate_size == 128
    assert model.get_input_embeddings().weight.shape == (vocab, 64)


@pytest.mark.parametrize("name", list(CASES))
def test_weights_in_the_original_order(loaded, name):
    """transformers undoes llama.cpp's layout its own way; its weights must equal the file's
    read back the converter's way: Llama's q/k rows un-permuted, GPT-2's Conv1D transposed."""
    path, arch, options, model = loaded[name]
    reader = _reader(path)
    nh, nkv = 4, options.get("n_kv_heads", 4)
    emb = model.get_input_embeddings().weight.detach().numpy()
    assert np.array_equal(emb, _deq(reader, "token_embd.weight"))
    if arch == "gpt2":
        block = model.transformer.h[0]
        qkv = block.attn.c_attn.weight.detach().numpy()
        assert np.array_equal(qkv, _deq(reader, "blk.0.attn_qkv.weight").T)
        return
    attn = model.model.layers[0].self_attn
    q, k = _deq(reader, "blk.0.attn_q.weight"), _deq(reader, "blk.0.attn_k.weight")
    if arch == "llama":
        # the converter's permutation, applied to transformers' rows, gives the file's rows
        q_hf = permute(attn.q_proj.weight.detach().numpy(), nh)
        k_hf = permute(attn.k_proj.weight.detach().numpy(), nkv)
    else:
        q_hf, k_hf = attn.q_proj.weight.detach().numpy(), attn.k_proj.weight.detach().numpy()
        bias = attn.q_proj.bias.detach().numpy()
        assert np.array_equal(bias, _deq(reader, "blk.0.attn_q.bias"))
    assert np.array_equal(q_hf, q) and np.array_equal(k_hf, k)
    untied = not options.get("tied", True)
    head = model.get_output_embeddings().weight.detach().numpy()
    assert np.array_equal(head, _deq(reader, "output.weight" if untied else "token_embd.weight"))


def test_permute_is_the_converters():
    """Head h's rows [a0 a1 .. b0 b1 ..] (rotate_half's two halves) become [a0 b0 a1 b1 ..]."""
    w = np.arange(8, dtype=np.float32).reshape(8, 1)
    assert permute(w, 2).ravel().tolist() == [0, 2, 1, 3, 4, 6, 5, 7]


@pytest.mark.parametrize("name", ["llama-bpe-F32-gqa-untied", "qwen2-bpe-Q4_0-gqa", "gpt2-bpe-F32"])
def test_attention_is_not_flat(loaded, name):
    """Scaled like an initialised model: some head's weights are far from uniform."""
    _, _, _, model = loaded[name]
    ids = torch.arange(3, 19).unsqueeze(0)
    with torch.no_grad():
        out = model(ids, output_attentions=True)
    assert torch.isfinite(out.logits).all()
    last = out.attentions[-1][0, :, -1, :]  # (heads, keys) at the last of 16 positions
    assert last.max().item() > 3 / 16


@pytest.mark.parametrize("name", list(CASES))
def test_keys_and_tensor_types_are_the_converters(loaded, name):
    path, arch, options, _ = loaded[name]
    reader = _reader(path)
    keys = set(reader.fields)
    p = arch + "."
    common = ["block_count", "context_length", "embedding_length", "feed_forward_length"]
    assert {"general.architecture", "general.name", "general.file_type"} <= keys
    assert {p + k for k in [*common, "attention.head_count"]} <= keys
    if arch == "gpt2":
        assert p + "attention.layer_norm_epsilon" in keys and p + "rope.freq_base" not in keys
    else:
        assert {p + "attention.head_count_kv", p + "rope.freq_base"} <= keys
        assert p + "attention.layer_norm_rms_epsilon" in keys
    assert (p + "rope.dimension_count" in keys) == (arch == "llama")
    qtype = gguf.GGMLQuantizationType[options.get("qtype", "F32")]
    names = {t.name: t for t in reader.tensors}
    for t in reader.tensors:
        want = gguf.GGMLQuantizationType.F32 if len(t.shape) == 1 else qtype
        assert t.tensor_type == want, t.name
    assert ("output.weight" in names) == (not options.get("tied", True))
    assert ("rope_freqs.weight" in names) == ("rope_factors" in options)
    assert ("blk.0.attn_q.bias" in names) == (arch == "qwen2")
    assert ("position_embd.weight" in names) == (arch == "gpt2")


def test_same_seed_same_file_other_seed_other_weights(tmp_path):
    a = write_random(tmp_path / "a.gguf", "qwen2", n_layers=1, seed=3)
    b = write_random(tmp_path / "b.gguf", "qwen2", n_layers=1, seed=3)
    c = write_random(tmp_path / "c.gguf", "qwen2", n_layers=1, seed=4)
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    assert len(a.read_bytes()) == len(c.read_bytes())


def test_documented_gpt2_context(tmp_path):
    """transformers sizes GPT-2's position table from n_positions (1024 by default) and ignores
    gpt2.context_length, so it refuses a GPT-2 file of any other context; llama.cpp reads it."""
    path = write_random(tmp_path / "short.gguf", "gpt2", n_layers=1, context=64)
    assert _deq(_reader(path), "position_embd.weight").shape == (64, 64)
    logging.getLogger("transformers").setLevel(logging.CRITICAL)
    with pytest.raises(RuntimeError, match="mismatch"):
        transformers.AutoModelForCausalLM.from_pretrained(tmp_path, gguf_file=path.name)


@pytest.mark.parametrize(
    ("arch", "options", "message"),
    [
        ("mamba", {}, "not one of llama, qwen2, gpt2"),
        ("llama", {"qtype": "Q5_K"}, "gguf cannot quantise it"),
        ("llama", {"qtype": "Q9"}, "unknown"),
        ("llama", {"n_kv_heads": 3}, "do not share"),
        ("gpt2", {"n_kv_heads": 2}, "no grouped-query"),
        ("gpt2", {"d_ff": 128}, "4 x d_model"),
        ("qwen2", {"rope_factors": [1.0] * 8}, "llama only"),
        ("llama", {"rope_factors": [1.0] * 3}, "needs 8 values"),
        ("llama", {"tokenizer": "wordpiece"}, "'bpe' or 'spm'"),
    ],
)
def test_bad_requests_are_a_clear_value_error(tmp_path, arch, options, message):
    with pytest.raises(ValueError, match=message):
        write_random(tmp_path / "bad.gguf", arch, **options)
