"""Lessons in headless Chromium: a step link survives a reload, Next loads the next step and
updates the address, and a bad link shows exactly one notification per problem."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.browser


def test_a_step_link_survives_a_reload_and_next_loads_the_next_step(open_lab):
    page = open_lab("?lesson=5")
    page.wait_until(lambda: page.shows("Step 5 of"), "step 5 in the lessons pane")
    assert "lesson=5" in page.search() and "scale=false" in page.search()
    assert page.data("logits")["raw"] == []  # held back until Measure (app/page/held.py)
    page.click_button("Measure")
    page.wait_until(lambda: page.data("logits")["raw"], "the logits after Measure")
    logits = page.data("logits")
    np.testing.assert_allclose(logits["scaled"], logits["raw"], rtol=1e-6)  # step 5: unscaled
    page.page.reload()
    page.page.wait_for_function(
        "() => window.Bokeh && Bokeh.documents.length > 0 && "
        "Bokeh.documents[0].get_model_by_name('weights') !== null"
    )
    page.wait_until(lambda: page.shows("Step 5 of"), "step 5 after the reload")
    assert not page.shows("Step 1 of")
    page.click_button("Next ▶")
    page.wait_until(lambda: page.shows("Step 6 of"), "step 6 after Next")
    page.wait_until(lambda: "lesson=6" in page.search(), "the address to name step 6")
    # Step 6's set-up: d_k 512 with the scale off.
    page.show_analysis()  # the d_k marker lives in the analysis plots
    page.click_button("Measure")  # which draws the plots the step held back
    page.wait_until(lambda: page.model_attr("d_k_marker", "location") == 512, "d_k at 512")
    assert "d_k=512" in page.search() and "scale=false" in page.search()
    assert page.shows("What does the 1/√d_k scale do?")


def test_a_bad_link_shows_one_notification_per_problem(open_lab):
    page = open_lab("?temperature=hot&d_k=99999&scenario=bank")
    page.wait_until(lambda: len(page.link_warnings()) >= 2, "the two warnings")
    page.server_round_trip()  # a repeat would have arrived before the marker's answer
    lines = page.link_warnings()
    assert len(lines) == 2, lines
    assert sum("temperature" in t for t in lines) == 1 and sum("d_k" in t for t in lines) == 1


def test_a_bad_step_number_warns_once_and_opens_step_one(open_lab):
    page = open_lab("?lesson=99")
    page.wait_until(lambda: page.link_warnings(), "the warning")
    page.server_round_trip()  # a repeat would have arrived before the marker's answer
    lines = page.link_warnings()
    assert len(lines) == 1 and "lesson" in lines[0] and "showing step 1" in lines[0]
    assert page.shows("Step 1 of")
    page.wait_until(lambda: "lesson=1" in page.search(), "the address to name step 1")


def test_reverse_the_pairs_keeps_the_output(open_lab):
    page = open_lab()
    weights = page.data("weights")
    contributions = page.data("contributions")
    page.click_button("Reverse the pairs")
    after = page.wait_for_change("weights", weights)
    assert after["label"] == weights["label"][::-1]
    np.testing.assert_allclose(after["weight"], weights["weight"][::-1], atol=1e-6)
    moved = page.data("contributions")
    total = (sum(moved["cx"]), sum(moved["cy"]))
    assert total == pytest.approx((sum(contributions["cx"]), sum(contributions["cy"])), abs=1e-5)


def test_turning_the_query_by_dragging_is_judged_fairly(open_lab):
    page = open_lab("?lesson=2")
    page.wait_until(lambda: page.shows("Step 2 of"), "step 2")
    page.page.get_by_text("C wins: it points up").first.click()
    tip = page.data("query_tip")
    x, y = tip["x"][0], tip["y"][0]
    page.drag("address_plot", (x, y), (-y, x))  # a quarter turn anticlockwise, by hand
    # Mid-drag syncs (every 250 ms) may reach the address first: wait for the whole turn.
    page.wait_until(
        lambda: _angle(page.search()) is not None and _angle(page.search()) > 75,
        "the quarter turn to reach the address",
    )
    page.server_round_trip()
    assert page.data("weights")["weight"] == []  # turned, not yet measured: held back
    page.click_button("Measure")
    page.wait_until(lambda: page.shows("Your prediction was right."), "the verdict")
    assert page.shows("The measurement bears it out.")


def test_no_console_errors_on_the_lesson_pages(problems):
    assert problems == []


def _angle(search: str) -> float | None:
    from urllib.parse import parse_qs

    values = parse_qs(search.lstrip("?")).get("angle")
    return float(values[0]) if values else None
