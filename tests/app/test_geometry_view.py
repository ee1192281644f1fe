"""The geometry view's extras, driven in-process: the ghost arrow, handle placement, labels."""

from __future__ import annotations

import numpy as np
import pytest

from app.page.lab_page import create_app
from app.views import plane_fit
from app.views.label_layout import HANDLE_RADIUS_PX


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
    geometry.set_ghost((40.0, 0.0))  # far outside the plane: the plane grows to show it
    assert geometry.payload_fig.x_range.end > 40 and geometry.payload_fig.y_range.start < -40


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
    assert logits._hidden.visible
    labels = [item.label.value for item in logits.figure.legend.items]
    assert "+ 4094 hidden dims" in labels


def test_the_query_handle_never_sits_on_a_key_handle():
    geometry = create_app().lab.geometry  # the default scenario: q lies exactly on key A
    q = np.array([geometry.query_tip.data["x"][0], geometry.query_tip.data["y"][0]])
    keys = np.column_stack([geometry.key_tips.data["x"], geometry.key_tips.data["y"]])
    screen = plane_fit.Screen(geometry.address_fig)  # pixels apart, each axis at its scale
    assert np.min(np.hypot(*((keys - q) / [screen.px, screen.py]).T)) >= 20
    # It stays on the query's ray: dragging it turns the query and nothing else.
    params = geometry.preview_params.data
    direction = np.array([params["qx"][0], params["qy"][0]])
    assert abs(q[0] * direction[1] - q[1] * direction[0]) < 1e-12 and q @ direction > 0


def test_the_query_label_stands_clear_of_the_key_ring_its_tip_shares():
    # The default scenario: q's tip lies on A's ring (a review saw the two run together): the
    # "q" keeps at least 8 px of white between its glyph and the ring.
    geometry = create_app().lab.geometry
    data = geometry.geometry.data
    kinds = list(data["kind"])
    q, a = kinds.index("query"), kinds.index("key")
    assert (data["x1"][q], data["y1"][q]) == (data["x1"][a], data["y1"][a])  # the same tip
    # The glyph's half size (the text box less its margin) and its centre, from the tip, in px.
    font = 16.0
    half_w, half_h = 0.31 * font * len(data["tag"][q]), 0.5 * font
    dx, dy = float(data["label_dx"][q]), float(data["label_dy"][q])
    gap_x, gap_y = max(0.0, abs(dx) - half_w), max(0.0, abs(dy) - half_h)
    assert data["tag"][q] == "q"
    assert np.hypot(gap_x, gap_y) - HANDLE_RADIUS_PX >= 8, (dx, dy)


def test_a_drag_waiting_for_its_flush_does_not_undo_a_reset_that_came_after_it():
    # A drag's move is applied on a later turn (DRAG_FLUSH_MS); a Reset pressed before that
    # turn must win, as it came after the drag. It lost once in the suite under load.
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    doc = Document()
    with set_curdoc(doc):
        page = create_app()
        page.server_doc(doc)  # the planes in a document: moves wait for their flush
        state, geometry = page.lab.state, page.lab.geometry
        default = np.array(state.snapshot.keys[:3, :2])
        moved = {"x": [1.0, 0.8, 1.0], "y": [0.0, 0.6, 1.0], "index": [0, 1, 2]}
        angle = state.angle
        geometry.key_tips.data = dict(moved, x=[1.0, 0.8, 0.9])  # the browser drags C ...
        geometry.query_tip.data = {"x": [0.5], "y": [0.5]}  # ... and the query
        geometry._drag.flush()  # applied on their turn
        assert state.snapshot.keys[2, 0] == pytest.approx(0.9) and state.angle != angle
        geometry.key_tips.data = moved  # the drags go on
        geometry.query_tip.data = {"x": [0.0], "y": [1.0]}
        state.load_scenario(state.scenario)  # Reset this scenario, before their next turn
        geometry._drag.flush()  # the drags' turn comes
        np.testing.assert_allclose(state.snapshot.keys[:3, :2], default)
        assert state.angle == angle
        geometry.key_tips.data = dict(moved, x=[1.0, 0.8, 0.5])  # a drag after the reset counts
        geometry._drag.flush()
        assert state.snapshot.keys[2, 0] == pytest.approx(0.5)


def test_the_preview_settings_say_which_of_the_pages_tips_the_drawing_has():
    # The page numbers each tip it sends and keeps its preview over a snapshot drawn before
    # its last tip was taken (app/js/preview.js): a mid-drag tip's snapshot arriving after the
    # release would otherwise pull the arrow back until the release's own drawing came.
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    doc = Document()
    with set_curdoc(doc):
        page = create_app()
        page.server_doc(doc)  # the planes in a document: moves wait for their flush
        lab, geometry = page.lab, page.lab.geometry

        def synced():
            return geometry.preview_params.data["synced"][0]

        assert synced() == 0
        tips = {"x": [1.0, 0.8, 0.9], "y": [0.0, 0.6, 1.0], "index": [0, 1, 2]}
        geometry.key_tips.data = dict(tips, sync=[3, 3, 3])  # the page's third tip
        lab.state.temperature = 0.5  # drawn before the tip's flush: it does not have tip 3
        assert synced() == 0
        geometry._drag.flush()
        assert lab.state.snapshot.keys[2, 0] == pytest.approx(0.9) and synced() == 3
        geometry.key_tips.data = dict(tips, x=[1.0, 0.8, 0.7], sync=[4, 4, 4])
        lab.state.load_scenario(lab.state.scenario)  # a Reset before tip 4's flush drops it
        assert synced() == 4  # the Reset's drawing answers tip 4: the page shows it
        geometry._drag.flush()
        assert lab.state.snapshot.keys[2, 0] != pytest.approx(0.7)


def test_labels_are_placed_in_the_frame_the_browser_draws_not_a_square():
    # The legend under each plane takes height, not width: a phone's frames are 259 x 194 px
    # (the address plane's "␣. @5" left its frame when placed as if 259 px tall). Here a wide,
    # short frame, reported one side at a time as the browser does.
    from app.views.label_layout import text_box
    from app.views.planes import ADDRESS_FONT_PX, PAYLOAD_FONT_PX

    geometry = create_app().lab.geometry
    for fig in (geometry.address_fig, geometry.payload_fig):
        fig.set_from_json("inner_width", 420)
        fig.set_from_json("inner_height", 150)
    x_range, y_range = geometry.address_fig.x_range, geometry.address_fig.y_range
    screen = plane_fit.Screen(geometry.address_fig)  # the frame's corners
    assert screen.point(x_range.start, y_range.start) == pytest.approx((0.0, 150.0))
    assert screen.point(x_range.end, y_range.end) == pytest.approx((420.0, 0.0))
    data = geometry.geometry.data
    placed = 0
    for i, kind in enumerate(data["kind"]):
        tag = data["tag"][i]
        if not tag:
            continue
        fig, font = (
            (geometry.address_fig, ADDRESS_FONT_PX)
            if kind in ("query", "key")
            else (geometry.payload_fig, PAYLOAD_FONT_PX)
        )
        # The tip where the browser draws it: each axis's range over that side's pixels.
        x, y = float(data["x1"][i]), float(data["y1"][i])
        x_span = fig.x_range.end - fig.x_range.start
        y_span = fig.y_range.end - fig.y_range.start
        tx = (x - fig.x_range.start) / x_span * 420
        ty = 150 - (y - fig.y_range.start) / y_span * 150
        box = text_box(tx + float(data["label_dx"][i]), ty + float(data["label_dy"][i]), tag, font)
        assert 0 <= box[0] and box[2] <= 420 and 0 <= box[1] and box[3] <= 150, (tag, box)
        placed += 1
    assert placed >= 3
