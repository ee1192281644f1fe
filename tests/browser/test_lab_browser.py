"""The served lab in headless Chromium: each control moves the named sources as the math says.

One page serves the control tests (few sessions: the machine has two cores), reset to the
default scenario before each of them, so each starts from the same lab whatever ran before it
(they once relied on running in file order: a key masked or dragged by one test was the next
one's starting point); the URL and isolation tests open their own pages. Data are read from the page's Bokeh document, i.e. what
the browser actually draws.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from urllib.parse import parse_qs

import numpy as np
import pytest

from app.state.lab_state import LabState

from .labpage import SOURCE_NAMES, wait_for_names

# Whether the analysis placeholder is a fifth in sight (its own observer's threshold), as an
# IntersectionObserver made now first reports it; and each placeholder's `seen`, as the page
# holds it (set by that observer, then sent to the server).
PLACEHOLDER_IN_SIGHT = """() => new Promise(resolve => {
  const box = (function find(root) {
    for (const el of root.querySelectorAll('*')) {
      if (el.classList.contains('lab-deferred')) return el;
      const inner = el.shadowRoot && find(el.shadowRoot);
      if (inner) return inner;
    }
    return null;
  })(document);
  const observer = new IntersectionObserver(entries => {
    observer.disconnect();
    resolve(entries.some(e => e.isIntersecting));
  }, {threshold: 0.2});
  observer.observe(box);
})"""
PLACEHOLDERS_SEEN = """() => [...Bokeh.documents[0].all_models]
  .filter(m => m.data != null && typeof m.data === 'object' && 'seen' in m.data)
  .map(m => m.data.seen)"""

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def shared_page(chromium, lab_server, problems):
    from .labpage import LabPage

    page = LabPage(chromium, lab_server.url, problems)
    yield page
    page.close()


DEFAULT_WEIGHTS = LabState().snapshot.weights


@pytest.fixture
def lab(shared_page):
    """The module's page, put back to the default scenario ("Reset this scenario", which resets
    every control) unless its address says it is there, and checked there: the default address
    and the default weights drawn."""
    page = shared_page
    if page.search() != "":  # the address holds every setting: empty is the default lab
        page.click_button("Reset this scenario")
        page.server_round_trip()  # the reset's redraw has arrived
    page.wait_until(lambda: page.search() == "", "the default lab's address")
    page.wait_until(
        lambda: np.allclose(page.column("weights", "weight"), DEFAULT_WEIGHTS, atol=1e-6),
        "the default weights drawn",
    )
    assert all(page.data("weights")["legal"]), "a key is still masked after the reset"
    return page


def test_every_named_source_is_drawn(lab):
    lab.show_analysis()
    for name in SOURCE_NAMES:
        data = lab.data(name)
        assert data and all(len(col) > 0 for col in data.values()), name
    weights = lab.column("weights", "weight")
    assert len(weights) == 3
    assert math.isclose(weights.sum(), 1.0, abs_tol=1e-5)
    assert not lab.shows("Traceback")


# Controls whose accessible name the page's a11y script sets (the others have it natively).
SCRIPT_NAMED = (
    "Query angle (degrees)",
    "Normalise q and keys to unit length",
    "Temperature τ (log scale)",
    "d_k (key dimension, log scale)",
    "Divide logits by √d_k",
    "Causal (hide later keys)",
    "Null route (refuse when nothing is good enough)",
    "Distractor keys",
    "Distractor norm",
    "Null-route threshold (logit)",
    "A: takes part",
    "C: takes part",
)


def test_every_control_is_reachable_by_keyboard(lab):
    lab.show_pair_rows()  # each pair's inputs, behind their own button
    lab.wait_until(lambda: lab.shows("Divide logits by √d_k"), "the sidebar")
    wait_for_names(lab.page, SCRIPT_NAMED)
    reached = set(lab.tab_through(120))
    for name in (
        "Scenario",
        *SCRIPT_NAMED,
        "Swap values",
        "Load this step",
        # The teaching tabs are one Tab stop, the open tab; the arrow keys open the others
        # (tests/browser/test_tabs_keyboard.py).
        "Lessons",
    ):
        assert any(text.startswith(name) for text in reached), f"{name!r} not reachable by Tab"


# A stylesheet of BokehJS's written twice, the same text then a new one, under a
# MutationObserver: how many writes reached the page, and the text it holds.
SAME_TEXT_WRITES = """() => new Promise(resolve => {
  const {InlineStyleSheet} = Bokeh.require('core/dom');
  const sheet = new InlineStyleSheet(':host { left: 1px; }');
  let writes = 0;
  const observer = new MutationObserver(records => { writes += records.length; });
  observer.observe(sheet.el, {childList: true, characterData: true, subtree: true});
  sheet.replace(':host { left: 1px; }');
  sheet.replace(':host { left: 2px; }');
  setTimeout(() => { observer.disconnect(); resolve({writes, css: sheet.css}); }, 0);
})"""


def test_a_plot_stylesheet_is_rewritten_only_when_its_text_changes(lab):
    """page_tools.js: BokehJS rewrites each renderer's <style> at every paint, and each write
    makes the browser recompute styles; a text it already holds is not written again."""
    assert lab.page.evaluate(SAME_TEXT_WRITES) == {"writes": 1, "css": ":host { left: 2px; }"}


def test_number_boxes_name_their_spin_buttons(lab):
    lab.show_pair_rows()  # each pair's inputs, behind their own button
    lab.wait_until(lambda: lab.shows("Distractor norm"), "the sidebar")
    # The a11y script names every box's two buttons in one pass: wait for a pass after the
    # boxes were drawn (the pair boxes are the last), then read them all.
    wait_for_names(lab.page, ["Increase Distractor norm", "Decrease A key x"])
    names = lab.page.locator("button.bk-spin-btn").evaluate_all(
        "buttons => buttons.map(b => b.getAttribute('aria-label') || '')"
    )
    assert len(names) >= 2 * 6, names  # four editable sliders, the seed, the pair boxes
    assert all(n.startswith(("Increase ", "Decrease ")) and len(n) > 9 for n in names), names
    assert "Increase Distractor norm" in names and "Decrease A key x" in names  # pair named


def test_swap_values_keeps_weights_and_moves_contributions(lab):
    weights = lab.column("weights", "weight")
    contributions = lab.data("contributions")
    lab.click_button("Swap values")  # A <-> B by default
    after = lab.wait_for_change("contributions", contributions)
    np.testing.assert_allclose(lab.column("weights", "weight"), weights, atol=1e-6)
    assert not np.allclose(after["cx"], contributions["cx"]) or not np.allclose(
        after["cy"], contributions["cy"]
    )


def test_rotating_the_query_changes_the_weights(lab):
    before = lab.data("weights")
    lab.slider_keys("Query angle", "ArrowRight", times=10)
    after = lab.wait_for_change("weights", before)
    assert not np.allclose(after["weight"], before["weight"], atol=1e-4)
    lab.wait_until(lambda: "angle=" in lab.search(), "the angle to reach the URL")


@pytest.mark.parametrize("viewport", [(1920, 1080), (1366, 768), (390, 844)])
def test_analysis_plots_wait_below_the_first_screen_until_scrolled_to(
    chromium, lab_server, viewport
):
    from .labpage import LOADED, show_analysis, wait_until_settled

    page = chromium.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    try:
        page.goto(lab_server.url)
        page.wait_for_function(LOADED, timeout=30000)
        wait_until_settled(page)  # laid out as it stays
        # The placeholder's own observer would have fired by the time one made now reports:
        # observers are told of a change in the order they were made.
        assert page.evaluate(PLACEHOLDER_IN_SIGHT) is False
        assert page.evaluate(PLACEHOLDERS_SEEN) == [False]  # so it told the server nothing
        figures = "() => [...Bokeh.documents[0].all_models].filter(m => m.type === 'Figure').length"
        assert page.evaluate(figures) == 4  # planes, weights, logits
        show_analysis(page, by_scrolling=True)
        assert page.evaluate(figures) == 8
        assert not page.locator(".lab-deferred").count()
    finally:
        page.close()


def test_more_settings_open_from_the_keyboard_and_when_a_lesson_needs_them(open_lab):
    from .labpage import FOCUSED

    page = open_lab(more_settings=False)
    button = page.page.locator("button.lab-disclosure").first  # "More settings"; pairs inside
    assert button.get_attribute("aria-expanded") == "false"
    assert not page.shows("Distractor keys")
    button.focus()
    assert page.page.evaluate(FOCUSED).startswith("More settings")
    page.page.keyboard.press("Enter")
    page.wait_until(lambda: page.shows("Distractor keys"), "the candidate controls")
    assert button.get_attribute("aria-expanded") == "true"
    wait_for_names(page.page, ["Causal"])  # the a11y script has named the opened section
    page.page.keyboard.press("Tab")  # focus goes on into the opened section
    assert page.page.evaluate(FOCUSED).startswith("Causal")
    # A fresh page: "Load this step" on step 1 (it swaps values) opens the section itself.
    fresh = open_lab(more_settings=False)
    fresh.click_button("Load this step")
    fresh.wait_until(lambda: fresh.shows("Swap the value of"), "the pairs editor")


def test_lower_temperature_keeps_ranking_and_lowers_entropy(lab):
    lab.show_analysis()
    weights = lab.column("weights", "weight")
    now = lab.data("entropy_now")
    lab.slider_keys("Temperature", "PageDown", times=12)  # 12 pages of 5 x 0.005 in log10: x0.5
    after_now = lab.wait_for_change("entropy_now", now)
    assert after_now["temperature"][0] < now["temperature"][0]
    assert after_now["entropy"][0] < now["entropy"][0]
    lowered = lab.column("weights", "weight")
    assert list(np.argsort(-lowered)) == list(np.argsort(-weights))
    assert lowered.max() > weights.max()


def test_larger_d_k_without_scale_sharpens_the_route(lab):
    lab.show_analysis()
    lab.toggle_checkbox("Divide logits by")
    lab.wait_until(lambda: "scale=false" in lab.search(), "scale=false in the URL")
    logits = lab.data("logits")
    np.testing.assert_allclose(logits["scaled"], logits["raw"], rtol=1e-6)
    now = lab.data("entropy_now")
    lab.slider_keys("d_k", "ArrowRight", times=6)  # 2 -> 128
    lab.wait_until(lambda: lab.model_attr("d_k_marker", "location") == 128, "d_k marker at 128")
    after = lab.wait_for_change("entropy_now", now)
    assert after["entropy"][0] < now["entropy"][0] - 0.3


def test_dragging_a_key_tip_moves_the_key_and_the_route(lab):
    geometry = lab.data("geometry")
    weights = lab.data("weights")
    c = geometry["kind"].index("key") + 2  # key C's row
    start = (geometry["x1"][c], geometry["y1"][c])
    lab.drag("address_plot", start, (1.0, 1.0))
    # Mid-drag syncs (every 250 ms) may land first; the release brings the final position.
    moved = lab.wait_until(
        lambda: (g := lab.data("geometry"))["x1"][c] == pytest.approx(1.0, abs=0.03) and g,
        "C to reach the release point",
    )
    assert moved["x1"][c] == pytest.approx(1.0, abs=0.03)
    assert moved["y1"][c] == pytest.approx(1.0, abs=0.03)
    lab.wait_for_change("weights", weights)

    def c_in_the_address():
        # The address is the server's: C there at the release point means the drag's last
        # sync has arrived (the plot above can be the browser's own preview). Waiting for any
        # keys= let a late sync land after the next test's Reset and undo it, under load.
        pairs = parse_qs(lab.search().lstrip("?")).get("keys", [""])[0].split(";")
        return len(pairs) == 3 and np.allclose(
            [float(v) for v in pairs[2].split(",")], (moved["x1"][c], moved["y1"][c]), atol=0.02
        )

    lab.wait_until(c_in_the_address, "the dragged key's release point to reach the URL")


def test_masking_a_key_gives_it_zero_weight_and_a_label(lab):
    lab.show_pair_rows()  # each pair's inputs, behind their own button
    before = lab.data("weights")
    lab.toggle_checkbox("C: takes part")
    after = lab.wait_for_change("weights", before)
    assert after["weight"][2] == 0.0
    assert after["mask_text"][2] != "" and not after["legal"][2]
    logits = lab.data("logits")
    assert logits["logit"][2] == -math.inf
    assert logits["mask_text"][2] != ""  # drawn as a labelled hatch, not by colour alone
    assert math.isclose(sum(after["weight"]), 1.0, abs_tol=1e-5)


def test_masking_every_key_shows_a_message_and_keeps_the_drawing(lab):
    lab.show_pair_rows()  # each pair's inputs, behind their own button
    for i, name in ((2, "C"), (1, "B")):  # mask C and B
        lab.toggle_checkbox(f"{name}: takes part")
        lab.wait_until(lambda i=i: lab.column("weights", "weight")[i] == 0.0, f"{name} masked")
    drawn = {name: lab.data(name) for name in ("weights", "contributions", "geometry")}
    lab.toggle_checkbox("A: takes part")
    lab.wait_until(lambda: lab.shows("That change was not applied"), "the error banner")
    assert lab.shows("every key is masked")
    lab.server_round_trip()  # whatever the refused change was going to redraw has arrived
    for name, data in drawn.items():
        assert lab.data(name) == data, f"{name} lost its last valid drawing"
    assert not lab.shows("Traceback")
    # the session is alive: unmasking redraws
    lab.toggle_checkbox("A: masked")
    lab.wait_until(lambda: lab.column("weights", "weight")[0] == 1.0, "A takes the whole route")
    lab.wait_until(lambda: not lab.shows("That change was not applied"), "the banner to go")


def test_url_round_trip(open_lab):
    page = open_lab("?temperature=0.5&d_k=64&scale=false&scenario=bank")
    page.show_analysis()
    assert page.data("weights")["label"] == ["the (1)", "bank", "approved", "the (2)", "loan"]
    assert page.data("entropy_now")["temperature"] == [0.5]
    assert page.model_attr("d_k_marker", "location") == 64
    logits = page.data("logits")
    np.testing.assert_allclose(logits["scaled"], logits["raw"], rtol=1e-6)  # scale=false
    search = page.search()
    for part in ("temperature=0.5", "d_k=64", "scale=false", "scenario=bank"):
        assert part in search
    page.slider_keys("Temperature", "ArrowRight", times=2)
    page.wait_until(
        lambda: _query_float(page.search(), "temperature") > 0.5, "the URL to follow the slider"
    )
    # Both presses may not have landed yet: compare with the address as it is at each look.
    page.wait_until(
        lambda: (
            page.data("entropy_now")["temperature"][0]
            == pytest.approx(_query_float(page.search(), "temperature"), rel=1e-5)
        ),
        "the entropy marker to sit at the URL's temperature",
    )


def test_bad_url_values_are_named_and_the_page_loads(open_lab):
    # A `?` inside a forwarded link's value (`note=why?`) blanked the page in Panel 1.9.4
    # (app/patches/panel_location.py).
    page = open_lab("?temperature=hot&d_k=99999&scenario=bank&note=why?")
    page.wait_until(lambda: len(page.link_warnings()) >= 3, "a warning per problem")
    text = " ".join(page.link_warnings())
    assert "temperature" in text and "d_k" in text and "'note'" in text
    assert page.data("weights")["label"][1] == "bank"  # the valid part still applied
    page.show_analysis()
    assert page.data("entropy_now")["temperature"] == [1.0]  # the bad one fell back
    assert not page.shows("Traceback")


def test_two_sessions_do_not_affect_each_other(open_lab):
    first, second = open_lab(), open_lab()
    untouched = second.data("contributions")
    before = first.data("contributions")
    first.click_button("Swap values")
    swapped = first.wait_for_change("contributions", before)
    # The second page has heard nothing of it: its own swap, answered in its own session, is
    # the first change it draws (had the first page's swap reached it, its own would draw no
    # change, or swap back), and it lands exactly where the first page's did.
    assert second.data("contributions") == untouched and second.search() == ""
    second.click_button("Swap values")
    assert second.wait_for_change("contributions", untouched) == swapped
    second.wait_until(lambda: second.search() == first.search(), "the same address as the first")
    assert first.data("contributions") == swapped  # and the first page heard nothing back


def test_teaching_panels_lesson_audit_and_import(open_lab, tmp_path):
    page = open_lab()
    # A lesson step: load, predict, act, measure.
    page.click_button("Load this step")
    page.page.get_by_text("The weights stay exactly the same and the output moves").click()
    page.click_button("Do it for me")
    page.server_round_trip()
    assert page.data("contributions")["x1"] == []  # the output is held back until Measure
    page.click_button("Measure")
    page.wait_until(lambda: page.shows("Your prediction was right."), "the lesson's verdict")
    assert page.shows("The measurement bears it out.")
    # The audit lists its checks.
    page.open_tab("Audit")
    page.click_button("Run the audit")
    page.wait_until(lambda: page.shows("checks pass"), "the audit summary")
    # An impossible import is refused with a message; the lab keeps going.
    page.open_tab("Share & export")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "attention-lab/1", "temperature": "hot"}')
    weights = page.data("weights")
    page.page.locator("input[type=file]").set_input_files(str(bad))
    page.wait_until(lambda: page.shows("bad.json was not imported"), "the import refusal")
    assert page.data("weights") == weights
    good = tmp_path / "good.json"
    good.write_text('{"format": "attention-lab/1", "scenario": "contest", "temperature": 2.0}')
    page.page.locator("input[type=file]").set_input_files(str(good))
    page.wait_until(lambda: page.data("weights")["label"][0] == "logit 2", "the imported scenario")
    page.show_analysis()
    assert page.data("entropy_now")["temperature"] == [2.0]
    assert "scenario=contest" in page.search()
    # The share button puts this exact lab's address on the clipboard.
    page.click_button("Copy a link to this exact lab")
    page.wait_until(lambda: page.shows("Link copied"), "the copy confirmation")
    copied = page.page.evaluate("() => navigator.clipboard.readText()")
    assert copied == page.page.url and "scenario=contest" in copied
    # Exports: the configuration round-trips, the CSV has one row per key.
    with page.page.expect_download() as info:
        page.click_button("Download configuration (JSON)")
    config = json.loads(Path(info.value.path()).read_text())
    assert config["scenario"] == "contest" and config["temperature"] == 2.0
    with page.page.expect_download() as info:
        page.click_button("Download current numbers (CSV)")
    rows = list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text())))
    assert [r["label"] for r in rows] == ["logit 2", "logit 1", "logit 0"]
    assert math.isclose(sum(float(r["weight"]) for r in rows), 1.0, abs_tol=1e-9)


def test_no_console_errors_and_nothing_fetched_from_outside(problems, open_lab):
    """No page of the browser suite so far, and at least a page of its own (opened, drawn in
    full, a control moved), logged an error or fetched anything from off the machine."""
    page = open_lab()
    page.show_analysis()
    before = page.data("contributions")
    page.click_button("Swap values")
    page.wait_for_change("contributions", before)
    page.server_round_trip()
    assert problems == []


def _query_float(search: str, key: str) -> float:
    from urllib.parse import parse_qs

    return float(parse_qs(search.lstrip("?"))[key][0])
