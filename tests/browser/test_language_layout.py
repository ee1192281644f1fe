"""The first screen in the pseudo-locales and two real languages, in Chromium (issue 44).

In `x-long` every visible text of the header, the sidebar and the headline carries the markers
(so none escaped the catalogue) and none is clipped or pushed off the screen, at a projector's
1920x1080, a laptop's 1366x768 and a phone's 390x844; in `x-rtl` the same holds for the layout
and the sidebar sits on the right. axe finds nothing serious in Arabic or Spanish.

Exempt from the markers, by design: text with no word of two Latin letters (numbers, the
scenario's tokens A, B, q, formulas such as √d_k and τ), the formulas written in words
(softmax, d_k), and the language menu's own names, each written in its own language.
"""

from __future__ import annotations

import pytest

from app.i18n.pseudo_locales import CLOSE, OPEN

from .axe import BLOCKING, run_axe
from .labpage import LOADED, wait_until_settled

pytestmark = pytest.mark.browser

SIZES = ((1920, 1080), (1366, 768), (390, 844))
# Every visible text node of the header, the sidebar and the headline (shadow roots included):
# its text, whether it or its block carries both markers, and whether it is clipped (outside a
# box that hides overflow, or outside the window).
TEXTS = """([open, close]) => {
  const regions = [document.getElementById('header'), document.getElementById('sidebar')];
  const deep = (root, out) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.classList.contains('lab-summary')) regions.push(el);
      if (el.shadowRoot) deep(el.shadowRoot, out);
    }
  };
  deep(document, []);
  const parentOf = el => el.parentElement || (el.getRootNode().host || null);
  const found = [];
  const visit = (node, region) => {
    if (node.nodeType === Node.TEXT_NODE) {
      const text = node.textContent.trim();
      if (!text) return;
      const range = document.createRange();
      range.selectNodeContents(node);
      const r = range.getBoundingClientRect();
      if (r.width < 1 || r.height < 1 || r.bottom < 0 || r.top > innerHeight) return;
      const el = node.parentElement;
      const style = getComputedStyle(el);
      if (style.visibility === 'hidden' || el.closest('.lab-lang-list, .lab-news')) return;
      const folded = el.closest('details');
      if (folded && !folded.open && !el.closest('summary')) return;
      let marked = text.includes(open) || text.includes(close);
      let clipped = r.left < -1 || r.right > innerWidth + 1;
      // Part of a marked string split by its tags (<b>): the nearest blocks' text encloses it.
      for (let a = el, up = 0; a && up < 3 && !marked; a = parentOf(a), up++) {
        const t = a.textContent || '', at = t.indexOf(text), start = t.lastIndexOf(open, at);
        marked = at >= 0 && start >= 0 && t.lastIndexOf(close, at) < start
          && t.indexOf(close, at + text.length) >= 0;
      }
      for (let a = el; a && a !== document.body; a = parentOf(a)) {
        const s = getComputedStyle(a);
        if (s.overflowX !== 'visible' && a.clientWidth > 0) {
          const box = a.getBoundingClientRect();
          if (r.left < box.left - 1 || r.right > box.right + 1) clipped = true;
        }
      }
      found.push({text, marked, clipped, where: el.className || el.tagName});
      return;
    }
    if (node.shadowRoot) visit(node.shadowRoot, region);
    for (const child of node.childNodes) visit(child, region);
  };
  for (const region of regions) if (region) visit(region, region);
  const sidebar = document.getElementById('sidebar').getBoundingClientRect();
  return {texts: found, sidebar: [sidebar.left, sidebar.right, sidebar.width], width: innerWidth,
          page: document.documentElement.scrollWidth};
}"""
# A word that is not a translated string's: a formula or a setting's name as links write it.
FORMULAS = ("softmax", "d_k", "q·k", "log")


def _needs_markers(text: str) -> bool:
    words = [w for w in text.replace("(", " ").replace(")", " ").split() if w not in FORMULAS]
    return any(sum(c.isascii() and c.isalpha() for c in w) >= 2 for w in words)


def _open(chromium, server, query: str, size: tuple[int, int]):
    page = chromium.new_page(viewport={"width": size[0], "height": size[1]})
    page.goto(server.url + query)
    page.wait_for_function(LOADED, timeout=30000)
    wait_until_settled(page)
    return page


@pytest.mark.parametrize("code", ["x-long", "x-rtl"])
def test_the_first_screen_is_marked_unclipped_and_mirrored_at_three_sizes(
    chromium, lab_server, code
):
    page = _open(chromium, lab_server, f"?lang={code}", SIZES[0])
    try:
        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            wait_until_settled(page)
            seen = page.evaluate(TEXTS, [OPEN, CLOSE])
            assert len(seen["texts"]) > 3, f"{code} {width}: no text found"
            clipped = [t for t in seen["texts"] if t["clipped"]]
            assert not clipped, f"{code} {width}x{height}: clipped {clipped[:5]}"
            assert seen["page"] <= seen["width"] + 1, f"{code} {width}: the page scrolls sideways"
            if code == "x-long":
                bare = [t for t in seen["texts"] if not t["marked"] and _needs_markers(t["text"])]
                assert not bare, f"{width}x{height}: escaped the catalogue: {bare[:8]}"
            left, right, shown = seen["sidebar"]
            if code == "x-rtl" and shown > 0 and right > 0:
                # Shown: on the right half, its far edge at the window's right.
                assert left >= seen["width"] / 2 - shown and right >= seen["width"] - 2, seen
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
