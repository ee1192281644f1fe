"""The causal map's first picture from the attribution estimate (app/state/estimated_map.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.state.estimated_map import NOT_MEASURED, QueryRows, estimated_map
from engine import trained
from engine.trained import attribution

PROGRAM = "a=5; b=7; a=3; ?a"


@pytest.fixture(scope="module")
def run_and_estimate():
    run = trained.load("binding").run(PROGRAM)
    return run, attribution.attribution_map(run, verify=0)


def test_each_head_is_drawn_at_its_weight_and_its_estimate(run_and_estimate):
    run, amap = run_and_estimate
    cmap = estimated_map(amap, QueryRows.of(run), 2)
    assert (cmap.text, cmap.answer, cmap.token, cmap.token_text) == (PROGRAM, "3", 2, "=")
    assert cmap.prob == pytest.approx(amap.prob)
    assert len(cmap.records) == len(amap.records) == 4
    for est, r in zip(amap.records, cmap.records, strict=True):
        head = run.head(r.layer, r.head)
        assert (r.layer, r.head) == (est.layer, est.head)
        assert r.effect == pytest.approx(est.estimate)
        assert r.weight == pytest.approx(float(head.weights[2]))
        assert r.contribution == pytest.approx(float(np.linalg.norm(head.contribution)))
        assert r.effect_prob == pytest.approx(amap.prob * math.expm1(est.estimate))
        assert r.ablated_answer == NOT_MEASURED


def test_a_patching_estimate_another_text_or_a_later_token_is_refused(run_and_estimate):
    run, amap = run_and_estimate
    model = run.model
    patch = attribution.attribution_map(run, corrupted=model.run("a=5; b=7; a=0; ?a"), verify=0)
    with pytest.raises(ValueError, match="ablation estimate"):
        estimated_map(patch, QueryRows.of(run), 2)
    with pytest.raises(ValueError, match="two different texts"):
        estimated_map(amap, QueryRows.of(model.run("a=1; ?a")), 2)
    with pytest.raises(ValueError, match="out of range"):
        estimated_map(amap, QueryRows.of(run), len(run.tokens))
