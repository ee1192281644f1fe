"""An ablated head's payload plane, driven in-process (issue 18): its contributions are faded,
its output is zero, and a label on the plane says the head is ablated."""

from __future__ import annotations

import numpy as np

from app.page.lab_page import create_app
from app.views.geometry import ABLATED_TEXT


def test_the_payload_plane_shows_an_ablated_head_and_forgets_it_when_cleared():
    page = create_app()
    lab = page.lab
    lab.sources.source = "model"
    m = lab.sources.model
    geometry = lab.geometry
    note = geometry.ablated_note
    assert note.text == ABLATED_TEXT and not note.visible
    alpha = np.array(geometry.contributions.data["alpha"])
    assert m.try_update(ablated=[f"{m.layer}.{m.head}"])
    assert note.visible and note in geometry.payload_fig.center
    data = geometry.contributions.data
    faded = np.array(data["alpha"])
    assert np.all(faded[:-1] < alpha[:-1])  # every w·v, computed and no longer passed on
    assert data["label"][-1].startswith("output (zeroed")
    np.testing.assert_allclose([data["x1"][-1], data["y1"][-1]], [0.0, 0.0])
    assert "ablated" in lab.status.summary.text
    m.clear_intervention()
    assert not note.visible and "ablated" not in lab.status.summary.text
    np.testing.assert_allclose(geometry.contributions.data["alpha"], alpha)
