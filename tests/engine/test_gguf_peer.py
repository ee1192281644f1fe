"""Every architecture the lab opens from a GGUF file, held against Hugging Face transformers
reading the same file: every head's attention, the logits at every position, an ablated head's
logits and every head's gradient, under PyTorch's tolerance rule (engine/tolerance.py) with
transformers in float64 as the golden and in float32 as the reference.

The files are tiny random models (engine/trained/random_gguf.py) in several storage types, with
grouped heads, biases, tied and untied output layers and both kinds of tokenizer. transformers
is an independent implementation of the three families: its own GGUF reading (and its own undoing
of llama.cpp's q/k row order), its own RoPE, norms, GELU and attention.
"""

from __future__ import annotations

import pytest

pytest.importorskip("gguf")
pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

import numpy as np  # noqa: E402

from engine.tolerance import check_close  # noqa: E402
from engine.trained import AblateHead  # noqa: E402
from engine.trained.gguf_model import load_file  # noqa: E402
from engine.trained.random_gguf import write_random  # noqa: E402

TEXT = "The bank approved the loan because it was safe. El niño comió 12345"

# (id, arch, options): each family with and without its variations.
CASES = [
    ("llama-gqa-tied-f32", "llama", {"n_heads": 4, "n_kv_heads": 2}),
    ("llama-spm-untied-q8", "llama", {"tokenizer": "spm", "tied": False, "qtype": "Q8_0"}),
    ("llama-bf16-3layers", "llama", {"n_layers": 3, "qtype": "BF16", "n_kv_heads": 1}),
    ("qwen2-gqa-tied-f16", "qwen2", {"n_heads": 4, "n_kv_heads": 2, "qtype": "F16"}),
    ("qwen2-untied-q4_0", "qwen2", {"tied": False, "qtype": "Q4_0"}),
    # K-quant blocks (drawn at random: gguf cannot write them) need rows of 256 weights.
    ("qwen2-q4_k", "qwen2", {"d_model": 256, "d_ff": 256, "qtype": "Q4_K", "n_kv_heads": 2}),
    ("llama-q6_k", "llama", {"d_model": 256, "d_ff": 512, "qtype": "Q6_K"}),
    # transformers reads a GPT-2 file's position table only at its usual 1024 positions.
    ("gpt2-tied-f32", "gpt2", {"context": 1024}),
    ("gpt2-q4_1", "gpt2", {"context": 1024, "qtype": "Q4_1", "seed": 3}),
]


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def pair(request, tmp_path_factory):
    """(our model, transformers' float64 model, its float32 twin) of one random file."""
    name, arch, options = request.param
    path = write_random(tmp_path_factory.mktemp(name) / f"{name}.gguf", arch, **options)
    ours = load_file(path, name=name)
    auto = transformers.AutoModelForCausalLM
    peer = auto.from_pretrained(
        str(path.parent), gguf_file=path.name, attn_implementation="eager", dtype=torch.float32
    ).eval()
    golden = auto.from_pretrained(
        str(path.parent), gguf_file=path.name, attn_implementation="eager", dtype=torch.float64
    ).eval()
    return ours, golden, peer


def _head_inputs(peer) -> list:
    """Each layer's module whose input is every head's output side by side (before W_O)."""
    if hasattr(peer, "transformer"):
        return [block.attn.c_proj for block in peer.transformer.h]
    return [layer.self_attn.o_proj for layer in peer.model.layers]


def _peer_pass(peer, ids, ablate=None, keep=None):
    """transformers' forward: (attentions (layers, heads, n, n), logits (n, vocab)), with head
    ``ablate`` = (layer, head) zeroed before W_O, and ``keep`` (a list) receiving each layer's
    head outputs with their gradients retained."""
    d_head = peer.config.hidden_size // peer.config.num_attention_heads
    hooks = []
    for layer, module in enumerate(_head_inputs(peer)):

        def hook(_module, args, layer=layer):
            x = args[0]
            if ablate is not None and ablate[0] == layer:
                x = x.clone()
                x[..., ablate[1] * d_head : (ablate[1] + 1) * d_head] = 0.0
            if keep is not None:
                x.retain_grad()
                keep.append(x)
            return (x, *args[1:])

        hooks.append(module.register_forward_pre_hook(hook))
    try:
        out = peer(torch.tensor([ids]), output_attentions=True)
    finally:
        for h in hooks:
            h.remove()
    return out


def _as_numpy(out):
    attentions = np.stack([a[0].detach().numpy() for a in out.attentions])
    return attentions, out.logits[0].detach().numpy()


def test_every_heads_attention_and_every_positions_logits_match_transformers(pair):
    ours, golden, peer = pair
    run = ours.run(TEXT)
    ids = list(run.ids)
    gold_att, gold_logits = _as_numpy(_peer_pass(golden, ids))
    ref_att, ref_logits = _as_numpy(_peer_pass(peer, ids))
    att = np.stack(
        [
            np.stack([run.head(layer, head).all_weights for head in range(ours.n_heads)])
            for layer in range(ours.n_layers)
        ]
    )
    assert check_close(att, gold_att, ref_att).passed
    logits = ours.logits_everywhere(run.residual(ours.n_layers))
    assert check_close(logits, gold_logits, ref_logits).passed
    assert check_close(run.logits, gold_logits[-1], ref_logits[-1]).passed
    # The test can fail: another file's weights would not pass (a shifted text does not).
    assert not check_close(logits[1:], gold_logits[:-1], ref_logits[:-1]).passed


def test_an_ablated_head_matches_transformers_with_that_head_zeroed(pair):
    ours, golden, peer = pair
    run = ours.run(TEXT)
    for layer, head in [(0, 0), (ours.n_layers - 1, ours.n_heads - 1)]:
        cut = run.intervene(AblateHead(layer, head))
        gold = _peer_pass(golden, list(run.ids), ablate=(layer, head)).logits[0, -1]
        ref = _peer_pass(peer, list(run.ids), ablate=(layer, head)).logits[0, -1]
        assert check_close(cut.logits, gold.detach().numpy(), ref.detach().numpy()).passed


def test_every_heads_gradient_matches_autograd_through_transformers(pair):
    ours, golden, peer = pair
    run = ours.run(TEXT)
    seed = np.random.default_rng(0).standard_normal(ours.vocab_size)
    grads = ours.head_gradients(run, seed)  # (layers, heads, n, d_head)

    def autograd(model):
        kept = []
        out = _peer_pass(model, list(run.ids), keep=kept)
        dtype = out.logits.dtype
        (out.logits[0, -1] * torch.as_tensor(seed, dtype=dtype)).sum().backward()
        n, dh = len(run.ids), ours.d_head
        return np.stack(
            [k.grad[0].reshape(n, ours.n_heads, dh).transpose(0, 1).numpy() for k in kept]
        )

    assert check_close(grads, autograd(golden), autograd(peer)).passed


def test_the_torch_backend_gives_numpys_run(pair):
    ours, golden, _ = pair
    run, on_torch = ours.run(TEXT), ours.run(TEXT, backend="torch:cpu")
    ids = list(run.ids)
    gold = _peer_pass(golden, ids).logits[0, -1].detach().numpy()
    assert check_close(on_torch.logits, gold, run.logits).passed
    assert on_torch.tokens == run.tokens


def test_the_causal_map_agrees_with_single_ablations(pair):
    ours, _, _ = pair
    run = ours.run(TEXT)
    cmap = ours.causal_map(TEXT)
    assert len(cmap.records) == ours.n_layers * ours.n_heads
    for r in cmap.records[:: max(1, len(cmap.records) // 4)]:
        single = run.intervene(AblateHead(r.layer, r.head))
        assert r.ablated_answer == single.answer
