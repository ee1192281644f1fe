"""The lab by keyboard alone in Chromium. The teaching tabs: Tab reaches the open tab, the
arrows, Home and End open the others (their views are built and shown), focus follows the open
tab even when the server rebuilds the headers, and the roles and selected state are exposed
(tab_keys.js). The trained model's sidebar: Tab goes through its multi-choice boxes and on, with
no trap (control_names.js)."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from .labpage import FOCUSED, wait_until_settled

pytestmark = pytest.mark.browser

# The focused element through shadow roots: its role, text and aria-selected.
FOCUSED_TAB = """() => {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  return el ? [el.getAttribute('role'), el.textContent.trim(), el.getAttribute('aria-selected')]
    : [null, '', null];
}"""
# Every tab and tab list, shadow roots included.
TABS = """() => {
  const out = {tablists: [], tabs: [], panels: []};
  (function walk(root) {
    for (const el of root.querySelectorAll('*')) {
      const role = el.getAttribute('role');
      if (role === 'tablist') out.tablists.push(el.getAttribute('aria-label'));
      if (role === 'tab') out.tabs.push([el.textContent.trim(), el.getAttribute('aria-selected'),
        el.tabIndex, el.getAttribute('aria-controls')]);
      if (role === 'tabpanel' && el.checkVisibility({visibilityProperty: true})) out.panels.push(
        [el.id, el.getAttribute('aria-labelledby')]);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  })(document);
  return out;
}"""


def tab_to_the_tabs(page, limit: int = 80) -> list:
    """Press Tab from the top until a tab has focus; its [role, text, selected]."""
    page.locator("body").focus()
    for _ in range(limit):
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUSED_TAB)
        if focused[0] == "tab":
            return focused
    raise AssertionError(f"no tab reached in {limit} Tab presses")


def press(lab, key: str, name: str) -> None:
    """Press `key` on the focused tab and wait for `name` to be the open, focused tab."""
    lab.page.keyboard.press(key)
    lab.wait_until(
        lambda: lab.page.evaluate(FOCUSED_TAB) == ["tab", name, "true"],
        f"{key} to open and focus {name!r} (focused: {lab.page.evaluate(FOCUSED_TAB)})",
        30,
    )


def test_the_teaching_tabs_open_from_the_keyboard(open_lab):
    lab = open_lab("", more_settings=False)
    wait_until_settled(lab.page)
    assert tab_to_the_tabs(lab.page) == ["tab", "Lessons", "true"]
    found = lab.page.evaluate(TABS)
    assert found["tablists"] == ["Teaching"]
    names = [t[0] for t in found["tabs"]]
    assert names == ["Lessons", "Why is it sharp?", "Audit", "Share & export"]
    # One Tab stop for the row: the open tab; the shown panel is labelled by it.
    assert [t[2] for t in found["tabs"]] == [0, -1, -1, -1]
    assert len(found["panels"]) == 1, found
    panel = found["panels"][0]
    assert panel[0] == found["tabs"][0][3] and panel[1].endswith("-tab-0"), panel

    press(lab, "ArrowRight", "Why is it sharp?")
    lab.page.get_by_role("button", name="Why is it sharp?").wait_for(timeout=30000)
    press(lab, "End", "Share & export")
    lab.page.get_by_role("button", name="Copy a link to this exact lab").wait_for(timeout=30000)
    press(lab, "ArrowLeft", "Audit")
    lab.page.get_by_role("button", name="Run the audit").wait_for(timeout=30000)
    press(lab, "Home", "Lessons")
    press(lab, "ArrowLeft", "Share & export")  # wraps round
    press(lab, "ArrowRight", "Lessons")
    selected = [t[1] for t in lab.page.evaluate(TABS)["tabs"]]
    assert selected == ["true", "false", "false", "false"]


def test_the_models_tabs_reach_the_causal_map_by_keyboard(open_lab):
    lab = open_lab(f"?model=binding&text={quote('a=5; b=7; a=3; ?a')}", more_settings=False)
    lab.wait_until(lambda: "Experiments" in str(lab.page.evaluate(TABS)["tabs"]), "model tabs", 30)
    wait_until_settled(lab.page)
    assert tab_to_the_tabs(lab.page) == ["tab", "Lessons", "true"]
    press(lab, "End", "Causal map")
    lab.page.get_by_role("button", name="Measure every head").wait_for(timeout=30000)
    press(lab, "ArrowLeft", "Experiments")


def test_tab_goes_on_past_the_models_multi_choice_boxes(open_lab):
    lab = open_lab(f"?model=binding&text={quote('a=5; b=7; a=3; ?a')}", more_settings=False)
    lab.wait_until(lambda: lab.shows("Hide positions from this head"), "the model's sidebar", 30)
    wait_until_settled(lab.page)
    lab.page.locator("input.choices__input--cloned").first.focus()
    reached = []
    for _ in range(4):
        lab.page.keyboard.press("Tab")
        reached.append(lab.page.evaluate(FOCUSED))
    # Before, Tab from the box went to its open list (a scroller), which then hid: focus fell
    # to <body> and came back to the box, again and again.
    assert reached == [
        "Ablate heads (zero their output)",
        "Clear the intervention",
        "Run the model with",
        reached[3],
    ], reached
    assert reached[3] != "Hide positions from this head"


# The focused element's slider attributes, through shadow roots.
FOCUSED_TIP = """() => {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  return el ? [el.getAttribute('role'), el.getAttribute('aria-label'),
    el.getAttribute('aria-valuetext')] : [null, null, null];
}"""


def test_the_planes_tips_move_by_keyboard_alone(open_lab):
    from app.views.tip_keys import ANGLE_STEP, KEY_STEP

    from .labpage import FIND_CHECKBOX

    lab = open_lab("", more_settings=False)
    page = lab.page
    wait_until_settled(page)
    # From the last control of the route's settings, Tab reaches the query's tip, then key A's.
    boxes = page.locator("input[type=checkbox]")
    boxes.nth(boxes.evaluate_all(FIND_CHECKBOX, "Divide logits")).focus()
    page.keyboard.press("Tab")
    assert page.evaluate(FOCUSED_TIP) == ["slider", "Query q", "angle 0 degrees"]
    page.keyboard.press("Tab")
    assert page.evaluate(FOCUSED_TIP) == ["slider", "Key A", "x 1.00, y 0.00"]
    keys_before = lab.data("geometry")
    # Two steps right, then one Shift step up: key A moves to (1.2, 0.5), focus stays on it.
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Shift+ArrowUp")
    x, y = 1.0 + 2 * KEY_STEP, 5 * KEY_STEP
    lab.wait_until(
        lambda: page.evaluate(FOCUSED_TIP) == ["slider", "Key A", f"x {x:.2f}, y {y:.2f}"],
        "key A's new place, read on the focused tip",
    )
    assert f"keys={x:g},{y:g}" in lab.search().replace("%2C", ",").replace("%3B", ";")
    lab.wait_for_change("geometry", keys_before)  # the plane draws it
    # Back to the query: Up turns it anticlockwise, Shift five steps at a time.
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Shift+ArrowUp")
    angle = 6 * ANGLE_STEP
    lab.wait_until(
        lambda: page.evaluate(FOCUSED_TIP) == ["slider", "Query q", f"angle {angle:.0f} degrees"],
        "the query's new angle, read on the focused tip",
    )
    lab.wait_until(lambda: f"angle={angle:g}" in lab.search(), "the angle in the address")


def test_after_measure_one_tab_reaches_the_next_step_and_focus_follows_it(open_lab):
    """Next sits above the step, many Tabs on from Measure (or four back): under the verdict,
    "On to step N" is the next Tab stop, and once the step opens focus is on its title, from
    where Tab goes on to its prediction."""
    from app.views.lesson_panel import ALL_LESSONS

    lab = open_lab("?lesson=2", more_settings=False)
    wait_until_settled(lab.page)
    measure = lab.page.get_by_role("button", name="Measure", exact=True).first
    lab.wait_until(measure.is_enabled, "step 2 ready to measure")
    measure.focus()
    lab.page.keyboard.press("Enter")
    lab.wait_until(lambda: lab.shows("On to step 3 ▶"), "the way on under the verdict")
    assert lab.shows("Measured:")
    lab.page.keyboard.press("Tab")
    assert lab.page.evaluate(FOCUSED) == "On to step 3 ▶"
    lab.page.keyboard.press("Enter")
    lab.wait_until(lambda: "lesson=3" in lab.search(), "step 3 in the address")
    title = ALL_LESSONS[2].title
    lab.wait_until(
        lambda: lab.page.evaluate(FOCUSED) == title,
        f"focus on step 3's title (focused: {lab.page.evaluate(FOCUSED)!r})",
    )
    assert not lab.shows("On to step")  # hidden until step 3 is measured
    lab.page.keyboard.press("Tab")
    assert lab.page.evaluate(FOCUSED) in ALL_LESSONS[2].choices


def test_join_a_class_unfolds_by_keyboard_and_the_next_tab_reaches_the_code(open_lab):
    # The form's fields are built when the card first unfolds; the header keeps the focus
    # that unfolded it (filling the card itself redrew the header: focus fell to the body).
    lab = open_lab("", more_settings=False)
    wait_until_settled(lab.page)
    header = lab.page.locator(".lab-class-join").get_by_role("button").first
    header.focus()
    lab.page.keyboard.press("Enter")
    code = lab.page.get_by_placeholder("e.g. ACE F47")
    code.wait_for(timeout=30000)
    focused_class = """() => {
      let el = document.activeElement;
      while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
      return el ? el.className : null;
    }"""
    assert "card-header" in lab.page.evaluate(focused_class)  # still on the header
    lab.page.keyboard.press("Tab")
    assert lab.page.evaluate(FOCUSED) == "Class code"
