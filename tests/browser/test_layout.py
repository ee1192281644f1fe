"""The page at projector, laptop and phone sizes, in presenter mode and by keyboard, measured in
headless Chromium: computed type sizes inside the shadow roots, layout boxes against the
viewport, the Tab path, focus rings and accessible names."""

from __future__ import annotations

import re

import pytest

from .labpage import (
    FOCUSED,
    LOADED,
    next_frames,
    open_pair_rows,
    show_analysis,
    wait_for_names,
    wait_until_settled,
)

pytestmark = pytest.mark.browser

# Every element of the page, shadow roots included (Panel renders each component in one).
DEEP = """
function deep(root, out) {
  for (const el of root.querySelectorAll('*')) {
    out.push(el);
    if (el.shadowRoot) deep(el.shadowRoot, out);
  }
  return out;
}
"""
# Font sizes of visible text, grouped by where it sits: the lesson, the sidebar's labels.
TEXT_SIZES = (
    "() => {"
    + DEEP
    + """
  const els = deep(document, []);
  const within = (el, cls) => {
    for (let n = el; n; ) {
      if (n.classList && n.classList.contains(cls)) return true;
      const root = n.getRootNode();
      n = n.parentElement || (root && root.host) || null;
    }
    return false;
  };
  const sizes = {lesson: [], controls: []};
  for (const el of els) {
    const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || el.getClientRects().length === 0) continue;
    const size = parseFloat(getComputedStyle(el).fontSize);
    if (within(el, 'lab-lessons')) sizes.lesson.push([size, el.textContent.trim().slice(0, 40)]);
    if (within(el, 'lab-controls') || within(el, 'lab-pairs')) {
      sizes.controls.push([size, el.textContent.trim().slice(0, 40)]);
    }
  }
  return sizes;
}"""
)
# Every fixed font size a plot declares (titles, axes, legends, colour bars, labels).
PLOT_TEXT = """() => {
  const out = [];
  for (const model of Bokeh.documents[0].all_models) {
    for (const name of Object.keys(model.properties)) {
      if (!name.endsWith('font_size')) continue;
      let value = model[name];
      if (value && typeof value === 'object') value = value.value;
      // A note under a chart (app/views/token_note.py) is a Title model but reads as text.
      const type = (model.tags || []).includes('note') ? 'Note' : model.type;
      if (typeof value === 'string') out.push([type, name, value]);
    }
  }
  return out;
}"""
# Screen boxes of the lesson's question, the two planes and the weights chart.
BOXES = (
    "() => {"
    + DEEP
    + """
  const els = deep(document, []);
  const box = el => { const r = el.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width}; };
  const figure = name => {
    const model = Bokeh.documents[0].get_model_by_name(name);
    for (const root of Bokeh.index.roots) {
      const view = root.owner.find_one(model);
      if (view) return box(view.el);
    }
    return null;
  };
  const question = els.find(el => el.tagName === 'STRONG' && el.textContent.startsWith('Predict'));
  const measure = els.find(el => el.tagName === 'BUTTON' && el.textContent.trim() === 'Measure');
  const weights = Bokeh.documents[0].get_model_by_name('weights');
  let weightsFigure = null;
  for (const model of Bokeh.documents[0].all_models) {
    if (model.type === 'Figure' && model.renderers.some(r => r.data_source === weights)) {
      weightsFigure = model;
    }
  }
  let weightsBox = null;
  for (const root of Bokeh.index.roots) {
    const view = root.owner.find_one(weightsFigure);
    if (view) weightsBox = box(view.el);
  }
  return {question: question ? box(question) : null, measure: measure ? box(measure) : null,
          address: figure('address_plot'),
          payload: figure('payload_plot'), weights: weightsBox,
          viewport: [innerWidth, innerHeight]};
}"""
)
OVERFLOW = """() => {
  const main = document.getElementById('main');
  return {page: [document.documentElement.scrollWidth, innerWidth],
          main: [main.scrollWidth, main.clientWidth]};
}"""
SIDEBAR = """() => {
  const sidebar = document.getElementById('sidebar');
  return {shown: sidebar.classList.contains('show'), width: sidebar.getBoundingClientRect().width};
}"""
# The focused element (through shadow roots) and how its focus is drawn.
FOCUS_STYLE = """() => {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  const s = getComputedStyle(el);
  return {outline: parseFloat(s.outlineWidth) || 0, style: s.outlineStyle, shadow: s.boxShadow,
          text: (el.getAttribute('aria-label') || el.textContent || '').trim()};
}"""


def _open(browser, url: str, width: int, height: int):
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(url)
    page.wait_for_function(LOADED, timeout=30000)
    wait_until_settled(page)  # stylesheets, fonts, the first resize and the a11y names
    return page


@pytest.fixture
def sized(chromium, lab_server):
    pages = []

    def _sized(width: int, height: int, query: str = ""):
        page = _open(chromium, lab_server.url + query, width, height)
        pages.append(page)
        return page

    yield _sized
    for page in pages:
        page.close()


def _inside(box, viewport) -> bool:
    width, height = viewport
    return (
        box["left"] >= 0
        and box["top"] >= 0
        and box["right"] <= width + 0.5
        and (box["bottom"] <= height + 0.5)
    )


def _px(text: str) -> float:
    return float(re.match(r"([\d.]+)px", text).group(1))


def test_text_is_at_least_16px_inside_the_components(sized):
    page = sized(1920, 1080)
    open_pair_rows(page)  # the pairs' own inputs too
    sizes = page.evaluate(TEXT_SIZES)
    assert len(sizes["lesson"]) >= 5 and len(sizes["controls"]) >= 15, sizes
    small = [s for s in sizes["lesson"] + sizes["controls"] if s[0] < 16]
    assert small == [], small


def test_plot_text_is_at_least_14px(sized):
    page = sized(1920, 1080)
    sizes = page.evaluate(PLOT_TEXT)
    assert len(sizes) > 30
    small = [s for s in sizes if _px(s[2]) < 14]
    assert small == [], small


@pytest.mark.parametrize("width,height", [(1920, 1080), (1366, 768)])
def test_question_planes_and_weights_share_the_first_screen(sized, width, height):
    page = sized(width, height)
    boxes = page.evaluate(BOXES)
    for name in ("question", "address", "payload", "weights", "measure"):
        assert boxes[name] is not None, name
        assert _inside(boxes[name], boxes["viewport"]), (name, boxes[name], boxes["viewport"])
    if width == 1920:
        # The planes grow with the window (they were 410 px on any screen).
        assert boxes["address"]["width"] >= 450 and boxes["payload"]["width"] >= 450, boxes
        assert page.evaluate(SIDEBAR)["shown"]  # a projector keeps its sidebar
    else:
        # A laptop starts with it folded: with it the planes were 321 px and Measure below the
        # fold. Folded, the planes are square and large enough for their titles.
        assert not page.evaluate(SIDEBAR)["shown"]
        assert boxes["address"]["width"] >= 360 and boxes["payload"]["width"] >= 360, boxes


def test_phone_folds_the_sidebar_and_nothing_is_wider_than_the_screen(sized):
    page = sized(390, 844)
    page.wait_for_function(f"() => ({SIDEBAR})().width < 1")  # folded: its slide is over
    sidebar = page.evaluate(SIDEBAR)
    assert not sidebar["shown"] and sidebar["width"] < 1, sidebar
    overflow = page.evaluate(OVERFLOW)
    assert overflow["page"][0] <= overflow["page"][1], overflow
    assert overflow["main"][0] <= overflow["main"][1], overflow
    boxes = page.evaluate(BOXES)
    for name in ("address", "payload", "weights"):
        box = boxes[name]
        assert box["left"] >= 0 and box["right"] <= 390 and box["width"] >= 300, (name, box)
    # The route's summary sticks to the top: what is scrolled to the top of the main area (a
    # lesson's button, here Measure) stops below it, not under it.
    measure = page.get_by_role("button", name="Measure").first
    measure.evaluate("b => b.scrollIntoView({block: 'start'})")
    next_frames(page, 3)
    summary = page.locator(".lab-status").first.bounding_box()
    shown = measure.bounding_box()
    assert shown["y"] >= summary["y"] + summary["height"], (shown, summary)
    # The hamburger brings the sidebar back.
    page.locator("#sidebar-toggle").click()
    page.wait_for_function("() => document.getElementById('sidebar').classList.contains('show')")


def test_presenter_link_enlarges_type_folds_the_sidebar_and_stays_in_the_address(sized):
    page = sized(1920, 1080, "?presenter=1")
    assert page.evaluate("() => document.documentElement.classList.contains('lab-presenter')")
    assert not page.evaluate(SIDEBAR)["shown"]
    sizes = page.evaluate(TEXT_SIZES)
    assert min(s[0] for s in sizes["lesson"]) >= 20, sizes["lesson"]
    titles = [s for s in page.evaluate(PLOT_TEXT) if s[1] == "text_font_size" and s[0] == "Title"]
    assert titles and min(_px(s[2]) for s in titles) >= 20, titles
    toggle = page.get_by_role("button", name="Presenter mode")
    assert toggle.get_attribute("aria-pressed") == "true"
    # A change to the lab rewrites the address; the flag stays in it.
    page.locator("#sidebar-toggle").click()  # folded, not gone
    page.wait_for_function("() => document.getElementById('sidebar').classList.contains('show')")
    page.locator(".noUi-handle").first.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => location.search.includes('angle=')")
    assert "presenter=1" in page.evaluate("() => location.search")
    # The switch turns it off, in the page and in the address.
    toggle.click()
    page.wait_for_function("() => !document.documentElement.classList.contains('lab-presenter')")
    page.wait_for_function("() => !location.search.includes('presenter')")


def test_the_lesson_is_a_few_tab_presses_from_page_load(sized):
    page = sized(1920, 1080)
    page.locator("body").focus()
    names = []
    for _ in range(20):
        page.keyboard.press("Tab")
        names.append(page.evaluate(FOCUSED))
        if names[-1].startswith("Next"):
            break
    assert names[-1].startswith("Next"), names
    # The skip link is the first stop (Orca found it the fourth, after the header's sidebar
    # button, title and Teach a class), and goes straight to the lesson's first enabled button.
    assert names[0].startswith("Skip to the lesson"), names
    page.get_by_role("link", name="Skip to the lesson").focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => { let el = document.activeElement;"
        " while (el && el.shadowRoot && el.shadowRoot.activeElement)"
        " el = el.shadowRoot.activeElement; return el && el.textContent.startsWith('Next'); }"
    )


def test_keyboard_focus_is_drawn_on_buttons_and_slider_handles(sized):
    page = sized(1920, 1080)
    page.locator("select").first.focus()  # Scenario; the Reset button follows it
    page.keyboard.press("Tab")
    reset = page.evaluate(FOCUS_STYLE)
    assert reset["text"] == "Reset this scenario"
    assert reset["outline"] >= 3 and reset["style"] != "none", reset
    handle = page.locator(".noUi-handle").first
    handle.focus()
    page.keyboard.press("ArrowRight")
    ring = page.evaluate(FOCUS_STYLE)
    assert ring["outline"] >= 3 and ring["style"] != "none" and ring["shadow"] != "none", ring


def test_every_pair_field_and_slider_handle_names_what_it_moves(sized):
    page = sized(1920, 1080)
    open_pair_rows(page)
    # The a11y script names them all in one pass: wait for one after the pairs were drawn.
    wait_for_names(page, [f"{pair} {field}" for pair in "ABC" for field in ("key x", "value y")])
    names = page.evaluate(
        "() => {"
        + DEEP
        + " return deep(document, []).filter(el => el.matches('input.bk-input, .noUi-handle'))"
        ".map(el => el.getAttribute('aria-label') || ''); }"
    )
    for pair in ("A", "B", "C"):
        for field in ("key x", "key y", "value x", "value y"):
            assert f"{pair} {field}" in names, (pair, field, names)
    assert "" not in names and not any(n.strip().isdigit() for n in names), names


def test_page_up_turns_the_query_a_quarter_in_six_presses(sized):
    page = sized(1920, 1080)
    handles = page.locator(".noUi-handle")
    index = handles.evaluate_all(
        "hs => hs.findIndex(h => h.getAttribute('aria-label') === 'Query angle (degrees)')"
    )
    assert index >= 0
    handles.nth(index).focus()
    for _ in range(6):
        page.keyboard.press("PageUp")
    page.wait_for_function(
        "() => parseFloat(new URLSearchParams(location.search).get('angle')) === 90"
    )


def test_d_k_slider_updates_the_plots_while_it_is_dragged(sized):
    page = sized(1920, 1080)
    show_analysis(page)  # the d_k marker lives in the analysis plots
    handles = page.locator(".noUi-handle")
    index = handles.evaluate_all(
        "hs => hs.findIndex(h => (h.getAttribute('aria-label') || '').startsWith('d_k'))"
    )
    handle = handles.nth(index)
    box = handle.bounding_box()
    track = handle.evaluate(
        "h => { const r = h.getRootNode().querySelector('.noUi-target').getBoundingClientRect();"
        " return [r.left, r.right]; }"
    )
    read = "() => Bokeh.documents[0].get_model_by_name('d_k_marker').location"
    assert page.evaluate(read) == 2
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] / 2, y)
    page.mouse.down()
    for step in range(1, 11):  # about half way along: log2 d_k from 1 to ~6
        page.mouse.move(track[0] + (track[1] - track[0]) * 0.45 * step / 10, y)
        next_frames(page)  # each move drawn before the next, as a hand moves
    # Still held: the plots have followed already.
    page.wait_for_function(f"() => ({read})() > 8", timeout=30000)
    page.mouse.up()


def test_a_phone_lays_out_at_its_own_width_and_a_finger_drags_a_key(chromium, lab_server):
    from .labpage import READ_SOURCE, SCREEN_POINT

    context = chromium.new_context(
        viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True
    )
    try:
        page = context.new_page()
        page.goto(lab_server.url)
        page.wait_for_function(LOADED, timeout=30000)
        wait_until_settled(page)
        # The viewport meta tag: without it a phone lays the page out 980 px wide.
        assert page.evaluate("() => innerWidth") == 390
        assert not page.evaluate(SIDEBAR)["shown"]
        page.wait_for_function(f"() => ({SIDEBAR})().width < 1")  # folded: its slide is over
        geometry = page.evaluate(READ_SOURCE, "geometry")
        c = geometry["kind"].index("key") + 2
        x0, y0 = page.evaluate(SCREEN_POINT, ["address_plot", geometry["x1"][c], geometry["y1"][c]])
        x1, y1 = page.evaluate(SCREEN_POINT, ["address_plot", 1.0, 1.0])
        touch = context.new_cdp_session(page)
        touch.send(
            "Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x0, "y": y0}]}
        )
        for step in range(1, 11):
            point = {"x": x0 + (x1 - x0) * step / 10, "y": y0 + (y1 - y0) * step / 10}
            touch.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
            next_frames(page)
        touch.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        # Mid-drag syncs (every 250 ms) may land first; the release sends the final position.
        # The address is the server's: C (the third key) at the release point there means the
        # last sync has arrived. The plot alone can be the browser's preview, which a mid-drag
        # sync's redraw then briefly moved back (CI read x = 0.9 so).
        page.wait_for_function(
            """() => { const keys = new URLSearchParams(location.search).get('keys');
                       const c = keys && keys.split(';')[2];
                       return !!c && c.split(',').every(v => Math.abs(Number(v) - 1) < 0.05); }""",
            timeout=30000,
        )
        page.wait_for_function(
            """c => { const g = Bokeh.documents[0].get_model_by_name('geometry').data;
                      const col = k => (g instanceof Map ? g.get(k) : g[k]);
                      return Math.abs(col('x1')[c] - 1) < 0.05 &&
                             Math.abs(col('y1')[c] - 1) < 0.05; }""",
            arg=c,
            timeout=30000,
        )
        moved = page.evaluate(READ_SOURCE, "geometry")
        assert moved["x1"][c] == pytest.approx(1.0, abs=0.05)
        assert moved["y1"][c] == pytest.approx(1.0, abs=0.05)
    finally:
        context.close()
