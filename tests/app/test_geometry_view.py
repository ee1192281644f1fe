"""The geometry view's extras, driven in-process: the ghost arrow, handle placement, labels."""

from __future__ import annotations

import numpy as np

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
