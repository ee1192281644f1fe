"""The first screen in the pseudo-locales and two real languages, in Chromium (issue 44).

In `x-long` every text of the page (header, sidebar, headline, plots' legends, the lesson panel
on a step that asks for a prediction, the tabs, the placeholder below; Why is it sharp? and the
Audit once run) carries the markers, so none escaped the catalogue, and none is clipped or
pushed off the screen, at a projector's 1920x1080, a laptop's 1366x768 and a phone's 390x844
(tests/browser/marked_text.py says what the walk leaves out and why). In `x-rtl` the layout holds
and the sidebar sits on the right. axe finds nothing serious in Arabic or Spanish.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest

from app.i18n.translator import Translator
from app.page.held import HEADLINE

from . import marked_text
from .axe import BLOCKING, run_axe
from .labpage import LOADED, wait_until_settled

pytestmark = pytest.mark.browser

SIZES = ((1920, 1080), (1366, 768), (390, 844))
SIDEBAR = """() => { const r = document.getElementById('sidebar').getBoundingClientRect();
  return [r.left, r.right, r.width, innerWidth]; }"""
# The first screen's lesson panel on a step that asks for a prediction, its tabs, and below it
# the placeholder of the analysis plots.
FIRST = "?lesson=5&lang="


def _open(chromium, server, query: str, size: tuple[int, int]):
    page = chromium.new_page(viewport={"width": size[0], "height": size[1]})
    page.goto(server.url + query)
    # A held step draws no weights: its headline says "predict first" (its first letters, as
    # Panel encodes them), here in the page's language.
    code = query.rsplit("lang=", 1)[1]
    held = quote(Translator(code).gettext(HEADLINE)[:5], safe="")
    page.wait_for_function(LOADED.replace("'Predict first'", repr(held)), timeout=30000)
    wait_until_settled(page)
    return page


def test_the_whole_first_screen_is_marked_and_unclipped_in_x_long_at_three_sizes(
    chromium, lab_server
):
    page = _open(chromium, lab_server, FIRST + "x-long", SIZES[0])
    try:
        problems = []
        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            wait_until_settled(page)
            problems += marked_text.problems(page, f"{width}x{height}")
        assert not problems, "\n".join(problems[:15])
    finally:
        page.close()


def test_why_is_it_sharp_and_the_audit_are_marked_once_run(chromium, lab_server):
    """The engine's findings and checks (Phrases) are translated, not only the panels."""
    page = _open(chromium, lab_server, "?temperature=0.25&lang=x-long", SIZES[1])
    long = Translator("x-long").gettext
    try:
        problems = []
        for tab, button in ((1, "Why is it sharp?"), (2, "Run the audit")):
            page.locator(".lab-teaching .bk-tab").nth(tab).click()
            page.get_by_role("button", name=long(button), exact=True).click()
            page.locator(".lab-teaching table").first.wait_for(state="visible", timeout=30000)
            problems += marked_text.problems(page, button, root=".lab-teaching")
        assert not problems, "\n".join(problems[:15])
    finally:
        page.close()


def test_the_first_screen_mirrors_unclipped_in_x_rtl_at_three_sizes(chromium, lab_server):
    page = _open(chromium, lab_server, FIRST + "x-rtl", SIZES[0])
    try:
        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            wait_until_settled(page)
            seen = marked_text.shown_texts(page)
            clipped = [t for t in seen["texts"] if t["clipped"]]
            assert not clipped, f"{width}x{height}: clipped {clipped[:5]}"
            assert seen["page"] <= seen["width"] + 1, f"{width}: the page scrolls sideways"
            left, right, shown, window = page.evaluate(SIDEBAR)
            if shown > 0 and right > 0:
                # Shown: on the right half, its far edge at the window's right.
                assert left >= window / 2 - shown and right >= window - 2, (left, right, window)
    finally:
        page.close()


@pytest.mark.parametrize("code", ["ar", "es"])
def test_axe_finds_nothing_serious_in_arabic_and_spanish(chromium, lab_server, code):
    page = _open(chromium, lab_server, f"?lang={code}", SIZES[1])
    try:
        serious = [v.describe() for v in run_axe(page) if v.impact in BLOCKING]
        assert not serious, "\n".join(serious)
    finally:
        page.close()


# Each slider's track and handle (shadow roots included): [track left, right, handle centre].
SLIDERS = """() => { const out = [];
  const walk = root => { for (const el of root.querySelectorAll('.noUi-target')) {
      const t = el.querySelector('.noUi-base').getBoundingClientRect();
      const h = el.querySelector('.noUi-handle').getBoundingClientRect();
      out.push([t.left, t.right, (h.left + h.right) / 2]); }
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) walk(el.shadowRoot); };
  walk(document); return out; }"""


@pytest.mark.parametrize("code", ["ar", "en"])
def test_each_sliders_handle_stands_at_its_value_in_arabic_as_in_english(
    chromium, lab_server, code
):
    """A slider runs left to right in Arabic too (a number line, as the plots' axes); its
    handle stood a whole track to the right of its value on a right-to-left page."""
    page = _open(chromium, lab_server, f"?angle=0&d_k=2&lang={code}", SIZES[0])
    try:
        sliders = page.evaluate(SLIDERS)
        assert len(sliders) >= 3 and all(right - left > 50 for left, right, _ in sliders[:3])
        for left, right, centre in sliders:
            assert left - 1 <= centre <= right + 1, (code, left, right, centre)
        # The sidebar's first slider is the angle: 0 of -180..180 sits at the middle; d_k at
        # its lowest, 2, sits at the left end.
        (a_left, a_right, angle), *_, (d_left, _d_right, d_k) = sliders[:3]
        assert abs(angle - (a_left + a_right) / 2) <= 3, (code, sliders)
        assert abs(d_k - d_left) <= 3, (code, sliders)
    finally:
        page.close()


# The folded sidebar's cue and what else the header shows: [cue box, [other boxes]].
CUE_AND_HEADER = """() => {
  const box = el => { const r = el.getBoundingClientRect(); return [r.left, r.right]; };
  const cue = document.getElementById('lab-sidebar-cue');
  if (!cue || cue.hidden) return null;
  const header = document.getElementById('header');
  const others = [...header.querySelectorAll('.title, #sidebar-toggle')].map(box);
  const deep = root => { for (const el of root.querySelectorAll('*')) {
      if (el.matches('button') && el.getBoundingClientRect().width > 0) others.push(box(el));
      if (el.shadowRoot) deep(el.shadowRoot); } };
  deep(header);
  return [box(cue), others];
}"""


@pytest.mark.parametrize("code", ["ar", "en"])
def test_the_folded_sidebars_cue_sits_at_the_headers_free_end(chromium, lab_server, code):
    """On a laptop a step's controls are named in the header; in Arabic the cue covered the
    title, the menu button and Teach a class (it sat on the right, where they are)."""
    page = _open(chromium, lab_server, f"?lesson=5&lang={code}", SIZES[1])
    try:
        page.wait_for_function(CUE_AND_HEADER, timeout=30000)
        (left, right), others = page.evaluate(CUE_AND_HEADER)
        assert len(others) >= 4
        overlaps = [(a, b) for a, b in others if a < right - 1 and b > left + 1]
        assert not overlaps, (code, (left, right), overlaps)
    finally:
        page.close()
