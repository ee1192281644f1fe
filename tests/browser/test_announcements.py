"""What a screen reader hears, read in Chromium from the page's one polite live region (the
summary's, app/views/status.py): a slider sweep by keyboard is said once it settles, from where
it started to where it stopped; Measure's verdict is said; a student's vote is said to be
counted (app/views/announcer.py)."""

from __future__ import annotations

from urllib.parse import parse_qs

import pytest

from app.state.lab_state import LabState
from app.state.route_news import leaders, vote_counted
from app.views.lesson_panel import ALL_LESSONS

from .labpage import wait_until_settled
from .test_class_browser import start_class, wait_for_step

pytestmark = pytest.mark.browser

# The live region (role=status, aria-live=polite) with its text, and how many times its text
# was written since `WATCH` ran; shadow roots included.
FIND_NEWS = """() => {
  return (function find(root) {
    for (const el of root.querySelectorAll('*')) {
      if (el.classList.contains('lab-news')) return el;
      const inner = el.shadowRoot && find(el.shadowRoot);
      if (inner) return inner;
    }
    return null;
  })(document);
}"""
READ_NEWS = f"""() => {{
  const el = ({FIND_NEWS})();
  return el === null ? null : {{text: el.textContent, role: el.getAttribute('role'),
    live: el.getAttribute('aria-live'), said: window.__labSaid || 0,
    all: window.__labAllSaid || []}};
}}"""
# Counts the sentences written since it ran, and keeps each of them (a later sentence, such as
# a route's news, may replace one before the test has read it).
WATCH = f"""() => {{
  const el = ({FIND_NEWS})();
  window.__labSaid = 0;
  window.__labAllSaid = [];
  new MutationObserver(() => {{
    window.__labSaid += 1;
    window.__labAllSaid.push(el.textContent);
  }}).observe(el, {{childList: true, characterData: true, subtree: true}});
}}"""


def news(lab) -> dict:
    found = lab.page.evaluate(READ_NEWS)
    assert found is not None, "no live region in the page"
    return found


# Whether the lesson's result line (Measure's verdict) has its first lines inside the window.
VERDICT_IN_VIEW = """() => {
  let found = null;
  (function walk(root) {
    for (const el of root.querySelectorAll('*')) {
      if (!found && el.classList.contains('lab-lesson-result') && el.getClientRects().length)
        found = el;
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  })(document);
  if (found === null) return false;
  const r = found.getBoundingClientRect();
  return r.top >= 0 && r.top + 60 <= window.innerHeight;
}"""


def verdict_in_view(lab) -> bool:
    return lab.page.evaluate(VERDICT_IN_VIEW)


def angle_of(search: str) -> float:
    return float(parse_qs(search.lstrip("?")).get("angle", ["0"])[0])


def test_a_sweep_is_said_once_settled_and_measures_verdict_is_said(open_lab):
    lab = open_lab("", more_settings=False)
    lab.server_round_trip()
    start = news(lab)
    assert (start["role"], start["live"]) == ("status", "polite")
    assert start["text"] == ""  # nothing has changed yet
    lab.page.evaluate(WATCH)
    presses = 12
    lab.slider_keys("Query angle", "ArrowRight", times=presses)
    lab.wait_until(lambda: angle_of(lab.search()) > 0, "the new angle in the address")
    lab.server_round_trip()  # every press has been drawn
    final = LabState()
    assert final.try_update(angle=angle_of(lab.search()))
    # The news names the route where the sweep stopped (that it is said from where the sweep
    # started is tests/app/test_route_news.py's, which runs the page's waits by hand)...
    lab.wait_until(
        lambda: f": {leaders(final.snapshot)}" in news(lab)["text"],
        "the news of the route where the sweep stopped",
    )
    # ... and it is not said once per press: a flood would be a sentence for each of them.
    assert news(lab)["said"] < presses / 2, news(lab)
    # Measure: its verdict is said (after the step's own set-up, which moves the route), and
    # on a laptop's screen, where it was drawn below the fold, it is scrolled into view.
    # A laptop's screen, its sidebar folded as a page opened there has it.
    lab.page.set_viewport_size({"width": 1366, "height": 768})
    lab.page.locator("#sidebar-toggle").click()
    wait_until_settled(lab.page)
    lab.click_button("Load this step")
    lab.wait_until(lambda: "lesson=1" in lab.search(), "step 1 loaded")
    # The step redraws the lesson panel: Measure is pressed on the panel it drew.
    lab.server_round_trip()
    wait_until_settled(lab.page)
    lab.click_button("Measure")
    verdict = lab.wait_until(
        lambda: next((s for s in news(lab)["all"] if "Measured:" in s), None),
        "Measure's verdict said",
    )
    lab.wait_until(lambda: verdict_in_view(lab), "the verdict scrolled into view")
    assert "You made no prediction this time." in verdict


def test_a_students_vote_is_said_to_be_counted(open_lab):
    teacher, code = start_class(open_lab)
    student = open_lab(f"?class={code}", more_settings=False)
    teacher.page.get_by_role("button", name="Load this step").click()
    teacher.page.get_by_role("button", name="Next ▶").click()
    wait_for_step(student, 2)
    choice = ALL_LESSONS[1].choices[0]
    student.page.get_by_text(choice, exact=True).click()
    student.wait_until(
        lambda: vote_counted(choice) in news(student)["text"], "the vote said to be counted", 30
    )
