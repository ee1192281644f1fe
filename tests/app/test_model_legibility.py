"""The rules that keep the model views legible at any size (issue 18), in-process: a token's label
without room becomes its position, the heaviest are placed first and no label lies on an arrow,
titles and axis labels are chosen to fit the drawn width beside the toolbar, and a bar chart
draws only the rows its drawn height leaves readable. tests/browser/test_model_legibility_browser.py
measures the same in Chromium at 1920x1080, 1366x768 and 390x844."""

from __future__ import annotations

import pytest

from app.views.label_layout import crosses as _crosses
from app.views.label_layout import place_labels
from app.views.label_layout import text_box as _text_box
from app.views.rows import MAX_ROWS, FitRows, row_positions, rows_that_fit
from app.views.style import make_figure
from app.views.text_fit import FitText, text_width, toolbar_width


def test_a_token_label_without_room_keeps_its_token_or_goes_never_a_bare_position():
    # Issue 29: keys showed "@6 @3 @2 @1", positions without their tokens. 96 px of frame:
    # "␣loan @10" (about 99 px) cannot fit, "loan@10" (about 79 px) can.
    [(_, _, shown)] = place_labels([(48.0, 48.0)], ["␣loan @10"], 16.0, 96.0)
    assert shown == "loan@10"
    [(_, _, shown)] = place_labels([(55.0, 55.0)], ["␣loan @10 (masked)"], 16.0, 110.0)
    assert shown == "loan@10 ✕"
    # 100 px: "approved_limit @10" has no room, even tighter: dropped (its hover names it).
    [(_, _, shown)] = place_labels([(50.0, 50.0)], ["approved_limit @10"], 16.0, 100.0)
    assert shown == ""


def test_the_most_important_label_is_placed_first_and_keeps_its_name():
    tips = [(150.0, 150.0)] * 6
    texts = [f"␣token{i} @{i}" for i in range(6)]
    in_order = place_labels(tips, texts, 16.0, 300.0)
    heaviest_last = place_labels(tips, texts, 16.0, 300.0, order=[5, 4, 3, 2, 1, 0])
    assert in_order[0][2] == texts[0]
    assert heaviest_last[5][2] == texts[5]  # the one placed first has its whole name


def test_no_label_lies_on_an_arrow():
    tip, text = (200.0, 120.0), "a label @1"
    [(dx, dy, _)] = place_labels([tip], [text], 16.0, 300.0)
    # An arrow straight through the spot the label takes when there is none.
    cx, cy = tip[0] + dx, tip[1] + dy
    arrow = (cx - 60.0, cy, cx + 60.0, cy)
    assert _crosses(_text_box(cx, cy, text, 16.0), arrow)
    [(bx, by, shown)] = place_labels([tip], [text], 16.0, 300.0, segments=[arrow])
    assert shown == text and (bx, by) != (dx, dy)
    assert not _crosses(_text_box(tip[0] + bx, tip[1] + by, text, 16.0), arrow)
    assert _crosses((0, 0, 40, 40), (20, -10, 20, 50))
    assert not _crosses((0, 0, 40, 40), (50, 0, 90, 40))


def test_a_title_and_an_axis_label_fit_the_width_the_browser_reports(monkeypatch):
    fig = make_figure("Weights")
    fit = FitText(fig)
    long, short = "Weights and |w·v| shares · top 11 of 15", "Weights · top 11 of 15"
    fit.title(long, short, "Weights")
    fit.x_label("share (each colour sums to 100%)", "share")
    assert fig.title.text == long  # before the browser has drawn it: the full title
    width = {"px": None}
    monkeypatch.setattr(FitText, "width", lambda self: width["px"])
    for px in (1000, 330, 200, 40):
        width["px"] = px
        fit.refit()
        room = px - toolbar_width(fig)
        shown = fig.title.text
        assert text_width(shown, "17px", bold=True) <= room or shown == "Weights"
        longer = [t for t in (long, short) if len(t) > len(shown)]
        assert all(text_width(t, "17px", bold=True) > room for t in longer)  # the longest fitting
    assert fig.xaxis[0].axis_label == "share"
    fig.title.text_font_size = "21px"  # presenter mode: larger type, the same rule
    width["px"] = 420
    fit.refit()
    assert text_width(fig.title.text, "21px", bold=True) <= 420 - toolbar_width(fig)


@pytest.mark.parametrize(
    ("height", "rows", "with_null"),
    [(None, MAX_ROWS, MAX_ROWS), (500, MAX_ROWS, MAX_ROWS), (100, 5, 4), (20, 2, 2)],
)
def test_a_bar_chart_draws_the_rows_its_height_leaves_readable(height, rows, with_null):
    # 14 px labels need about 17 px a row; a null row takes one of them.
    assert rows_that_fit(height, label_px=14.0) == rows
    assert rows_that_fit(height, other_rows=1, label_px=14.0) == with_null
    _, shown = row_positions(list(range(15)), [f"t{i}" for i in range(15)], rows)
    assert len(shown) == rows - 1  # and "all others"


def test_the_rows_follow_a_new_height(monkeypatch):
    fig = make_figure("Weights")
    redraws = []
    rows = FitRows(fig, lambda: redraws.append(1))
    assert rows.max_rows() == MAX_ROWS  # not drawn yet
    monkeypatch.setattr(FitRows, "_fit", lambda self: 5)
    rows._changed("inner_height", None, 100)
    assert redraws == [1]
