"""The Jacobian view says in words when its gradients vanish, instead of drawing a blank map."""

from __future__ import annotations

from app.state.lab_state import LabState
from app.views.jacobian import JacobianView


def test_a_one_hot_route_is_named_as_vanished_gradients():
    state = LabState()
    state.try_update(d_k=4096, scale=False)  # the spread of the logits makes the route one-hot
    view = JacobianView()
    view.update(state.snapshot)
    assert view.note.visible and not view.colorbar.visible  # no scale of nothing
    assert "vanished" in view.note.text and "more than 99.9%" in view.note.text
    top = state.snapshot.labels[int(state.snapshot.weights.argmax())]
    assert f"because {top} holds" in view.note.text


def test_a_spread_route_draws_the_map_without_words():
    state = LabState()
    view = JacobianView()
    view.update(state.snapshot)
    assert not view.note.visible and view.colorbar.visible
    state.try_update(d_k=4096, scale=False)
    view.update(state.snapshot)
    state.try_update(d_k=2, scale=True)  # and the words go again when the route spreads
    view.update(state.snapshot)
    assert not view.note.visible and view.colorbar.visible


def test_the_map_is_the_derivative_against_the_scaled_score_it_names():
    """The axis names the scaled score (before the temperature), and the drawn values are the
    numeric derivative of the weights against the snapshot's `scaled` at that temperature."""
    import numpy as np

    from engine import softmax

    state = LabState()
    state.try_update(temperature=0.5)
    snap = state.snapshot
    view = JacobianView()
    view.update(snap)
    assert "scaled score" in view.figure.xaxis.axis_label and "τ" in view.figure.xaxis.axis_label
    assert "∂s_j" in view.figure.title.text
    scaled = np.where(snap.legal, snap.scaled, -np.inf)
    h, j = 1e-6, 0
    bumped = scaled.copy()
    bumped[j] += h
    numeric = (softmax(bumped, temperature=0.5) - softmax(scaled, temperature=0.5)) / h
    assert np.allclose(snap.jacobian[:, j], numeric, atol=1e-5)
