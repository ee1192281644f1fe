"""Every figure of the shipped model card, recomputed from the shipped weights: by the card's own
`measure`, and independently by a torch forward and counting written here."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from engine import trained
from engine.trained import card as card_module
from engine.trained import experiments as ex


@pytest.fixture(scope="module")
def card():
    return json.loads((trained.models_dir() / "binding.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def figures():
    return card_module.measure(trained.load("binding"))


def _same(a, b, path="figures"):
    if isinstance(a, dict):
        assert set(a) == set(b), path
        for k in a:
            _same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        if math.isnan(a):
            assert math.isnan(b), path
        else:
            # Counts decide the accuracies exactly; mean weights may differ in the last bits
            # between BLAS builds.
            assert b == pytest.approx(a, rel=1e-9, abs=1e-12), path
    else:
        assert a == b, path


def test_card_figures_are_reproduced(card, figures):
    _same(card["figures"], json.loads(json.dumps(figures)))


def test_accuracy_splits_add_up(card):
    acc = card["figures"]["accuracy"]
    assert sum(acc[k]["n"] for k in ("plain", "rebound", "undefined")) == acc["all"]["n"]
    assert (
        sum(acc[k]["correct"] for k in ("plain", "rebound", "undefined")) == acc["all"]["correct"]
    )


def test_retrieval_head_measured_at_load_matches_the_card(card):
    assert list(trained.load("binding").retrieval_head) == card["figures"]["retrieval_head"]


def test_parameter_count(card):
    model = trained.load("binding")
    n = sum(a.size for a in model.w.values())
    assert card["architecture"]["parameters"] == n
    assert 30_000 < n < 60_000


def test_markdown_is_the_rendering_of_the_json(card):
    md = (trained.models_dir() / "binding.md").read_text(encoding="utf-8")
    assert md == card_module.render_markdown(card)


def test_refusal_profile_function_agrees_with_the_card(card):
    model = trained.load("binding")
    from engine.trained.binding import HELDOUT_SEED, HELDOUT_SIZE

    prof = ex.refusal_profile(model, n=HELDOUT_SIZE, seed=HELDOUT_SEED)
    _same(card["figures"]["refusal_profile"], json.loads(json.dumps(prof)))


def test_weights_file_is_small():
    assert (trained.models_dir() / "binding.npz").stat().st_size < 1_000_000


# ------------------------------------------------------------------- independently computed
#
# The test above compares the card with `card.measure`, the function that wrote it: a mistake in
# measure (a hit counted at the wrong position, a head ablated wrongly) would be written into the
# card and then reproduced, and pass. Here the card's figures are recomputed without measure,
# binding.py's forward or its hit helpers: the torch definition of the model in float64
# (engine/trained/binding_torch.py, what training used), attention rows taken by the loop below,
# positions and token kinds counted from each program's definitions.


def _torch_rows_and_logits(torch, net, ids, qpos, ablate=()):
    """Answer logits at the question and every head's attention row there, from the torch
    module's own weights (a loop written here: pre-LN, causal softmax(q.k / sqrt(d)), w @ v)."""
    b, n = ids.shape
    at = torch.arange(b)
    rows = {}
    with torch.no_grad():
        x = net.embed(ids) + net.pos(torch.arange(n))
        causal = torch.ones(n, n, dtype=torch.bool).tril()
        for layer in range(net.n_layers):
            h = net.ln[layer](x)
            q, k, v = (
                w[layer](h).view(b, n, net.n_heads, net.d_head).transpose(1, 2)
                for w in (net.wq, net.wk, net.wv)
            )
            scores = (q @ k.transpose(-1, -2) / math.sqrt(net.d_head)).masked_fill(
                ~causal, float("-inf")
            )
            weights = torch.softmax(scores, dim=-1)
            out = weights @ v
            for head in range(net.n_heads):
                rows[(layer, head)] = weights[at, head, qpos].numpy()
                if (layer, head) in ablate:
                    out[:, head] = 0.0
            x = x + net.wo[layer](out.transpose(1, 2).reshape(b, n, -1))
        logits = net.unembed(net.ln_f(x))[at, qpos].numpy()
    return rows, logits


def _answer_definition(p):
    hits = [i for i, (name, _) in enumerate(p.definitions) if name == p.question]
    return hits[-1] if hits else None


def _kind_at(p, position):
    """first, name, =, value, ;, ? or question: from the layout <bos> (name = value ;)* ? name."""
    if position == 0:
        return "first"
    if position == len(p.tokens) - 1:
        return "question"
    if position == len(p.tokens) - 2:
        return "?"
    return ("name", "=", "value", ";")[(position - 1) % 4]


@pytest.fixture(scope="module")
def independent():
    torch = pytest.importorskip("torch")
    from engine.trained.binding_task import ANSWERS, dataset, encode_batch
    from engine.trained.binding_torch import BindingModel

    card_file = json.loads((trained.models_dir() / "binding.json").read_text(encoding="utf-8"))
    held = card_file["figures"]["heldout"]
    programs = dataset(held["seed"], held["size"])
    arrays = trained.load_arrays(trained.models_dir() / "binding.npz")
    net = BindingModel.from_arrays(arrays, dtype=torch.float64)
    ids_np, qpos_np, _ = encode_batch(programs)
    ids, qpos = torch.as_tensor(ids_np), torch.as_tensor(qpos_np)
    answers = np.array([ANSWERS.index(p.answer) for p in programs])
    kinds = np.array(
        [
            "undefined"
            if _answer_definition(p) is None
            else ("plain" if sum(n == p.question for n, _ in p.definitions) == 1 else "rebound")
            for p in programs
        ]
    )

    def correct(ablate=()):
        _, logits = _torch_rows_and_logits(torch, net, ids, qpos, ablate)
        ok = logits.argmax(1) == answers
        return {"all": int(ok.sum()), **{k: int(ok[kinds == k].sum()) for k in KINDS}}

    rows, _ = _torch_rows_and_logits(torch, net, ids, qpos)
    heads = [(layer, head) for layer in range(net.n_layers) for head in range(net.n_heads)]
    return {
        "programs": programs,
        "kinds": kinds,
        "rows": rows,
        "correct": correct(),
        "heads": {lh: correct((lh,)) for lh in heads},
        "layers": {
            layer: correct(tuple((layer, h) for h in range(net.n_heads)))
            for layer in range(net.n_layers)
        },
    }


KINDS = ("plain", "rebound", "undefined")


@pytest.mark.torch
def test_card_accuracies_are_an_independent_forwards_counts(card, independent):
    fig = card["figures"]
    kinds = independent["kinds"]
    assert fig["accuracy"]["all"]["n"] == len(kinds)
    assert {k: fig["accuracy"][k]["n"] for k in KINDS} == {
        k: int((kinds == k).sum()) for k in KINDS
    }
    assert {k: fig["accuracy"][k]["correct"] for k in ("all", *KINDS)} == independent["correct"]
    n = {k: int((kinds == k).sum()) for k in KINDS}
    for (layer, head), got in independent["heads"].items():
        entry = fig["heads"][f"L{layer}H{head}"]
        assert entry["ablated_accuracy"] == pytest.approx(got["all"] / len(kinds)), (layer, head)
        for k in KINDS:
            assert entry["ablated_by_kind"][k] == pytest.approx(got[k] / n[k]), (layer, head, k)
        drop = (independent["correct"]["all"] - got["all"]) / len(kinds)
        assert entry["ablation_drop"] == pytest.approx(drop, abs=1e-12), (layer, head)
    for layer, got in independent["layers"].items():
        entry = fig["layer_ablations"][f"L{layer}"]
        assert entry["ablated_accuracy"] == pytest.approx(got["all"] / len(kinds)), layer
        for k in KINDS:
            assert entry["ablated_by_kind"][k] == pytest.approx(got[k] / n[k]), (layer, k)


@pytest.mark.torch
def test_card_head_hits_and_refusal_profile_are_an_independent_forwards(card, independent):
    fig = card["figures"]
    programs, rows = independent["programs"], independent["rows"]
    defined = [i for i, p in enumerate(programs) if _answer_definition(p) is not None]
    hits = {}
    for (layer, head), ws in rows.items():
        value_hits = span_hits = 0
        value_weight = 0.0
        for i in defined:
            d = _answer_definition(programs[i])
            top = int(np.argmax(ws[i]))
            value_hits += top == 1 + 4 * d + 2  # <bos>, then name = value ; per definition
            span_hits += 1 + 4 * d <= top <= 1 + 4 * d + 3
            value_weight += float(ws[i][1 + 4 * d + 2])
        entry = fig["heads"][f"L{layer}H{head}"]
        assert (entry["value_hits"], entry["span_hits"], entry["defined"]) == (
            value_hits,
            span_hits,
            len(defined),
        ), (layer, head)
        assert entry["mean_value_weight"] == pytest.approx(value_weight / len(defined), rel=1e-5)
        hits[(layer, head)] = (value_hits, value_weight)
    best = max(hits, key=lambda lh: (*hits[lh], -lh[0], -lh[1]))
    assert fig["retrieval_head"] == list(best)
    profile = fig["refusal_profile"]
    assert profile["head"] == list(best)
    ws = rows[best]
    for group, members in (
        ("undefined", [i for i in range(len(programs)) if i not in set(defined)]),
        ("defined", defined),
    ):
        weight = dict.fromkeys(card_module.TOKEN_KINDS, 0.0)
        top = dict.fromkeys(card_module.TOKEN_KINDS, 0)
        for i in members:
            p = programs[i]
            for position, w in enumerate(ws[i][: len(p.tokens)]):
                weight[_kind_at(p, position)] += float(w)
            top[_kind_at(p, int(np.argmax(ws[i])))] += 1
        assert profile[group]["n"] == len(members)
        for k in card_module.TOKEN_KINDS:
            mean = weight[k] / len(members)
            assert profile[group]["mean_weight"][k] == pytest.approx(mean, rel=1e-4, abs=1e-7), (
                group,
                k,
            )
            assert profile[group]["top_share"][k] == pytest.approx(top[k] / len(members)), (
                group,
                k,
            )
