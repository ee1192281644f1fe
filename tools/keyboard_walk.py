"""Walk every lesson step by keyboard alone: `python -m tools.keyboard_walk`.

Serves the lab, opens step 1 in headless Chromium and, pressing only Tab, the arrow keys and
Enter: the skip link, then for each step a prediction (the first arrow press in the radio
group), "Do it for me", Measure and "On to step N", checking that focus lands on the next
step's title. Prints, per step, the Tab presses between those stops, whether the measurement
bore the prediction out, and the seconds it took; stops at the first step it cannot finish.
An audit to rerun after changing the lesson panel or the page's focus order (the trained
model's steps load their models as they come, so the whole walk takes a few minutes); the
suite's test_keyboard.py holds one step of it.
"""

from __future__ import annotations

import sys
import time

from app.views.lesson_panel import ALL_LESSONS
from tests.browser.labpage import FOCUSED, wait_until_settled
from tools.bench_ui import lab_page

# The focused element through shadow roots: its input type ('' for others).
FOCUSED_TYPE = """() => { let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  return el ? (el.type || '') : ''; }"""
# The lesson's result line as drawn (shadow roots included).
RESULT = """() => { const out = [];
  (function walk(root) { for (const el of root.querySelectorAll('*')) {
    if (el.classList.contains('lab-lesson-result')) out.push((el.shadowRoot || el).textContent);
    if (el.shadowRoot) walk(el.shadowRoot); } })(document);
  return out.join(' '); }"""
READY_S = 300  # a language model's first load on a slow machine


def tab_until(page, wanted, limit: int = 20) -> int:
    """Press Tab until `wanted(name, input type)` holds for the focused element; the presses."""
    passed = []
    for presses in range(1, limit + 1):
        page.keyboard.press("Tab")
        name, kind = page.evaluate(FOCUSED), page.evaluate(FOCUSED_TYPE)
        if wanted(name, kind):
            return presses
        passed.append(name[:30])
    raise AssertionError(f"not reached in {limit} Tabs, through {passed}")


def wait(condition, what: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds:g} s for {what}")
        time.sleep(0.2)


def walk_step(page, number: int) -> str:
    """One step by keyboard, from its title (or the lesson's first button) to the next one."""
    started = time.monotonic()
    measure = page.get_by_role("button", name="Measure", exact=True).first
    wait(measure.is_enabled, f"step {number} to be ready", READY_S)
    to_radio = tab_until(page, lambda name, kind: kind == "radio")
    page.keyboard.press("ArrowDown")
    to_act = 0  # a step with nothing to do has no "Do it for me"
    if ALL_LESSONS[number - 1].act is not None:
        to_act = tab_until(page, lambda name, kind: name == "Do it for me")
        page.keyboard.press("Enter")
    to_measure = tab_until(page, lambda name, kind: name == "Measure")
    page.keyboard.press("Enter")
    last = number == len(ALL_LESSONS)
    wait(lambda: "Measured:" in page.evaluate(RESULT), f"step {number}'s verdict", 120)
    held = "bears it out" in page.evaluate(RESULT)
    if not last:  # the way on under the verdict, drawn
        onward = page.get_by_text(f"On to step {number + 1}").first
        wait(onward.is_visible, f"step {number}'s way on", 120)
    line = f"step {number:2d}: Tabs to predict {to_radio}, act {to_act}, measure {to_measure}"
    if not last:
        presses = tab_until(page, lambda name, kind: name.startswith("On to step"))
        page.keyboard.press("Enter")
        title = ALL_LESSONS[number].title
        wait(lambda: page.evaluate(FOCUSED) == title, f"focus on step {number + 1}'s title", 120)
        line += f", on {presses}"
    return line + f"; borne out: {held}; {time.monotonic() - started:.1f} s"


def main(first: int = 1) -> None:
    with lab_page(f"?lesson={first}", viewport={"width": 1600, "height": 1000}) as page:
        wait_until_settled(page)
        page.locator("body").focus()
        skip = tab_until(page, lambda name, kind: name.startswith("Skip to the lesson"))
        page.keyboard.press("Enter")
        print(f"skip link: {skip} Tabs from the top; then focus on {page.evaluate(FOCUSED)!r}")
        for number in range(first, len(ALL_LESSONS) + 1):
            try:
                print(walk_step(page, number), flush=True)
            except AssertionError as problem:
                print(f"step {number:2d}: stopped: {problem}")
                raise SystemExit(1) from problem


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
