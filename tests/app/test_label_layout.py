"""The planes' label placement (app/views/label_layout.py), pure: no page, no Bokeh."""

from __future__ import annotations

import numpy as np
import pytest

from app.views.label_layout import (
    HANDLE_RADIUS_PX,
    crosses,
    overlaps,
    place_labels,
    shorten,
    text_box,
)

FONT, FRAME = 16.0, 300.0


def _boxes(tips, placed, font=FONT):
    return [
        text_box(x + dx, y + dy, text, font)
        for (x, y), (dx, dy, text) in zip(tips, placed, strict=True)
        if text
    ]


def _random_case(rng):
    tips = [tuple(p) for p in rng.uniform(0, FRAME, size=(int(rng.integers(2, 9)), 2))]
    tips.append(tips[0])  # two arrows on one point, like "the (1)" and "the (2)"
    texts = [f"label {i} (masked)" if i % 3 else f"k{i}" for i in range(len(tips))]
    return tips, texts


def test_labels_never_overlap_each_other_or_leave_the_frame():
    rng = np.random.default_rng(4)
    for _ in range(50):
        tips, texts = _random_case(rng)
        placed = place_labels(tips, texts, FONT, FRAME)
        boxes = _boxes(tips, placed)
        for i, a in enumerate(boxes):
            assert 0 <= a[0] and a[2] <= FRAME and 0 <= a[1] and a[3] <= FRAME
            assert not any(overlaps(a, b) for b in boxes[i + 1 :])
        for text, (_, _, shown) in zip(texts, placed, strict=True):
            assert shown in ("", text) or shown.endswith(("…", "… ✕", " ✕"))


def test_labels_stay_clear_of_every_handle_and_every_box_to_avoid():
    rng = np.random.default_rng(11)
    legend = (0.0, FRAME - 80.0, 190.0, FRAME)
    for _ in range(30):
        tips, texts = _random_case(rng)
        placed = place_labels(tips, texts, FONT, FRAME, [legend])
        r = HANDLE_RADIUS_PX
        handles = [(x - r, y - r, x + r, y + r) for x, y in tips]
        for box in _boxes(tips, placed):
            assert not overlaps(box, legend)
            assert not any(overlaps(box, h) for h in handles)


def test_labels_stay_off_the_arrows():
    rng = np.random.default_rng(7)
    centre = FRAME / 2
    for _ in range(30):
        tips, texts = _random_case(rng)
        arrows = [(centre, centre, x, y) for x, y in tips]
        placed = place_labels(tips, texts, FONT, FRAME, segments=arrows)
        for box in _boxes(tips, placed):
            assert not any(crosses(box, a) for a in arrows)


def test_the_same_input_places_the_same_labels():
    rng = np.random.default_rng(5)
    tips, texts = _random_case(rng)
    first = place_labels(tips, texts, FONT, FRAME, order=list(reversed(range(len(tips)))))
    again = place_labels(
        list(tips), list(texts), FONT, FRAME, order=list(reversed(range(len(tips))))
    )
    assert first == again


def test_the_first_choice_is_straight_past_the_tip_away_from_the_centre():
    # A tip right of the centre: its label goes further right, on the same line.
    [(dx, dy, shown)] = place_labels([(250.0, 150.0)], ["k"], FONT, FRAME)
    assert shown == "k" and dx > 0 and dy == pytest.approx(0.0)
    # A tip on the centre (an arrow of length zero): straight up.
    [(dx, dy, shown)] = place_labels([(150.0, 150.0)], ["k"], FONT, FRAME)
    assert shown == "k" and dx == pytest.approx(0.0, abs=1e-9) and dy < 0


def test_coincident_tips_get_separate_labels_until_there_is_no_room():
    placed = place_labels([(150.0, 150.0)] * 3, ["A", "B", "C"], FONT, FRAME)
    assert [text for _, _, text in placed] == ["A", "B", "C"]
    offsets = {(round(dx, 6), round(dy, 6)) for dx, dy, _ in placed}
    assert len(offsets) == 3
    boxes = _boxes([(150.0, 150.0)] * 3, placed)
    assert not any(overlaps(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])


def test_a_label_without_room_is_shortened_then_dropped():
    # 129 px of text never fits a 100 px frame; its first four letters do.
    assert place_labels([(50.0, 50.0)], ["abcdefghijklmn"], FONT, 100.0)[0][2] == "abcd…"
    crowd = place_labels([(150.0, 150.0)] * 12, [f"a long label {i}" for i in range(12)], 16, 300)
    shown = [text for _, _, text in crowd]
    assert shown[0] == "a long label 0" and "" in shown  # no room left near that point


def test_nothing_to_place_and_no_room_at_all():
    assert place_labels([], [], FONT, FRAME) == []
    # A frame smaller than any label: every label is dropped, none is placed outside.
    assert place_labels([(5.0, 5.0), (6.0, 6.0)], ["q", "A"], FONT, 10.0) == [(0.0, 0.0, "")] * 2


def test_a_label_is_placed_in_the_order_given():
    tips = [(150.0, 150.0)] * 12
    texts = [f"a long label {i}" for i in range(12)]
    last_first = place_labels(tips, texts, FONT, FRAME, order=list(range(11, -1, -1)))
    assert last_first[11][2] == texts[11] and last_first[0][2] != texts[0]


def test_short_forms():
    # A token keeps its text with its position, never the position alone (issue 29).
    assert shorten("approved_limit @10") == "approved_limit@10"
    assert shorten("approved_limit @10 (masked)") == "approved_limit@10 ✕"
    assert shorten("␣loan @4") == "loan@4"
    assert shorten("␣ @4") == "␣@4"  # a token that is a space keeps its mark
    assert shorten("abcdefgh") == "abcd…"
    assert shorten("abcdefgh (masked)") == "abcd… ✕"
    assert shorten("A") is None  # already short: nothing shorter to try
    assert shorten("A (masked)") == "A ✕"


def test_box_and_segment_tests():
    assert text_box(100.0, 50.0, "ab", 10.0) == pytest.approx((88.8, 43.5, 111.2, 56.5))
    assert overlaps((0, 0, 10, 10), (5, 5, 15, 15))
    assert not overlaps((0, 0, 10, 10), (10, 0, 20, 10))  # touching edges do not overlap
    assert crosses((0, 0, 40, 40), (20, -10, 20, 50))
    assert not crosses((0, 0, 40, 40), (50, 0, 90, 40))
    assert not crosses((0, 0, 40, 40), (1, -10, 1, 50))  # within the box's 3 px margin
    assert crosses((0, 0, 40, 40), (0, 0, 40, 40))  # corner to corner
    assert not crosses((0, 0, 40, 40), (-10, 50, 50, 50))  # a horizontal line below it


def test_a_second_page_asking_the_same_gets_the_shared_placement():
    from app.views import label_layout

    tips = [(120.0 + 7 * i, 80.0 + 11 * i) for i in range(5)]
    texts = [f"key {i}" for i in range(5)]
    first = place_labels(tips, texts, FONT, FRAME, order=[4, 3, 2, 1, 0])
    hits = label_layout._placed.cache_info().hits
    again = place_labels([list(t) for t in tips], list(texts), FONT, FRAME, order=[4, 3, 2, 1, 0])
    assert again == first and isinstance(again, list)
    assert label_layout._placed.cache_info().hits == hits + 1
    assert label_layout._placed.cache_info().maxsize is not None  # bounded


def test_a_wide_frame_holds_labels_a_square_one_would_refuse():
    # The receipt's frame is wider than tall: 208 px of text fit in 500 x 200, not in 200 x 200.
    text = "a rather long label!"
    assert place_labels([(100.0, 100.0)], [text], FONT, (500.0, 200.0))[0][2] == text
    assert place_labels([(100.0, 100.0)], [text], FONT, 200.0)[0][2] == "a ra…"
    rng = np.random.default_rng(9)
    for _ in range(30):
        tips = [tuple(p) for p in rng.uniform((0, 0), (500, 200), size=(6, 2))]
        placed = place_labels(tips, [f"L{i} H{i}" for i in range(6)], FONT, (500.0, 200.0))
        boxes = _boxes(tips, placed)
        for i, a in enumerate(boxes):
            assert 0 <= a[0] and a[2] <= 500 and 0 <= a[1] and a[3] <= 200
            assert not any(overlaps(a, b) for b in boxes[i + 1 :])


def test_the_caller_chooses_the_short_form():
    long = "L10 H1, L11 H2, L12 H3"
    placed = place_labels([(50.0, 50.0)], [long], FONT, 150.0, short=lambda t: "L10 H1 +2")
    assert placed[0][2] == "L10 H1 +2"
    assert place_labels([(50.0, 50.0)], [long], FONT, 150.0, short=lambda t: None)[0][2] == ""
