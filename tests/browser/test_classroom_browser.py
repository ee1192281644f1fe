"""Classroom legibility, measured in headless Chromium (a review of the lab on a projector and a
phone): presenter sizes after a load, tables included; the laptop's first screen; a phone's
sidebar and drag; a lesson step pointing at its control."""

from __future__ import annotations

import pytest

from .labpage import LOADED, SCREEN_POINT, wait_until_settled

pytestmark = pytest.mark.browser

# Font sizes (px) of every cell of the tables in the page, through shadow roots.
TABLE_CELL_PX = """() => {
  const out = [];
  (function walk(root) {
    for (const el of root.querySelectorAll('*')) {
      if ((el.tagName === 'TD' || el.tagName === 'TH') && el.getClientRects().length)
        out.push(parseFloat(getComputedStyle(el).fontSize));
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  })(document);
  return out;
}"""
# The y-axis label size of the figure that draws a named source.
ROW_LABEL_PX = """name => {
  const source = Bokeh.documents[0].get_model_by_name(name);
  for (const m of Bokeh.documents[0].all_models)
    if (m.type === 'Figure' && m.renderers.some(r => r.data_source === source))
      return parseFloat(m.left[0].major_label_text_font_size);
  return null;
}"""


def _open(browser, url: str, width: int, height: int, init_script: str | None = None, **context):
    ctx = browser.new_context(viewport={"width": width, "height": height}, **context)
    if init_script is not None:
        ctx.add_init_script(init_script)
    page = ctx.new_page()
    page.goto(url)
    page.wait_for_function(LOADED, timeout=30000)
    wait_until_settled(page)
    return page


# True once what `boxes` (a JS function of no arguments) returns has stayed the same for
# `frames` animation frames in a row while no finite CSS animation or transition runs: a slide
# or an entrance is over, however long it took on this machine. Polled once a frame.
STEADY = """() => {{
  const now = JSON.stringify(({boxes})());
  const busy = document.getAnimations().some(a => a.playState === 'running' &&
    a.effect && a.effect.getComputedTiming().iterations !== Infinity);
  const s = window.__steady || (window.__steady = {{last: null, n: 0}});
  s.n = now === s.last && !busy ? s.n + 1 : 0;
  s.last = now;
  return s.n >= {frames};
}}"""


def wait_until_still(page, boxes: str, frames: int = 3, timeout: float = 30000) -> None:
    """Wait until the boxes `boxes` measures stop moving (see STEADY), not for a fixed time."""
    page.evaluate("() => { window.__steady = null; }")
    steady = STEADY.format(boxes=boxes, frames=frames)
    page.wait_for_function(steady, polling="raf", timeout=timeout)


def _boxes_of(selector: str) -> str:
    return f"""() => [...document.querySelectorAll({selector!r})].map(el => {{
      const r = el.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; }})"""


@pytest.fixture
def sized(chromium, lab_server):
    pages = []

    def _sized(width: int, height: int, query: str = "", init_script=None, **context):
        page = _open(chromium, lab_server.url + query, width, height, init_script, **context)
        pages.append(page)
        return page

    yield _sized
    for page in pages:
        page.context.close()


def test_presenter_sizes_hold_after_a_step_loads_and_in_the_tables(sized):
    page = sized(1920, 1080, "?presenter=1")
    assert page.evaluate(ROW_LABEL_PX, "weights") == 18
    page.get_by_role("button", name="Load this step").first.click()
    page.wait_for_function("() => location.search.includes('lesson=1')")
    page.wait_for_function(f"() => ({ROW_LABEL_PX})('weights') === 18", timeout=30000)
    page.get_by_text("Audit", exact=True).first.click()
    page.get_by_role("button", name="Run the audit").click()
    page.wait_for_function(f"() => ({TABLE_CELL_PX})().length > 4", timeout=30000)
    cells = page.evaluate(TABLE_CELL_PX)
    assert min(cells) >= 20, cells  # the page's presenter type (was Panel's 12 px)


# Text in the sidebar that runs past its right edge (the sidebar clips it): [text, right, edge].
SIDEBAR_CLIPPED = """() => {
  const edge = document.getElementById('sidebar').getBoundingClientRect().right;
  const out = [];
  (function walk(root) {
    for (const el of root.querySelectorAll('*')) {
      const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
      const r = el.getBoundingClientRect();
      if (own && r.width > 0 && r.right > edge + 0.5)
        out.push([el.textContent.trim().slice(0, 40), Math.round(r.right), Math.round(edge)]);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  })(document.getElementById('sidebar'));
  return out;
}"""


def test_no_sidebar_value_or_label_is_cut_off_in_presenter_type(sized):
    page = sized(1366, 768, "?model=binding&presenter=1")
    page.locator("#sidebar-toggle").click()  # presenter mode folds it
    page.wait_for_function("() => document.getElementById('sidebar').classList.contains('show')")
    page.get_by_text("Query position").first.wait_for(state="visible")
    wait_until_still(page, _boxes_of("#sidebar"))  # the slide in is over
    assert page.evaluate(SIDEBAR_CLIPPED) == []


def _boxes_overlap(a, b) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and (a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])
    )


@pytest.mark.parametrize("width,height", [(1366, 768), (390, 844)])
def test_a_bad_links_warnings_leave_the_measure_button_free(sized, width, height):
    # In the page's flow since issue 40 (toasts lay over this button, then over the sidebar's);
    # tests/browser/test_warnings_browser.py checks every control at four sizes.
    page = sized(width, height, "?temperature=-1&angle=999")
    page.locator(".lab-link-list li").nth(1).wait_for(timeout=30000)  # one per problem
    measure = page.get_by_role("button", name="Measure").first
    measure.evaluate("el => el.scrollIntoView({block: 'end'})")
    notes = page.locator(".lab-link-notes").first
    assert not _boxes_overlap(notes.bounding_box(), measure.bounding_box())


# Where a sidebar control labelled `name` is drawn, whether it is outlined, and the sidebar's
# visible box; and what the pointer's live region says.
CONTROL_SHOWN = """name => {
  const sidebar = document.getElementById('sidebar');
  const hits = [];
  (function walk(root) {
    for (const el of root.querySelectorAll('*')) {
      const label = el.classList.contains('bk-slider-title') || ['LABEL', 'BUTTON'].includes(
        el.tagName);
      if (label && el.textContent.trim().startsWith(name) && el.getClientRects().length)
        hits.push(el);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  })(sidebar);
  if (!hits.length) return null;
  const host = hits[0].getRootNode().host;
  const r = host.getBoundingClientRect(), s = sidebar.getBoundingClientRect();
  let said = '';
  (function walk(root) {
    for (const el of root.querySelectorAll('*')) {
      if (el.getAttribute('aria-live') === 'polite' && el.textContent.includes('the controls this step uses'))
        said = el.textContent;
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  })(document);
  return {top: r.top, bottom: r.bottom, sidebarTop: s.top, sidebarBottom: s.bottom,
          outline: getComputedStyle(host).outlineStyle, said};
}"""


def watch_outlined(name: str) -> str:
    """A script run before the page's own: every 100 ms until it happens, whether the control
    named `name` is in view in the sidebar and outlined, the first such look kept in
    `window.__labOutlined`. The outline lasts 3 s, and a page opened on a step draws it while it
    loads: under load it could be over before the test was back from opening the page."""
    return f"""(() => {{
  const look = {CONTROL_SHOWN};
  const timer = setInterval(() => {{
    if (!document.getElementById('sidebar')) return;
    const c = look({name!r});
    if (c !== null && c.outline !== 'none' && c.top >= c.sidebarTop &&
        c.bottom <= c.sidebarBottom) {{
      window.__labOutlined = c;
      clearInterval(timer);
    }}
  }}, 100);
}})()"""


def _in_view_and_outlined(page, name: str) -> dict:
    """The first look at the control in view and outlined, with what the pointer said."""
    page.wait_for_function("() => window.__labOutlined !== undefined", timeout=30000)
    page.wait_for_function(
        f"() => ({CONTROL_SHOWN})({name!r}).said.includes('Highlighted')", timeout=30000
    )
    said = page.evaluate(CONTROL_SHOWN, name)["said"]
    return {**page.evaluate("() => window.__labOutlined"), "said": said}


@pytest.mark.parametrize(
    "query,name", [("", "Swap the value of"), ("?lesson=10", "Reverse the pairs")]
)
def test_a_step_scrolls_to_the_control_it_needs_and_outlines_it(sized, query, name):
    # Its sidebar open (a laptop's starts folded).
    page = sized(1920, 1080, query, init_script=watch_outlined(name))
    if not query:  # the student loads the first step
        page.get_by_role("button", name="Load this step").first.click()
    shown = _in_view_and_outlined(page, name)
    assert f'"{name}"' in shown["said"] and "Highlighted" in shown["said"], shown
    # Briefly: the outline goes again (after control_pointer.js's HIGHLIGHT_MS, 3 s).
    page.wait_for_function(f"() => ({CONTROL_SHOWN})({name!r}).outline === 'none'", timeout=30000)


def test_a_folded_sidebar_shows_its_way_in_then_the_controls_once_opened(sized):
    # A laptop's sidebar starts folded: nothing in it is drawn, so the pointer outlines the menu
    # button and says where the controls are; opened, it points at them (it said nothing here
    # before, on every step, at 1366 and 390 px).
    name = "Reverse the pairs"
    page = sized(1366, 768, "?lesson=10", init_script=watch_outlined(name))
    page.wait_for_function(
        """() => { let said = '';
          (function walk(root) { for (const el of root.querySelectorAll('*')) {
            if (el.getAttribute('aria-live') === 'polite') said += el.textContent;
            if (el.shadowRoot) walk(el.shadowRoot); } })(document);
          return said.includes('open it with the menu button') && said.includes('"Reverse the pairs"')
            && getComputedStyle(document.getElementById('sidebar-toggle')).outlineStyle !== 'none';
        }""",
        timeout=30000,
    )
    page.locator("#sidebar-toggle").click()
    shown = _in_view_and_outlined(page, name)
    assert f'"{name}"' in shown["said"] and "Highlighted" in shown["said"], shown


PHONE_BOXES = """() => {
  const box = el => { const r = el.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, width: r.width}; };
  let summary = null;
  (function walk(root) {
    for (const el of root.querySelectorAll('*')) {
      if (el.classList.contains('lab-summary') && el.getClientRects().length) summary = el;
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  })(document);
  return {sidebar: box(document.getElementById('sidebar')),
          main: box(document.getElementById('main')), summary: summary && box(summary)};
}"""


def test_a_phone_sidebar_lies_over_the_page_and_the_summary_stays_while_dragging(sized):
    page = sized(390, 844, has_touch=True, is_mobile=True)
    page.locator("#sidebar-toggle").click()
    page.wait_for_function("() => document.getElementById('sidebar').classList.contains('show')")
    wait_until_still(page, _boxes_of("#sidebar"))  # its slide is over
    boxes = page.evaluate(PHONE_BOXES)
    # Full width over the page; the page keeps its width (it was squeezed to a 20 px column).
    assert boxes["sidebar"]["left"] == 0 and boxes["sidebar"]["width"] >= 389, boxes
    assert boxes["main"]["width"] >= 389, boxes
    page.locator("#sidebar-toggle").click()
    page.wait_for_function("() => !document.getElementById('sidebar').classList.contains('show')")
    # The address plane where a finger drags it: the summary (who gets the weight) is on screen.
    page.evaluate(SCREEN_POINT, ["address_plot", 0.0, 0.0])  # scrolls the plane to the centre
    wait_until_still(page, PHONE_BOXES)  # the scroll is over
    summary = page.evaluate(PHONE_BOXES)["summary"]
    assert summary is not None and summary["top"] >= 50 and summary["bottom"] <= 844, summary
    assert summary["bottom"] - summary["top"] <= 90, summary  # compact: three lines at most
