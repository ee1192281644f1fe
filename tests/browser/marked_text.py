"""What a page shows in the `x-long` pseudo-locale: every text a student can see, whether it
came through the catalogue (it carries the ⟦ ⟧ markers) and whether it is cut off.

One walk for every page the tests open in `x-long` (the first screen, the model pages, the
class screens): every text node under `root` with a box, shadow roots included, below the fold
too, and what a screen reader alone reads (the plots in words, the skip link until focused),
whose words count and whose boxes do not; left out, by design: a closed <details>' body, the
language menu's list (each language's name in its own language) and the spoken news, and
whatever `exempt` names.
"""

from __future__ import annotations

import re

from app.i18n.pseudo_locales import CLOSE, OPEN, PAD

# Each text: its text, whether it (or the marked string its tags split) carries the markers,
# whether it is cut off sideways by a box that hides overflow or by the window, whether it is
# text a student typed (a program, an input), and where it is.
_WALK = """({open, close, pad, root, exempt}) => {
  const parentOf = el => el.parentElement || (el.getRootNode().host || null);
  const count = (t, mark) => t.split(mark).length - 1;
  // Not shown and not read: a hidden element. Read but out of sight (a screen reader's plots
  // in words, the skip link until it is focused): its words must be translated, its box is
  // not looked at.
  const hidden = el => {
    for (let a = el; a && a !== document.body; a = parentOf(a)) {
      const s = getComputedStyle(a);
      if (s.visibility === 'hidden' || s.display === 'none') return true;
    }
    return false;
  };
  const unseen = el => {
    // A plot toolbar's overflow icon (⋮) stands in Bokeh's own box by design.
    if (el.closest('#lab-skip-first, .bk-tool-overflow')) return true;
    for (let a = el; a && a !== document.body; a = parentOf(a)) {
      if (getComputedStyle(a).clipPath !== 'none') return true;
    }
    return false;
  };
  const found = [];
  const visit = node => {
    if (node.nodeType === Node.TEXT_NODE) {
      const text = node.textContent.trim();
      const el = node.parentElement;
      if (!text || !el || el.closest('script, style, .lab-lang-list, .lab-news')) return;
      if (exempt && el.closest(exempt)) return;
      const range = document.createRange();
      range.selectNodeContents(node);
      const r = range.getBoundingClientRect();
      if (r.width < 1 || r.height < 1 || hidden(el)) return;
      const folded = el.closest('details');
      if (folded && !folded.open && !el.closest('summary')) return;
      let marked = text.includes(open) || text.includes(close);
      // Part of a marked string split by its tags (<b>), maybe after a marked value inside
      // it: in a nearby block's text, more markers open than close before it.
      for (let a = el, up = 0; a && up < 6 && !marked; a = parentOf(a), up++) {
        const t = a.textContent || '', at = t.indexOf(text), before = t.slice(0, Math.max(at, 0));
        marked = at >= 0 && count(before, open) > count(before, close);
      }
      // The words before the pseudo-locale's padding, which no language writes and which does
      // not wrap: past a narrow column it runs on where a translation's words would wrap.
      const lead = node.textContent.split(new RegExp(pad + '{2,}'))[0];
      const words = [];
      if (/[^\\s⟦⟧.,;:()]/.test(lead.replaceAll(pad, ''))) {
        const part = document.createRange();
        part.setStart(node, 0);
        part.setEnd(node, lead.length);
        words.push(part.getBoundingClientRect());
      }
      const outside = box => words.some(w => w.left < box.left - 1 || w.right > box.right + 1);
      const away = unseen(el);
      let clipped = !away && outside({left: 0, right: innerWidth});
      for (let a = el; a && !away && a !== document.body; a = parentOf(a)) {
        const s = getComputedStyle(a);
        if (!['visible', 'auto', 'scroll'].includes(s.overflowX) && a.clientWidth > 0
            && outside(a.getBoundingClientRect())) clipped = true;
      }
      const typed = !!el.closest('td.program, .lab-program, input, textarea');
      const plot = el.closest('[data-plot]');
      const where = (plot ? plot.dataset.plot + ' ' : '') + String(el.className || el.tagName);
      found.push({text, marked, clipped, typed, where});
      return;
    }
    if (node.shadowRoot) visit(node.shadowRoot);
    for (const child of node.childNodes) visit(child);
  };
  // The roots, in shadow roots too (Panel's layouts keep their children in them).
  const starts = [];
  const find = scope => {
    starts.push(...scope.querySelectorAll(root));
    for (const el of scope.querySelectorAll('*')) if (el.shadowRoot) find(el.shadowRoot);
  };
  find(document);
  for (const start of starts) if (!starts.some(s => s !== start && s.contains(start))) visit(start);
  return {texts: found, width: innerWidth, page: document.documentElement.scrollWidth};
}"""
# Words that are no translated string's: formulas, and settings as links write them.
FORMULAS = ("softmax", "d_k", "q·k", "w·v", "|w·v|", "log")


def needs_markers(text: str) -> bool:
    """Whether `text` has a word a translation writes: two Latin letters, not a formula (a
    number, a token such as A or q, √d_k and τ need none)."""
    words = [w for w in re.split(r"[\s()]+", text) if w and w not in FORMULAS]
    return any(sum(c.isascii() and c.isalpha() for c in w) >= 2 for w in words)


def shown_texts(page, root: str = "body", exempt: str = "") -> dict:
    """The walk's texts under the elements `root` selects, with the window's and the page's
    widths (a page wider than its window scrolls sideways)."""
    arguments = {"open": OPEN, "close": CLOSE, "pad": PAD, "root": root, "exempt": exempt}
    return page.evaluate(_WALK, arguments)


def problems(
    page, stage: str, *, root: str = "body", exempt: str = "", data=(), is_data=None
) -> list[str]:
    """Texts that escaped the catalogue or are cut off, and a page that scrolls sideways, each
    as a line naming `stage`. Text in `data`, or for which `is_data(text)` holds, is no string
    of the lab's (a model's tokens and programs, a class code) and needs no markers."""
    seen = shown_texts(page, root, exempt)
    texts = seen["texts"]
    assert len(texts) >= 4, f"{stage}: no text found under {root}"
    said = [
        f"{stage}: unmarked {t['text']!r} ({t['where']})"
        for t in texts
        if not t["marked"] and not t["typed"] and t["text"] not in data
        if not (is_data and is_data(t["text"])) and needs_markers(t["text"])
    ]
    said += [f"{stage}: clipped {t['text']!r} ({t['where']})" for t in texts if t["clipped"]]
    if seen["page"] > seen["width"] + 1:
        said.append(f"{stage}: the page scrolls sideways ({seen['page']} > {seen['width']} px)")
    return said
