"""The trained-model page in the long pseudo-locale, in Chromium (issue 44): with the head grid
drawn, an experiment run and the Causal map measured and patched, every visible text of the
page, the hidden plots in words included, carries the `x-long` markers (so none escaped the
catalogue), and none is clipped, at a laptop's 1366x768 and a phone's 390x844.

Exempt from the markers, as on the first screen (test_language_layout.py): text with no word
of two Latin letters (numbers, head tags such as L1 H1), formulas; and the model's data, never
translated: its tokens as labels ("approved_limit @1"), the programs it reads, and a typed or
suggested changed sentence.
"""

from __future__ import annotations

import re

import pytest

from app.i18n.pseudo_locales import CLOSE, OPEN
from app.i18n.translator import Translator
from engine import trained

from .labpage import LOADED, page_wait_until, wait_until_settled

pytestmark = pytest.mark.browser

SIZES = ((1366, 768), (390, 844))
X_LONG = Translator("x-long").gettext  # the names the page shows, to find its buttons by
PAD = X_LONG("Run")[-2]  # the character x-long pads a string with, before its closing marker
ROWS = (
    "n => { const s = Bokeh.documents[0].get_model_by_name(n); return s ? s.data.layer.length : 0 }"
)
# Every text node of the page with a box (shadow roots included, below the fold too, the
# visually hidden plots in words too): its text, whether it or its block carries both markers,
# and whether its words are cut off sideways by a box that hides its overflow or by the window
# (the visually hidden tables, clipped to nothing, sit out of sight by design).
TEXTS = r"""([open, close, pad]) => {
  const parentOf = el => el.parentElement || (el.getRootNode().host || null);
  const found = [];
  const visit = node => {
    if (node.nodeType === Node.TEXT_NODE) {
      const text = node.textContent.trim();
      const el = node.parentElement;
      if (!text || !el || el.closest('script, style')) return;
      const range = document.createRange();
      range.selectNodeContents(node);
      const r = range.getBoundingClientRect();
      if (r.width < 1 || r.height < 1 || getComputedStyle(el).visibility === 'hidden') return;
      if (el.closest('.lab-lang-list, .lab-news')) return;
      const folded = el.closest('details');
      if (folded && !folded.open && !el.closest('summary')) return;
      let marked = text.includes(open) || text.includes(close);
      // Part of a marked string split by its tags (<b>), maybe after a marked value inside
      // it: in a nearby block's text, more markers open than close before it.
      const count = (t, mark) => t.split(mark).length - 1;
      for (let a = el, up = 0; a && up < 6 && !marked; a = parentOf(a), up++) {
        const t = a.textContent || '', at = t.indexOf(text), before = t.slice(0, Math.max(at, 0));
        marked = at >= 0 && count(before, open) > count(before, close);
      }
      let clipped = false;
      // Out of sight by design: the skip link until focused, a toolbar's overflow icon.
      let hidden = !!el.closest('#lab-skip-first, .bk-tool-overflow');
      for (let a = el; a && !hidden; a = parentOf(a)) hidden = getComputedStyle(a).clipPath !== 'none';
      // The words before the pseudo-locale's padding: a run of dots that no language writes
      // and that cannot wrap, so in a long string it, and whatever follows it on its line, runs
      // past a narrow column where a translation's words would wrap.
      const lead = node.textContent.split(pad + pad)[0].split(pad + close)[0];
      const words = [];
      if (/[^\s⟦⟧.,;:()]/.test(lead.split(pad).join(''))) {
        const part = document.createRange();
        part.setStart(node, 0);
        part.setEnd(node, lead.length);
        words.push(part.getBoundingClientRect());
      }
      const outside = box => words.some(w => w.left < box.left - 1 || w.right > box.right + 1);
      if (!hidden) {
        clipped = outside({left: 0, right: innerWidth});
        for (let a = el; a && a !== document.body; a = parentOf(a)) {
          const s = getComputedStyle(a);
          if (s.overflowX !== 'visible' && s.overflowX !== 'auto' && s.overflowX !== 'scroll'
              && a.clientWidth > 0 && outside(a.getBoundingClientRect())) clipped = true;
        }
      }
      const program = !!el.closest('td.program, .lab-program, input, textarea');
      const plot = el.closest('[data-plot]');
      const where = (plot ? plot.dataset.plot + ' ' : '') + (el.className || el.tagName);
      found.push({text, marked, clipped, program, where});
      return;
    }
    if (node.shadowRoot) visit(node.shadowRoot);
    for (const child of node.childNodes) visit(child);
  };
  visit(document.body);
  return found;
}"""
FORMULAS = ("softmax", "d_k", "q·k", "w·v", "log")
# A token as the planes and tables label it, after a symbol where a table names a vector of
# it (the Jacobian's "s approved_limit @1", "w <bos> @0"): data.
TOKEN_LABEL = re.compile(r"^(?:[a-z] )?\S+ @\d+$")


def _model_data() -> set[str]:
    """The binding model's own words: its answers ("none" too), names and example programs."""
    model = trained.load("binding")
    return {*model.answers, *model.names, *model.examples.values()}


def _needs_markers(found: dict, data: set[str]) -> bool:
    text = found["text"]
    if found["program"] or TOKEN_LABEL.match(text) or text in data:
        return False
    words = [w for w in re.split(r"[\s()]+", text) if w and w not in FORMULAS]
    return any(sum(c.isascii() and c.isalpha() for c in w) >= 2 for w in words)


def _problems(page, stage: str) -> list[str]:
    """What escaped the catalogue or is clipped on the page as it is now."""
    wait_until_settled(page)
    found = page.evaluate(TEXTS, [OPEN, CLOSE, PAD])
    assert len(found) > 20, f"{stage}: no text found"
    data = {t["text"] for t in found if t["program"]} | _model_data()
    bare = [t for t in found if not t["marked"] and _needs_markers(t, data)]
    clipped = [t for t in found if t["clipped"]]
    return [f"{stage}: unmarked {t['text']!r} ({t['where']})" for t in bare] + [
        f"{stage}: clipped {t['text']!r} ({t['where']})" for t in clipped
    ]


def _walk(page) -> list[str]:
    """Draw the head grid, run an experiment, open the Causal map: measure, then patch; what
    each stage's page shows is checked as it stands (a tab's views leave with it)."""
    for button in page.locator(".lab-deferred button").all():
        if button.is_visible():
            button.click()
    page_wait_until(page, lambda: page.evaluate(ROWS, "head_grid") > 0, "the head grid")
    problems = _problems(page, "grid")
    tabs = page.locator(".lab-teaching .bk-tab")
    tabs.nth(1).click()
    page.get_by_role("button", name=X_LONG("Run"), exact=True).first.click()
    rows = page.locator("table.lab-experiments tr.run")
    page_wait_until(page, lambda: rows.count() == 1, "the experiment's row")
    edit = rows.first.locator("td").nth(2).inner_text()
    assert edit.startswith(OPEN), f"the experiment's edit is not translated: {edit!r}"
    problems += _problems(page, "experiments")
    tabs.nth(2).click()
    page_wait_until(page, lambda: page.evaluate(ROWS, "receipt") > 0, "the receipt", 60)
    page.get_by_role("button", name=X_LONG("Measure every head"), exact=True).click()
    page_wait_until(page, lambda: page.evaluate(ROWS, "causal_map") > 0, "the causal map", 60)
    patch = page.get_by_role("button", name=X_LONG("Patch every head"), exact=True)
    page_wait_until(page, patch.is_enabled, "a suggested change to patch into")
    patch.click()
    page_wait_until(page, lambda: page.evaluate(ROWS, "patching_map") > 0, "the patching map", 60)
    return problems + _problems(page, "causal map")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_model_pages_are_marked_and_unclipped_in_x_long(chromium, lab_server, size):
    page = chromium.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        page.goto(lab_server.url + "?model=binding&lang=x-long")
        page.wait_for_function(LOADED, timeout=30000)
        wait_until_settled(page)
        problems = _walk(page)
        assert not problems, f"{size}: " + "\n".join(problems[:15])
    finally:
        page.close()
