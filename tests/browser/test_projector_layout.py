"""The first screen on a 720p projector in presenter mode, and at 1920x1080, 1366x768 and on a
phone, measured in headless Chromium on a plane step, a trained-model step and a causal step:
Measure and the prediction's answers on the screen, no two controls over each other, no legend
over a plane's arrows, no axis title cut off by its canvas. Each page is also photographed into
the artefacts folder (LAB_TEST_ARTEFACTS, else the run's pytest temporary folder), to look at.
"""

from __future__ import annotations

import os

import pytest

from .labpage import next_frames, page_wait_until, press, wait_until_settled

pytestmark = pytest.mark.browser

# (width, height, presenter mode): a phone in presenter mode too, its larger type the harder
# case (its summary, five lines there, covered the lesson's heading).
# Steps: a plane step (1), a trained model's step (12), its causal (gradient against removal)
# step (25) and the patching step (24, on SmolLM2, an extra install: measured where it is
# installed). The 720p projector, the case, gets every one; each other size the steps
# whose layout is hardest there (two pages each keep the suite's time down).
SIZES = [
    (1280, 720, True, (1, 12, 25, 24)),
    (1920, 1080, True, (12, 24)),
    (1366, 768, True, (1, 25)),
    (390, 844, True, (1, 25)),
]
PATCH_STEP = 24

DEEP = """
function deep(root, out) {
  for (const el of root.querySelectorAll('*')) {
    out.push(el);
    if (el.shadowRoot) deep(el.shadowRoot, out);
  }
  return out;
}
function hit(x, y) {  // the element drawn at (x, y), through the shadow roots
  let el = document.elementFromPoint(x, y);
  while (el && el.shadowRoot) {
    const inner = el.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === el) break;
    el = inner;
  }
  return el;
}
function within(inner, outer) {
  for (let n = inner; n; ) {
    if (n === outer) return true;
    const root = n.getRootNode();
    n = n.parentElement || (root && root.host) || null;
  }
  return false;
}
const box = el => { const r = el.getBoundingClientRect();
  return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width,
          height: r.height}; };
// The part of an element its scrolling ancestors let show (a control scrolled half out of the
// lesson column is cut at the column's edge, not drawn over the tabs above it).
function clipped(el) {
  const r = el.getBoundingClientRect();
  let b = {left: r.left, top: r.top, right: r.right, bottom: r.bottom};
  for (let n = el; n; ) {
    const root = n.getRootNode();
    n = n.parentElement || (root && root.host) || null;
    if (!n || n === document.documentElement) break;
    const s = getComputedStyle(n);
    if (s.overflowX !== 'visible' || s.overflowY !== 'visible') {
      const c = n.getBoundingClientRect();
      b = {left: Math.max(b.left, c.left), top: Math.max(b.top, c.top),
           right: Math.min(b.right, c.right), bottom: Math.min(b.bottom, c.bottom)};
    }
  }
  b.width = b.right - b.left; b.height = b.bottom - b.top;
  return b;
}
// Drawn and not covered: the element (or one inside it) is what is hit at its centre.
function seen(el) {
  const r = el.getBoundingClientRect();
  if (r.width < 2 || r.height < 2) return false;
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) return false;
  const top = hit(x, y);
  return top != null && (within(top, el) || within(el, top));
}
"""
CONTROLS = ".bk-btn, button, input[type=radio], input[type=checkbox], select, a[href], " + (
    "[role=tab], .bk-OnOffButton, .bk-ClickButton, .bk-tool-overflow, .lab-sidebar-cue"
)
# Every control a pointer can reach on the first screen, with its box and a name to report.
SHOWN_CONTROLS = (
    "(selector) => {"
    + DEEP
    + """
  const out = [];
  for (const el of deep(document, [])) {
    if (!el.matches(selector) || !seen(el)) continue;
    const name = (el.getAttribute('aria-label') || el.textContent || el.className || '').trim();
    const shows = clipped(el);
    if (shows.width > 1 && shows.height > 1) out.push({name: name.slice(0, 40) || el.tagName, box: shows});
  }
  return out;
}"""
)
# The step's Measure button and its answers (the radio and its words), drawn and uncovered.
ASK = (
    "() => {"
    + DEEP
    + """
  const els = deep(document, []);
  const measure = els.find(el => el.tagName === 'BUTTON' && el.textContent.trim() === 'Measure');
  const radios = els.filter(el => el.tagName === 'INPUT' && el.type === 'radio' &&
    el.getClientRects().length > 0);
  const answers = radios.map(r => { const label = r.closest('label') || r.parentElement;
    return {radio: box(r), label: box(label), seen: seen(r),
            text: label.textContent.trim().slice(0, 30)}; });
  return {measure: measure ? {box: box(measure), seen: seen(measure)} : null, answers,
          viewport: [innerWidth, innerHeight]};
}"""
)
# Each plane's legend box against its arrows (canvas pixels): the points along every arrow
# of the plane drawn inside the legend's box.
LEGEND_OVER_DATA = """() => {
  const doc = Bokeh.documents[0];
  const column = (src, k) => { const d = src.data; const v = d instanceof Map ? d.get(k) : d[k];
    return v ? Array.from(v) : []; };
  const out = {};
  for (const [name, sources] of [['address_plot', ['geometry']],
                                 ['payload_plot', ['geometry', 'contributions']]]) {
    const fig = doc.get_model_by_name(name);
    let view = null;
    for (const root of Bokeh.index.roots) { view = root.owner.find_one(fig); if (view) break; }
    const legends = [...fig.center, ...fig.below, ...fig.above, ...fig.left, ...fig.right]
      .filter(m => m.type === 'Legend' && m.visible);
    const inside = [];
    let count = 0;
    for (const legend of legends) {
      const lv = view.owner.find_one(legend);
      if (!lv || !lv.bbox) continue;
      const b = lv.bbox;
      for (const s of sources) {
        const src = doc.get_model_by_name(s);
        const kinds = column(src, 'kind');
        const [x0, y0, x1, y1] = ['x0', 'y0', 'x1', 'y1'].map(k => column(src, k));
        for (let i = 0; i < x1.length; i++) {
          // The geometry source holds both planes' arrows: each plane draws its own kinds.
          const k = kinds[i];
          if (s === 'geometry' && (name === 'address_plot') !== (k === 'query' || k === 'key'))
            continue;
          for (let t = 0; t <= 1.0001; t += 0.05) {
            const sx = view.frame.x_scale.compute(x0[i] + t * (x1[i] - x0[i]));
            const sy = view.frame.y_scale.compute(y0[i] + t * (y1[i] - y0[i]));
            count += 1;
            if (sx > b.left + 2 && sx < b.right - 2 && sy > b.top + 2 && sy < b.bottom - 2) {
              inside.push([k || s, i, Math.round(sx), Math.round(sy)]);
              break;
            }
          }
        }
      }
    }
    out[name] = {legends: legends.length, points: count, inside};
  }
  return out;
}"""
# Every axis title of every drawn figure, measured with the font it is drawn in, against the
# canvas that draws it: centred on the frame, it must fit between the canvas's edges.
AXIS_TITLES = """() => {
  const ctx = document.createElement('canvas').getContext('2d');
  const out = [];
  for (const root of Bokeh.index.roots) {
    for (const view of root.owner.query(v => v.model && v.model.type === 'Figure')) {
      const r = view.el.getBoundingClientRect();
      if (r.width < 2 || r.height < 2) continue;
      const fig = view.model, frame = view.frame.bbox;
      const axes = [...fig.below.map(a => [a, 'x']), ...fig.above.map(a => [a, 'x']),
                    ...fig.left.map(a => [a, 'y']), ...fig.right.map(a => [a, 'y'])];
      for (const [axis, dim] of axes) {
        if (!axis.type.endsWith('Axis') || !axis.visible || !axis.axis_label) continue;
        const label = String(axis.axis_label);
        let size = axis.axis_label_text_font_size;
        if (size && typeof size === 'object') size = size.value;
        ctx.font = `${axis.axis_label_text_font_style} ${size} ${axis.axis_label_text_font}`;
        const width = ctx.measureText(label).width;
        const centre = dim === 'x' ? frame.hcenter : frame.vcenter;
        const extent = dim === 'x' ? r.width : r.height;
        out.push({figure: fig.name || (fig.title && fig.title.text) || '', label, dim,
                  from: centre - width / 2, to: centre + width / 2, extent});
      }
    }
  }
  return out;
}"""


# Each plot's toolbar "⋮" against its plot's box: a title's new text once left it beside the
# plane, over the next plane or the lesson's Previous.
TOOLBARS = """() => {
  const out = [];
  for (const root of Bokeh.index.roots) {
    for (const view of root.owner.query(v => v.model && v.model.type === 'Figure')) {
      const r = view.el.getBoundingClientRect();
      if (r.width < 2 || r.height < 2 || view.model.toolbar_location == null) continue;
      const tv = view.owner.find_one(view.model.toolbar);
      const dots = tv && tv.el.shadowRoot && tv.el.shadowRoot.querySelector('.bk-tool-overflow');
      if (!dots) continue;
      const d = dots.getBoundingClientRect();
      if (d.width < 1) continue;
      out.push({figure: view.model.name || view.model.title.text, inside: d.left >= r.left - 1 &&
        d.right <= r.right + 1 && d.top >= r.top - 1 && d.bottom <= r.bottom + 1,
        dots: [d.left, d.top], plot: [r.left, r.top, r.right, r.bottom]});
    }
  }
  return out;
}"""


def _artefacts(tmp_path_factory):
    """Where the screenshots go: LAB_TEST_ARTEFACTS (CI can keep it), else the run's base
    temporary folder (pytest keeps the last three runs')."""
    named = os.environ.get("LAB_TEST_ARTEFACTS")
    folder = (
        os.path.join(named, "layout")
        if named
        else str(tmp_path_factory.getbasetemp() / "layout-screenshots")
    )
    os.makedirs(folder, exist_ok=True)
    return folder


def _overlaps(a, b, slack: float = 1.0) -> bool:
    return (
        a["left"] + slack < b["right"]
        and b["left"] + slack < a["right"]
        and a["top"] + slack < b["bottom"]
        and b["top"] + slack < a["bottom"]
    )


def _no_controls_overlap(page, where: str) -> None:
    shown = page.evaluate(SHOWN_CONTROLS, CONTROLS)
    assert len(shown) >= 5, (where, shown)
    pairs = [
        (a["name"], b["name"], a["box"], b["box"])
        for i, a in enumerate(shown)
        for b in shown[i + 1 :]
        if _overlaps(a["box"], b["box"])
    ]
    assert pairs == [], (where, pairs)


def _toolbars_inside(page, where: str) -> None:
    found = page.evaluate(TOOLBARS)
    assert len(found) >= 2, (where, found)
    astray = [t for t in found if not t["inside"]]
    assert astray == [], (where, astray)


def _ask_on_screen(page, where: str, phone: bool) -> None:
    ask = page.evaluate(ASK)
    width, height = ask["viewport"]
    assert ask["measure"] is not None and ask["answers"], (where, ask)
    if phone:
        # One column that scrolls: each answer and Measure, brought into view, is drawn and
        # not under the sticky summary.
        for target in ("Measure", *(a["text"] for a in ask["answers"])):
            page.evaluate(
                "(t) => {" + DEEP + " const el = deep(document, []).find(e => "
                "(e.tagName === 'BUTTON' || e.tagName === 'LABEL') && e.textContent.trim()"
                ".startsWith(t)); el.scrollIntoView({block: 'center'}); }",
                target,
            )
            next_frames(page, 3)
        ask = page.evaluate(ASK)
        assert ask["measure"]["box"]["right"] <= width, (where, ask)
        return
    for name, item in [("Measure", ask["measure"]), *((a["text"], a) for a in ask["answers"])]:
        b = item.get("box") or item["label"]
        assert item["seen"], (where, name, "covered or off the screen", item)
        assert b["top"] >= 0 and b["bottom"] <= height + 0.5, (where, name, b, height)
        assert b["left"] >= 0 and b["right"] <= width + 0.5, (where, name, b, width)


def _phone_heading_clear(page, where: str) -> None:
    """On a phone the route's summary sticks to the top: the step's heading, brought back into
    view from further down the page (as the skip link or a class's next step does), stops
    below it, not under it (a trained model's measured summary ran to six lines there)."""
    heading = (
        "() => {" + DEEP + " const els = deep(document, []);"
        " const lessons = els.find(e => e.classList && e.classList.contains('lab-lessons'));"
        " return els.find(e => e.tagName === 'H2' && within(e, lessons) &&"
        " e.getClientRects().length); }"
    )
    page.evaluate("() => document.getElementById('main').scrollTo(0, 1500)")
    next_frames(page, 3)
    page.evaluate(f"() => ({heading})().scrollIntoView({{block: 'start'}})")
    next_frames(page, 3)
    boxes = page.evaluate(
        "() => {" + DEEP + f" const h = ({heading})();"
        " const s = deep(document, []).find(e => e.classList &&"
        " e.classList.contains('lab-status'));"
        " return {heading: box(h), status: box(s), seen: seen(h), text: h.textContent,"
        " how: [s.className, getComputedStyle(s).maxHeight, getComputedStyle(s).position]}; }"
    )
    assert boxes["seen"], (where, boxes)
    assert boxes["heading"]["top"] >= boxes["status"]["bottom"] - 0.5, (where, boxes)


def _sidebar_cue(page, where: str) -> None:
    """Presenter mode folds the sidebar: the header names the controls the step needs from it
    (only the menu button was outlined, which told a class nothing)."""
    page.wait_for_function(
        "() => { const c = document.getElementById('lab-sidebar-cue');"
        " return c && !c.hidden && c.textContent.includes('Swap the value of'); }"
    )
    cue = page.evaluate(
        "() => { const r = document.getElementById('lab-sidebar-cue').getBoundingClientRect();"
        " const h = document.getElementById('header').getBoundingClientRect();"
        " return {cue: [r.left, r.top, r.right, r.bottom], header: [h.top, h.bottom]}; }"
    )
    left, top, right, bottom = cue["cue"]
    assert right - left > 100 and top >= cue["header"][0] and bottom <= cue["header"][1], cue


def _measure(page, step: int) -> None:
    """Do what the step asks (where it asks anything) and Measure, as a lecturer does."""
    measure = page.get_by_role("button", name="Measure").first
    page_wait_until(page, measure.is_enabled, f"step {step} to be ready", 90)
    act = page.get_by_role("button", name="Do it for me").first
    if act.count() and act.is_visible() and act.is_enabled():
        press(act)
    press(measure)
    page_wait_until(
        page,
        lambda: (
            "Measured"
            in page.evaluate(
                "() => {" + DEEP + " return deep(document, []).filter(e => e.classList &&"
                " e.classList.contains('lab-lesson-result'))"
                ".map(e => (e.shadowRoot || e).textContent).join(' '); }"
            )
        ),
        f"step {step}'s verdict",
        90,
    )
    wait_until_settled(page, 60)


def _axis_titles_fit(page, where: str) -> None:
    titles = page.evaluate(AXIS_TITLES)
    assert len(titles) >= 4, (where, titles)
    cut = [t for t in titles if t["from"] < -0.5 or t["to"] > t["extent"] + 0.5]
    assert cut == [], (where, cut)


def _legends_clear(page, where: str) -> None:
    found = page.evaluate(LEGEND_OVER_DATA)
    for name, seen in found.items():
        assert seen["legends"] == 1 and seen["points"] > 20, (where, name, seen)
        assert seen["inside"] == [], (where, name, "legend over the arrows", seen["inside"])


def _installed(steps: tuple[int, ...]) -> list[int]:
    from engine import trained

    smollm2 = {name: ok for name, _, ok, _ in trained.available()}.get("smollm2-135m")
    return [step for step in steps if step != PATCH_STEP or smollm2]


@pytest.mark.parametrize(
    "width,height,presenter,steps", SIZES, ids=[f"{w}x{h}" for w, h, *_ in SIZES]
)
def test_a_projector_shows_the_question_planes_and_measure_with_nothing_over_anything(
    chromium, lab_server, tmp_path_factory, width, height, presenter, steps
):
    folder = _artefacts(tmp_path_factory)
    phone = width < 600
    for step in _installed(steps):
        where = f"{width}x{height} step {step}"
        query = f"?lesson={step}" + ("&presenter=1" if presenter else "")
        page = chromium.new_page(viewport={"width": width, "height": height})
        try:
            page.goto(lab_server.url + query)
            page.wait_for_function(
                "() => window.Bokeh && Bokeh.documents.length > 0 && "
                "Bokeh.documents[0].get_model_by_name('address_plot') !== null",
                timeout=60000,
            )
            wait_until_settled(page, 60)
            page_wait_until(
                page,
                page.get_by_role("button", name="Measure").first.is_enabled,
                f"step {step} to be ready",
                90,
            )
            wait_until_settled(page, 60)
            if presenter:
                assert page.evaluate(
                    "() => document.documentElement.classList.contains('lab-presenter')"
                )
            page.screenshot(path=os.path.join(folder, f"{width}x{height}-step{step}.png"))
            _ask_on_screen(page, where, phone)
            if phone:
                _phone_heading_clear(page, where)
                page.evaluate("() => document.getElementById('main').scrollTo(0, 0)")
                next_frames(page, 3)
            _no_controls_overlap(page, where)
            _toolbars_inside(page, where)
            if step == 1 and not phone:
                _sidebar_cue(page, where)
            _measure(page, step)
            page.screenshot(path=os.path.join(folder, f"{width}x{height}-step{step}-measured.png"))
            if phone:
                _phone_heading_clear(page, where + " measured")
            _legends_clear(page, where + " measured")
            _axis_titles_fit(page, where + " measured")
            if not phone:
                _no_controls_overlap(page, where + " measured")
        finally:
            page.close()


def test_the_planes_are_large_on_a_720p_projector(chromium, lab_server):
    """At 1280x720 in presenter mode each plane is a square a back row can read: 273 px before,
    with frames of 196 x 181 px."""
    page = chromium.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(lab_server.url + "?lesson=1&presenter=1")
        page.wait_for_function(
            "() => window.Bokeh && Bokeh.documents.length > 0 && "
            "Bokeh.documents[0].get_model_by_name('address_plot') !== null",
            timeout=60000,
        )
        wait_until_settled(page, 60)
        sizes = page.evaluate(
            """() => ['address_plot', 'payload_plot'].map(name => {
              const fig = Bokeh.documents[0].get_model_by_name(name);
              for (const root of Bokeh.index.roots) {
                const v = root.owner.find_one(fig);
                if (v) { const r = v.el.getBoundingClientRect();
                  return [r.width, r.height, v.frame.bbox.width, v.frame.bbox.height]; }
              }
              return null; })"""
        )
        for width, height, frame_w, frame_h in sizes:
            assert width >= 340 and height >= 340, sizes
            assert frame_w >= 250 and frame_h >= 190, sizes
    finally:
        page.close()
