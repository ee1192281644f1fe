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


def test_labels_stay_legible_at_64_tokens():
    """Issue 40: side by side, the columns' labels ("␣approved @25") overlapped from about 26
    tokens. The rows name the keys; the columns, the same keys, show their position, upright;
    each column label fits its column at the map's 12 columns on a phone's frame."""
    from types import SimpleNamespace

    import numpy as np

    from engine.heads import token_labels
    from engine.snapshot import leading_jacobian

    tokens = [" approved" if i % 2 else " extraordinarily" for i in range(64)]
    weights = np.linspace(1.0, 2.0, 64)
    weights /= weights.sum()
    snap = SimpleNamespace(
        labels=token_labels(tokens), weights=weights, jacobian=leading_jacobian(weights, 1.0)
    )
    view = JacobianView()
    view.update(snap)
    xaxis, yaxis = view.figure.xaxis[0], view.figure.yaxis[0]
    columns = list(xaxis.major_label_overrides.values())
    rows = list(yaxis.major_label_overrides.values())
    assert len(columns) == len(rows) == 12
    assert columns == [row.rsplit(" @", 1)[1] for row in rows] == [str(i) for i in range(52, 64)]
    assert xaxis.major_label_orientation == "vertical" and "by position" in xaxis.axis_label
    assert all(len(row) <= 16 for row in rows) and rows[0] == "␣extraordin… @52"
    # A toy's short names stay on both axes, across.
    toy = SimpleNamespace(labels=("A", "B"), weights=np.array([0.5, 0.5]), jacobian=np.eye(2))
    view.update(toy)
    assert list(xaxis.major_label_overrides.values()) == ["A", "B"]
    assert xaxis.major_label_orientation == "horizontal"
