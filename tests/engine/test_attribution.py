"""Gradients and the attribution map on the binding model: the backward against finite
differences (NumPy, no torch) and against torch autograd on an independent torch definition
(marked torch), the verified heads against the causal and patching maps, the receipt, the notes
and the cost in forwards."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import trained
from engine.tolerance import check_close
from engine.trained import attribution, backward, causal
from engine.trained import binding_task as task

TEXT = "a=5; b=7; a=3; ?a"
CORRUPTED = "a=5; b=7; a=0; ?a"  # counterfactual.counterfactual's change of the answering value


@pytest.fixture(scope="module")
def model():
    return trained.load("binding")


def _log_p(run, index: int) -> float:
    return float(causal.log_probs(run.logits)[index])


def _difference(run, good: int, bad: int) -> float:
    lp = causal.log_probs(run.logits)
    return float(lp[good] - lp[bad])


def _metrics(run, kind: str):
    """(seed, metric(run)) for log P(answer) or the difference of the two likeliest answers."""
    first, second = np.argsort(-run.logits)[:2]
    if kind == "log P":
        return backward.log_prob_seed(run.logits, first), lambda r: _log_p(r, first)
    seed = backward.difference_seed(len(run.logits), first, second)
    return seed, lambda r: _difference(r, first, second)


def _scaled_output(run, layer: int, head: int, factor: float):
    """The run with the head's output times ``factor`` at every position, exactly: the output is
    linear in the values and the weights do not see them."""
    n = len(run.ids)
    return run.intervene(*[trained.ScaleValue(layer, head, p, factor) for p in range(n)])


def _central_difference(run, layer, head, metric, step: float) -> float:
    """d metric / dt at t = 0 for the output scaled by (1 - t): the direction of an ablation."""
    up = metric(_scaled_output(run, layer, head, 1.0 - step))
    down = metric(_scaled_output(run, layer, head, 1.0 + step))
    return (up - down) / (2.0 * step)


# ------------------------------------------------------------------- gradients, NumPy only

programs = st.integers(0, 10_000).map(lambda seed: task.dataset(seed, 1)[0])


@settings(max_examples=15, deadline=None)
@given(program=programs, kind=st.sampled_from(["log P", "difference"]))
def test_gradients_match_finite_differences(model, program, kind):
    # Golden: a central difference with step h; reference: the same with step 2h, whose error
    # (four times the golden's, since it shrinks as h^2) is the yardstick.
    run = model.run(program.text)
    seed, metric = _metrics(run, kind)
    grads = model.head_gradients(run, seed)
    for layer in range(model.n_layers):
        for head in range(model.n_heads):
            along = float(np.sum(-run.head(layer, head).all_outputs * grads[layer, head]))
            golden = _central_difference(run, layer, head, metric, 1e-3)
            reference = _central_difference(run, layer, head, metric, 2e-3)
            verdict = check_close(along, golden, reference)
            assert verdict.passed, (program.text, kind, layer, head, along, golden, verdict)


@settings(max_examples=15, deadline=None)
@given(program=programs, data=st.data())
def test_nothing_after_the_query_position_has_a_gradient(model, program, data):
    n = len(program.ids)
    query = data.draw(st.integers(0, n - 1), label="query")
    run = model.run(program.text, query=query)
    grads = model.head_gradients(run, backward.log_prob_seed(run.logits, 0))
    assert grads.shape == (model.n_layers, model.n_heads, n, model.d_head)
    assert np.all(grads[:, :, query + 1 :] == 0.0)  # causal: the future cannot move the query
    assert np.any(grads[:, :, query] != 0.0)


def test_an_edited_run_is_refused(model):
    run = model.run(TEXT, [trained.AblateHead(0, 0)])
    with pytest.raises(ValueError, match="unedited run"):
        model.head_gradients(run, backward.log_prob_seed(run.logits, 0))


def test_the_seeds_are_the_metrics_gradients():
    logits = np.array([2.0, -1.0, 0.5, 0.0])
    p = np.exp(logits) / np.exp(logits).sum()
    np.testing.assert_allclose(backward.log_prob_seed(logits, 2), np.eye(4)[2] - p, rtol=1e-15)
    np.testing.assert_array_equal(backward.difference_seed(4, 0, 3), [1.0, 0.0, 0.0, -1.0])


# ------------------------------------------------------------------- the map against exact


@pytest.mark.parametrize("vocab", [backward.VOCAB_CHUNK * 3, backward.VOCAB_CHUNK * 3 + 57, 40])
def test_the_vocabulary_product_in_chunks_is_the_plain_product(vocab):
    # Every row counted once (the chunks and the rest), in float32 as close as NumPy's own
    # product to the float64 one.
    rng = np.random.default_rng(vocab)
    seed, embed = rng.standard_normal(vocab), rng.standard_normal((vocab, 24))
    golden = seed @ embed
    chunked = backward.vocabulary_backward(seed.astype(np.float32), embed.astype(np.float32))
    reference = seed.astype(np.float32) @ embed.astype(np.float32)
    assert chunked.shape == (24,) and chunked.dtype == np.float32
    assert check_close(chunked, golden, reference).passed
    assert np.allclose(backward.vocabulary_backward(seed, embed), golden, rtol=1e-12)


def test_verified_heads_hold_the_causal_maps_effect_bit_for_bit(model):
    causal.clear_cache(model)
    amap = model.attribution_map(TEXT, verify=4)
    cmap = model.causal_map(TEXT)
    assert amap.measure == "effect" and amap.answer == cmap.answer == "3"
    assert [(r.layer, r.head) for r in amap.records] == [(r.layer, r.head) for r in cmap.records]
    assert [r.exact for r in amap.records] == [r.effect for r in cmap.records]


def test_verified_heads_hold_the_patching_maps_share_bit_for_bit(model):
    amap = model.attribution_map(TEXT, corrupted=CORRUPTED, verify=4)
    pmap = model.patching_map(TEXT, CORRUPTED)
    assert amap.measure == "recovered" and (amap.answer, amap.other_answer) == ("3", "0")
    assert [r.exact for r in amap.records] == [r.recovered for r in pmap.records]


@pytest.mark.parametrize(
    "chosen",
    [
        {"answers": ("7", "0")},  # another clean answer against the corrupted run's own
        {"positions": [11, 13, 14]},  # the changed value and the query's tokens only
        {"answers": (None, "5"), "positions": [0, 1, 2, 14]},
    ],
)
def test_chosen_answers_and_positions_are_the_patching_maps_own(model, chosen):
    """The estimate of a patching map with chosen answers and positions verifies against that
    same map, bit for bit, and its estimates are of those answers and positions."""
    amap = model.attribution_map(TEXT, corrupted=CORRUPTED, verify=4, **chosen)
    pmap = model.patching_map(TEXT, CORRUPTED, **chosen)
    assert (amap.answer, amap.other_answer) == (pmap.clean_answer, pmap.corrupted_answer)
    assert amap.positions == pmap.positions
    assert [r.exact for r in amap.records] == [r.recovered for r in pmap.records]
    assert amap.receipt().spearman > 0.5
    whole = model.attribution_map(TEXT, corrupted=CORRUPTED, verify=0)
    assert [r.estimate for r in amap.records] != [r.estimate for r in whole.records]


@pytest.mark.parametrize("verify", [0, 1, 3])
def test_only_the_largest_estimates_are_verified(model, verify):
    amap = model.attribution_map(TEXT, verify=verify)
    by_size = sorted(amap.records, key=lambda r: -abs(r.estimate))
    assert [r.exact is not None for r in by_size] == [i < verify for i in range(4)]
    assert amap.receipt().heads == verify


def test_a_receipt_grown_a_few_heads_at_a_time_is_the_verified_map(model):
    whole = model.attribution_map(TEXT, verify=4)
    grown = model.attribution_map(TEXT, verify=0)
    run = model.run(TEXT)
    order = [(r.layer, r.head) for r in grown.ranked()]
    assert order == [(r.layer, r.head) for r in whole.ranked()]
    found = {}
    for start in range(0, len(order), 3):
        found |= attribution.exact_effects(run, order[start : start + 3])
        grown = grown.with_exact(found)
        assert grown.receipt().heads == len(found)
    assert grown == whole
    assert attribution.exact_effects(run, []) == {}


def test_the_patching_estimate_is_close_and_the_ablation_estimate_lies(model):
    # Patching moves the corrupted run a little way along a logit difference (linear in the
    # logits): every estimate within 0.3 of the exact share, ranked alike. Ablation on a run
    # whose answer has P = 0.9999: log P is flat there, so the retrieval head's estimate is
    # almost nothing while its exact ablation costs over 3 nats, and every record says why.
    patch = model.attribution_map(TEXT, corrupted=CORRUPTED)
    assert all(abs(r.estimate - r.exact) < 0.3 for r in patch.records)
    assert patch.receipt().spearman == 1.0
    assert not any("saturated" in (r.note or "") for r in patch.records)
    ablation = model.attribution_map(TEXT)
    retrieval = ablation.records[2 * model.retrieval_head[0] + model.retrieval_head[1]]
    assert abs(retrieval.estimate) < 1e-3 and retrieval.exact < -3.0
    assert all(r.note.startswith("saturated: P(answer) = 1.000") for r in ablation.records)


def test_the_map_costs_one_forward_per_text_and_one_backward(model, monkeypatch):
    calls = {"forward": 0, "backward": 0}
    forward, gradients = model.forward_one, model.head_gradients

    def counted(name, function):
        def call(*args, **kwargs):
            calls[name] += 1
            return function(*args, **kwargs)

        return call

    monkeypatch.setattr(model, "forward_one", counted("forward", forward))
    monkeypatch.setattr(model, "head_gradients", counted("backward", gradients))
    model.attribution_map(TEXT, verify=0)
    assert calls == {"forward": 1, "backward": 1}
    model.attribution_map(TEXT, corrupted=CORRUPTED, verify=0)
    assert calls == {"forward": 3, "backward": 2}
    model.attribution_map(TEXT, verify=2)  # each verified head is one intervention
    assert calls == {"forward": 6, "backward": 3}


def test_bad_arguments_are_refused(model):
    for verify in (-1, True, 2.5):
        with pytest.raises(ValueError, match="verify"):
            model.attribution_map(TEXT, verify=verify)
    with pytest.raises(ValueError, match=r"answers=\(clean answer, corrupted answer\)"):
        model.attribution_map(TEXT, answer="3", corrupted=CORRUPTED)
    for chosen in ({"answers": ("3", "0")}, {"positions": [1]}):
        with pytest.raises(ValueError, match="give a corrupted text too"):
            model.attribution_map(TEXT, **chosen)
    with pytest.raises(ValueError, match="out of range"):
        model.attribution_map(TEXT, corrupted=CORRUPTED, positions=[99])
    with pytest.raises(ValueError, match="two different tokens"):
        model.attribution_map(TEXT, corrupted=CORRUPTED, answers=("3", "3"))
    with pytest.raises(ValueError, match="same length"):
        model.attribution_map(TEXT, corrupted="a=5; ?a")
    with pytest.raises(ValueError, match="not one of the model's answers"):
        model.attribution_map(TEXT, answer="banana")


# ------------------------------------------------------------------- the receipt


def test_receipt_counts_ranks_and_the_top_k():
    r = attribution.receipt([0.3, -2.0, 0.1, 1.0], [0.2, -1.5, 0.05, 3.0], k=2)
    assert r == attribution.Receipt(heads=4, spearman=1.0, top_k=2, k=2)
    r = attribution.receipt([1.0, 2.0, 3.0], [3.0, 2.0, 1.0], k=1)
    assert r.spearman == pytest.approx(-1.0) and r.top_k == 0
    np.testing.assert_array_equal(attribution.ranks([5.0, 1.0, 5.0, 2.0]), [2.5, 0.0, 2.5, 1.0])
    assert math.isnan(attribution.receipt([1.0], [2.0]).spearman)
    assert math.isnan(attribution.spearman([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]))


whole = st.integers(-1000, 1000)  # ties happen; strictly monotone maps keep them apart


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(whole, whole), min_size=2, max_size=30))
def test_spearman_ignores_monotone_maps_and_is_symmetric(pairs):
    a, b = (np.array(column, dtype=float) for column in zip(*pairs, strict=True))
    rho = attribution.spearman(a, b)
    if math.isnan(rho):
        return
    assert -1.0 - 1e-12 <= rho <= 1.0 + 1e-12
    assert attribution.spearman(b, a) == pytest.approx(rho, abs=1e-12)
    assert attribution.spearman(np.exp(a / 1e3), 3 * b + 1) == pytest.approx(rho, abs=1e-9)
    assert attribution.spearman(a, -b) == pytest.approx(-rho, abs=1e-12)


# ------------------------------------------------------------------- torch autograd

torch_only = pytest.mark.torch


def _autograd_head_gradients(torch, net, ids, query: int, seed_of) -> np.ndarray:
    """d metric / d every head's output by autograd, on an independent torch forward of the
    binding model (its training definition's weights, torch's SDPA): a zero nudge is added to
    each head's output and differentiated. ``seed_of(logits)`` is the metric."""
    n = len(ids)
    x = net.embed(torch.as_tensor(ids)[None]) + net.pos(torch.arange(n))
    nudges = []
    for layer in range(net.n_layers):
        h = net.ln[layer](x)
        q, k, v = (
            w[layer](h).view(1, n, net.n_heads, net.d_head).transpose(1, 2)
            for w in (net.wq, net.wk, net.wv)
        )
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        nudges.append(torch.zeros_like(out, requires_grad=True))
        out = out + nudges[-1]
        x = x + net.wo[layer](out.transpose(1, 2).reshape(1, n, -1))
    logits = net.unembed(net.ln_f(x))[0, query]
    grads = torch.autograd.grad(seed_of(torch, logits), nudges)
    return np.stack([g[0].double().numpy() for g in grads])


@pytest.fixture(scope="module")
def autograd_nets():
    torch = pytest.importorskip("torch")
    from engine.trained.binding_torch import BindingModel

    arrays = trained.load_arrays(trained.models_dir() / "binding.npz")
    nets = {dtype: BindingModel.from_arrays(arrays, dtype=dtype) for dtype in (torch.float64,)}
    nets[torch.float32] = BindingModel.from_arrays(arrays, dtype=torch.float32)
    return torch, nets


@torch_only
@pytest.mark.parametrize("kind", ["log P", "difference"])
@pytest.mark.parametrize("text", [TEXT, CORRUPTED, task.dataset(5, 1)[0].text])
def test_gradients_agree_with_torch_autograd(model, autograd_nets, kind, text):
    # Golden: autograd in float64; reference: autograd in float32; test: this backward in NumPy
    # (float64) and on torch:cpu, each against the golden under PyTorch's rule.
    torch, nets = autograd_nets
    run = model.run(text)
    first, second = (int(i) for i in np.argsort(-run.logits)[:2])

    def seed_of(torch, logits):
        if kind == "log P":
            return torch.log_softmax(logits, -1)[first]
        return logits[first] - logits[second]

    ids, query = list(run.ids), run.query_position
    golden = _autograd_head_gradients(torch, nets[torch.float64], ids, query, seed_of)
    reference = _autograd_head_gradients(torch, nets[torch.float32], ids, query, seed_of)
    seed, _ = _metrics(run, kind)
    for backend in ("numpy", "torch:cpu"):
        test = model.head_gradients(model.run(text, backend=backend), seed)
        verdict = check_close(test, golden, reference)
        assert verdict.passed, (backend, verdict)
