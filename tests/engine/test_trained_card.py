"""Every figure of the shipped model card, recomputed from the shipped weights."""

from __future__ import annotations

import json
import math

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
