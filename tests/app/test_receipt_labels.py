"""The receipt's dot labels (app/views/receipt_labels.py), pure: dots on one spot share one
label, no label overlaps another or a dot, every label stays in the frame."""

from __future__ import annotations

import numpy as np

from app.views.label_layout import overlaps, text_box
from app.views.receipt_labels import (
    DOT_PX,
    FONT_PX,
    receipt_labels,
    screen_points,
    shared_label,
    shorter,
)

SIZE = (420.0, 300.0)
RANGE = (-4.0, 1.0)


def _boxes(xs, ys, placed, size=SIZE):
    points = screen_points(xs, ys, RANGE, RANGE, size)
    dx, dy, text = placed
    return [
        text_box(x + ox, y + oy, t, FONT_PX)
        for (x, y), ox, oy, t in zip(points, dx, dy, text, strict=True)
        if t
    ]


def test_screen_points_put_the_range_corners_on_the_frame_corners():
    assert screen_points([-4.0, 1.0], [-4.0, 1.0], RANGE, RANGE, SIZE) == [
        (0.0, 300.0),
        (420.0, 0.0),
    ]


def test_dots_on_one_spot_share_one_label():
    # The binding model's receipt: three heads at (0, 0), the retrieval head far below. Their
    # three labels were drawn on top of each other at (0, 0).
    xs, ys = [4e-5, 3e-4, -1e-4, -4e-4], [0.0, 1e-5, -4e-4, -3.2]
    tags = ["L0 H0", "L0 H1", "L1 H0", "L1 H1"]
    dx, dy, text = receipt_labels(xs, ys, tags, [3, 2, 1, 0], RANGE, RANGE, SIZE)
    assert text == ["", "", "L0 H0, L0 H1, L1 H0", "L1 H1"]  # on the largest miss of the spot
    boxes = _boxes(xs, ys, (dx, dy, text))
    assert len(boxes) == 2 and not overlaps(*boxes)


def test_a_shared_label_lists_three_heads_then_counts_and_shortens_to_a_count():
    assert shared_label(["L1 H1"]) == "L1 H1"
    assert shared_label(["L0 H0", "L0 H1", "L0 H2"]) == "L0 H0, L0 H1, L0 H2"
    assert shared_label(["L0 H0", "L0 H1", "L0 H2", "L0 H3"]) == "L0 H0 +3"
    assert shorter("L0 H0, L0 H1, L0 H2") == "L0 H0 +2" and shorter("L0 H0") is None
    # Near the right edge there is no room for three names: the count is shown.
    tags = ["L0 H0", "L0 H1", "L0 H2"]
    assert receipt_labels([0.3] * 3, [0.0] * 3, tags, [0, 1, 2], RANGE, RANGE, SIZE)[2] == [
        "L0 H0, L0 H1, L0 H2",
        "",
        "",
    ]
    text = receipt_labels([0.6] * 3, [0.0] * 3, tags, [0, 1, 2], RANGE, RANGE, SIZE)[2]
    assert text == ["L0 H0 +2", "", ""]


def test_labels_never_overlap_each_other_or_a_dot_or_leave_the_frame():
    rng = np.random.default_rng(3)
    for _ in range(40):
        n = int(rng.integers(2, 21))
        xs, ys = rng.uniform(*RANGE, size=n), rng.uniform(*RANGE, size=n)
        xs[: n // 3] = 0.0  # a cluster on one spot, as a saturated sentence gives
        ys[: n // 3] = 0.0
        tags = [f"L{i} H{i % 9}" for i in range(n)]
        named = list(rng.permutation(n)[:6])
        placed = receipt_labels(list(xs), list(ys), tags, named, RANGE, RANGE, SIZE)
        assert sum(bool(t) for t in placed[2]) <= 6
        assert all(not t for i, t in enumerate(placed[2]) if i not in named)
        boxes = _boxes(xs, ys, placed)
        points = screen_points(xs, ys, RANGE, RANGE, SIZE)
        dots = [(x - DOT_PX, y - DOT_PX, x + DOT_PX, y + DOT_PX) for x, y in points]
        for i, a in enumerate(boxes):
            assert 0 <= a[0] and a[2] <= SIZE[0] and 0 <= a[1] and a[3] <= SIZE[1]
            assert not any(overlaps(a, b) for b in boxes[i + 1 :])
            assert not any(overlaps(a, d) for d in dots)
