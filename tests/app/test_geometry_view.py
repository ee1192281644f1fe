"""The geometry view's extras, driven in-process: the ghost arrow, handle placement, labels."""

from __future__ import annotations

import numpy as np
import pytest

from app.main import create_app


def test_set_ghost_draws_a_before_arrow_and_none_removes_it():
    geometry = create_app().lab.geometry
    assert len(geometry.ghost.data["x1"]) == 0
    geometry.set_ghost((1.5, -2.0))
    data = geometry.ghost.data
    assert geometry.ghost.name == "ghost"
    np.testing.assert_allclose([data["x0"][0], data["y0"][0]], [0.0, 0.0])
    np.testing.assert_allclose([data["x1"][0], data["y1"][0]], [1.5, -2.0])
    assert 0 < data["alpha"][0] < 1  # faded
    drawn = [r for r in geometry.payload_fig.renderers if r.data_source is geometry.ghost]
    assert len(drawn) == 2  # a dashed shaft and a head
    geometry.set_ghost(None)
    assert len(geometry.ghost.data["x1"]) == 0


def test_the_null_candidate_is_a_row_in_the_weights_and_logits_charts():
    page = create_app()
    state, lab = page.lab.state, page.lab
    state.param.update(null_route=True, null_threshold=2.0)
    snap = state.snapshot
    extra = lab.weights.extra.data
    assert extra["kind"] == ["null"]
    assert extra["weight"][0] == pytest.approx(snap.null_weight, rel=1e-6)
    # The key rows and the null row together hold the whole route.
    assert float(np.sum(lab.weights.source.data["weight"]) + extra["weight"][0]) == pytest.approx(
        1.0, abs=1e-5
    )
    assert "null" in lab.weights.figure.xaxis[0].axis_label
    assert lab.logits.extra.data["logit"][0] == pytest.approx(snap.null_logit)
    ticks = lab.logits.figure.yaxis[0].major_label_overrides
    assert ticks[len(snap.weights)].startswith("null")


def test_hidden_part_of_each_score_is_drawn_when_d_k_exceeds_two():
    page = create_app()
    state, logits = page.lab.state, page.lab.logits
    assert not logits._hidden.visible
    state.param.update(d_k=4096, scale=False)
    snap = state.snapshot
    data = logits.source.data
    visible = snap.keys @ snap.query
    np.testing.assert_allclose(data["visible"], visible, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(data["hidden"], snap.scores - visible, rtol=1e-5, atol=1e-3)
    assert logits._hidden.visible and "4094 hidden" in logits.figure.title.text
