"""Warnings that meet contrast and cover nothing (issue 40), in Chromium at a projector's, a
laptop's, a 720p projector's and a phone's size: a bad link's warnings sit in the page's flow
(one line per problem, no toast), over no control and not over the headline, until dismissed;
the red banner of a refused change sits under the headline, not over it. The text of each
stands at least 4.5:1 on its background (WCAG AA), read from what the browser draws."""

from __future__ import annotations

import re

import pytest

from .labpage import LOADED, SETTLED, press, server_round_trip

pytestmark = pytest.mark.browser

SIZES = [(1920, 1080), (1366, 768), (1280, 720), (390, 844)]
AA = 4.5
BAD_PROGRAM = "a=5; zz=3; ?a"

# The banner (a host classed `banner`, shadow roots included) and every visible control and the
# headline outside it, each as a box [left, top, width, height]. A toast (a refused change still
# gets one, 6 s: on a phone it is what the student typing in the open sidebar sees) is not the
# page's: it lies over whatever is under it, the banner included, and is left out.
_BOXES = """(banner) => {
  const all = [];
  (function walk(root) {
    for (const el of root.querySelectorAll('*')) { all.push(el); if (el.shadowRoot) walk(el.shadowRoot); }
  })(document);
  const host = all.find(el => el.classList && el.classList.contains(banner) &&
    el.getClientRects().length > 0);
  if (!host) return null;
  const inside = el => { for (let n = el; n; n = n.parentNode || n.host) if (n === host) return true;
    return false; };
  const box = el => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; };
  const controls = all.filter(el => el.matches(
      'button, input, select, textarea, a[href], [role=radio], [role=tab], .noUi-handle, .lab-summary')
      && !inside(el) && !el.closest('.notyf'))
    .map(el => [(el.getAttribute('aria-label') || el.textContent || el.tagName).trim().slice(0, 40),
      box(el)])
    .filter(([, b]) => b[2] > 1 && b[3] > 1);
  return {banner: box(host), controls};
}"""
# The colour of the banner's first line of text and the background it is drawn on.
_COLOURS = """(banner) => {
  const all = [];
  (function walk(root) {
    for (const el of root.querySelectorAll('*')) { all.push(el); if (el.shadowRoot) walk(el.shadowRoot); }
  })(document);
  const host = all.find(el => el.classList && el.classList.contains(banner) &&
    el.getClientRects().length > 0);
  const under = [];
  (function walk(root) {
    for (const el of root.querySelectorAll('*')) { under.push(el); if (el.shadowRoot) walk(el.shadowRoot); }
  })(host.shadowRoot || host);
  const text = under.find(el => Array.from(el.childNodes).some(
    n => n.nodeType === 3 && n.textContent.trim()));
  let bg = null;
  for (let n = text; n && !bg; n = n.parentElement || (n.getRootNode().host || null)) {
    const c = getComputedStyle(n).backgroundColor;
    if (c && c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') bg = c;
  }
  return [getComputedStyle(text).color, bg || 'rgb(255, 255, 255)'];
}"""


def _luminance(css: str) -> float:
    red, green, blue = (int(v) / 255 for v in re.findall(r"\d+", css)[:3])

    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)


def contrast(a: str, b: str) -> float:
    la, lb = _luminance(a), _luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def _overlap(a, b) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def covered(page, banner: str) -> list[str]:
    """The controls and headline the banner lies over (none in the page's flow)."""
    found = page.evaluate(_BOXES, banner)
    assert found is not None, f"no {banner} on the page"
    return [name for name, box in found["controls"] if _overlap(found["banner"], box)]


def assert_readable(page, banner: str) -> None:
    text, background = page.evaluate(_COLOURS, banner)
    ratio = contrast(text, background)
    assert ratio >= AA, f"{banner}: {text} on {background} is {ratio:.2f}:1"


@pytest.fixture
def sized(chromium, lab_server):
    pages = []

    def _open(width: int, height: int, query: str):
        page = chromium.new_page(viewport={"width": width, "height": height})
        pages.append(page)
        page.goto(lab_server.url + query)
        page.wait_for_function(LOADED, timeout=30000)
        return page

    yield _open
    for page in pages:
        page.close()


@pytest.mark.parametrize("width,height", SIZES)
def test_a_bad_links_warnings_sit_in_the_page_over_nothing(sized, width, height):
    page = sized(width, height, "?temperature=-1&d_k=99999")
    lines = page.locator(".lab-link-list li")
    lines.nth(1).wait_for(timeout=30000)
    server_round_trip(page)
    page.wait_for_function(SETTLED, timeout=30000)
    texts = lines.all_inner_texts()
    assert len(texts) == 2 and "temperature" in texts[0] and "d_k" in texts[1], texts
    assert page.locator(".notyf__toast").count() == 0, "a link's warning came as a toast"
    assert not (over := covered(page, "lab-link-notes")), over
    assert_readable(page, "lab-link-notes")
    # Dismissed by keyboard, they go, and the headline takes their place back.
    press(page.get_by_role("button", name="Dismiss"))
    page.locator(".lab-link-notes").wait_for(state="hidden", timeout=30000)
    assert lines.count() == 0


def _type_a_bad_program(page) -> None:
    """A program the model refuses, typed in the sidebar's box where the sidebar is open; where
    it is folded (a laptop, a phone) the box's value is set through its Bokeh model, as typing
    and Enter set it, so the banner is measured on the page a student returns to."""
    box = page.get_by_label("Program (press Enter to run)")
    if box.is_visible():
        box.fill(BAD_PROGRAM)
        box.press("Enter")
        return
    page.evaluate(
        """program => {
      const box = [...Bokeh.documents[0].all_models].find(
        m => m.title === 'Program (press Enter to run)');
      box.value = program;
    }""",
        BAD_PROGRAM,
    )


@pytest.mark.parametrize("width,height", SIZES)
def test_a_refused_changes_banner_sits_under_the_headline(sized, width, height):
    page = sized(width, height, "?model=binding")
    page.wait_for_function(
        "() => { const s = Bokeh.documents[0].get_model_by_name('prediction');"
        " return s !== null && s.data.token.length > 0; }",
        timeout=60000,
    )
    _type_a_bad_program(page)
    page.get_by_text("That change was not applied").first.wait_for(timeout=30000)
    server_round_trip(page)
    page.wait_for_function(SETTLED, timeout=30000)
    assert not (over := covered(page, "lab-error")), over
    assert_readable(page, "lab-error")
