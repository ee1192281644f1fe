"""Drive the served lab in headless Chromium and read exactly what the browser draws.

Controls are moved the way a keyboard user moves them (focus, then arrow keys or space), and
plots are read from their named ColumnDataSources in the page's Bokeh document. The server is
the suite's shared lab (`lab_server`, tests/conftest.py), or one of tools/harness.py's.
"""

from __future__ import annotations

import math
import shutil

import numpy as np

from app.page.lab_page import PAIR_ROWS
from tools.harness import wait_until

# How long a test waits for what it expects before it fails. The waits return as soon as the
# condition holds; the deadline only has to outlast a busy machine: CI's two cores run two
# pytest-xdist workers, each with its own Chromium and servers.
WAIT_S = 30.0
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
SOURCE_NAMES = (
    "geometry",
    "contributions",
    "logits",
    "weights",
    "entropy_sweep",
    "dimension_sweep",
    "jacobian",
)
# The page has drawn: its weights, or, on a lesson step that holds its numbers back until
# Measure (app/page/held.py), the headline that says so.
LOADED = """() => {
  if (!window.Bokeh || Bokeh.documents.length === 0) return false;
  const doc = Bokeh.documents[0], weights = doc.get_model_by_name('weights');
  if (weights === null) return false;
  if (weights.data.weight.length > 0) return true;
  return [...doc._all_models.values()].some(
    m => typeof m.encoded_text === 'string' && m.encoded_text.startsWith('Predict first'));
}"""
# The headline while a lesson step holds its numbers back (app/page/held.py), or null.
HELD_HEADLINE = """() => {
  const m = [...Bokeh.documents[0]._all_models.values()].find(
    m => typeof m.encoded_text === 'string');
  const text = m ? decodeURIComponent(m.encoded_text) : '';
  return text.startsWith('Predict first') ? text : null;
}"""
READ_SOURCE = """name => {
  const model = Bokeh.documents[0].get_model_by_name(name);
  if (model === null) return null;
  const data = model.data;
  const entries = data instanceof Map ? Array.from(data.entries()) : Object.entries(data);
  const out = {};
  for (const [key, column] of entries) out[key] = Array.from(column);
  return out;
}"""
READ_MODEL = """([name, attr]) => {
  const model = Bokeh.documents[0].get_model_by_name(name);
  return model === null ? null : model[attr];
}"""
# The element that has keyboard focus, looking through shadow roots, and its accessible text.
FOCUSED = """() => {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  if (!el) return '';
  const label = el.labels && el.labels.length ? el.labels[0].textContent.trim() : '';
  return el.getAttribute('aria-label') || label || (el.textContent || '').trim() || el.value || '';
}"""
# Screen position of a data point in a named figure (via its Bokeh view's scales).
SCREEN_POINT = """([name, x, y]) => {
  const model = Bokeh.documents[0].get_model_by_name(name);
  let view = null;
  for (const root of Bokeh.index.roots) { view = root.owner.find_one(model); if (view) break; }
  view.canvas_view.el.scrollIntoView({block: 'center'});
  const box = view.canvas_view.el.getBoundingClientRect();
  return [box.left + view.frame.x_scale.compute(x), box.top + view.frame.y_scale.compute(y)];
}"""
# The slider's title and its handle share one shadow root.
FIND_SLIDER = """(handles, title) => handles.findIndex(h => {
  const t = h.getRootNode().querySelector('.bk-slider-title');
  return t !== null && t.textContent.trim().startsWith(title);
})"""
# Bokeh draws a checkbox as an input with its label text in a sibling element.
FIND_CHECKBOX = """(boxes, text) => boxes.findIndex(b => Array.from(b.getRootNode().children)
  .some(c => c.tagName !== 'STYLE' && c !== b && c.textContent.includes(text)))"""


# Every toast the page has shown, expired ones included (a warning leaves the screen after
# 10 s, which a loaded machine can spend on the round trip alone): run before the page's own
# scripts, so it sees the first toast too.
TOAST_LOG = """(() => {
  const shown = window.__labToasts = [];
  const add = () => document.querySelectorAll('.notyf__message').forEach(el => {
    if (!shown.includes(el)) shown.push(el);
  });
  new MutationObserver(add).observe(document, {childList: true, subtree: true});
})()"""
TOASTS_SHOWN = "() => (window.__labToasts || []).map(el => el.textContent.trim())"
# A link's warnings, one line each, as the page shows them in its flow (app/views/status.py).
LINK_WARNINGS = ".lab-link-list li"


def page_wait_until(page, predicate, what: str, timeout: float = WAIT_S):
    """tests/waiting.py's wait_until, pausing through Playwright so the page's events (console
    messages, requests) keep arriving while the test polls."""
    return wait_until(
        predicate, what, timeout, pause=lambda seconds: page.wait_for_timeout(seconds * 1000)
    )


# Resolves once the page has drawn `n` more frames (after a pointer move, a redraw).
NEXT_FRAMES = """(n) => new Promise(resolve => {
  const step = k => (k <= 0 ? resolve() : requestAnimationFrame(() => step(k - 1)));
  step(n);
})"""


def next_frames(page, n: int = 1) -> None:
    page.evaluate(NEXT_FRAMES, n)


# The page's echo (app/page/a11y.py's PageTools): one more than last time, through its Bokeh
# model; resolves to the number sent.
_SEND_ECHO = """() => {
  const model = [...Bokeh.documents[0].all_models].find(
    m => m.data != null && typeof m.data === 'object' && 'echoed' in m.data);
  window.__labEcho = model;
  model.data.echo = Math.max(model.data.echo, model.data.echoed) + 1;
  return model.data.echo;
}"""


def server_round_trip(page, timeout: float = 30.0) -> None:
    """Send a marker through the page's session and wait for the server's answer to it.

    The server handles one session's messages in order and answers over one websocket, so once
    the marker's answer is in, everything the page sent before it has been handled and its
    answer has arrived: what has not happened by then was not going to. The marker is the
    page's echo (a number the server copies back); it changes nothing on the page."""
    sent = page.evaluate(_SEND_ECHO)
    page.wait_for_function(
        "sent => window.__labEcho.data.echoed >= sent", arg=sent, timeout=timeout * 1000
    )


# Every accessible name the page's a11y script (app/page/a11y.py) has set, shadow roots included.
_ARIA_LABELS = """() => {
  const out = [];
  (function walk(root) {
    for (const el of root.querySelectorAll('*')) {
      const name = el.getAttribute('aria-label');
      if (name) out.push(name);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  })(document);
  return out;
}"""


def wait_for_names(page, names, timeout: float = 30.0) -> None:
    """Wait until the page's a11y script has named a control after each of `names` (an
    accessible name that starts with it): it names the controls now and then, not at once."""
    wanted = list(names)
    page.wait_for_function(
        f"wanted => {{ const have = ({_ARIA_LABELS})();"
        " return wanted.every(w => have.some(n => n.startsWith(w))); }",
        arg=wanted,
        timeout=timeout * 1000,
    )


# The first render is over: Bokeh's document is idle (every root view drawn), every stylesheet
# in the page and its shadow roots has loaded, the fonts are in, and the a11y script has named
# each slider handle.
SETTLED = """() => {
  if (!(window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents[0].is_idle)) return false;
  if (document.fonts.status !== 'loaded') return false;
  // The controls' names come from a debounced walk (app/js/control_names.js): none pending.
  if (window.__labA11y && window.__labA11y.timer != null) return false;
  const links = [], handles = [];
  (function walk(root) {
    for (const el of root.querySelectorAll('*')) {
      if (el.tagName === 'LINK' && el.rel === 'stylesheet') links.push(el);
      if (el.classList.contains('noUi-handle')) handles.push(el);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  })(document);
  return links.every(l => l.sheet !== null) && handles.length > 0 &&
    handles.every(h => h.getAttribute('aria-label'));
}"""
# Resolves once every Bokeh root view keeps its size and place over two drawn frames (the
# first resize after load has been laid out), or after `limit` frames with the last boxes.
_LAYOUT_STILL = """(limit) => new Promise(resolve => {
  const boxes = () => JSON.stringify(Bokeh.index.roots.filter(v => v.el != null).map(v => {
    const r = v.el.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; }));
  let last = boxes(), same = 0, frames = 0;
  const step = () => {
    const now = boxes();
    same = now === last ? same + 1 : 0;
    last = now;
    frames += 1;
    if (same >= 2 || frames >= limit) resolve(same >= 2); else requestAnimationFrame(step);
  };
  requestAnimationFrame(step);
})"""


def wait_until_settled(page, timeout: float = 30.0) -> None:
    """After LOADED: wait for the first render to finish (SETTLED) and the layout to hold."""
    page.wait_for_function(SETTLED, timeout=timeout * 1000)
    assert page.evaluate(_LAYOUT_STILL, 600), "the page's layout kept moving for 600 frames"


def chromium_path() -> str | None:
    """Debian's Chromium, the browser a student opens: the benchmarks and screenshots use it."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def headless_chromium_path() -> str | None:
    """What the tests drive: Debian's chromium-headless-shell where it is installed (.ci/run
    installs it), else chromium. The shell is the same Chromium build (the same Blink, V8 and
    Skia) without the browser's own UI: no WebUI renderers or browser chrome beside each tab,
    about a third less CPU per lab page loaded (python -m tools.bench_browser). It is
    also the build Playwright itself runs for headless pages."""
    return shutil.which("chromium-headless-shell") or chromium_path()


# Drawn: their data, or, on a lesson step that holds the route back, the held headline.
ANALYSIS_DRAWN = """() => {
  const doc = Bokeh.documents[0], m = doc.get_model_by_name('entropy_sweep');
  if (m === null) return false;
  if (m.data.entropy.length > 0) return true;
  return [...doc._all_models.values()].some(
    m => typeof m.encoded_text === 'string' && m.encoded_text.startsWith('Predict first'));
}"""


def press(button) -> None:
    """Press a button as a keyboard user does: focus, then Enter.

    A pointer's click waits until nothing lies over the button, and a toast (a refused change's)
    lies over the sidebar's lower buttons for its seconds. A key press reaches the button under
    it at once."""
    button.focus()
    button.press("Enter")


def open_more_settings(page) -> None:
    """Open the sidebar's "More settings" (candidates, engine, key/value pairs) and wait for it."""
    button = page.locator("button.lab-disclosure").first
    if button.get_attribute("aria-expanded") != "true":
        press(button)
    page.get_by_text("Reverse the pairs").first.wait_for(state="visible", timeout=30000)


def open_pair_rows(page) -> None:
    """Open "More settings" and, inside it, each pair's inputs, and wait for them."""
    open_more_settings(page)
    rows = page.locator("button.lab-disclosure", has_text=PAIR_ROWS)
    if rows.get_attribute("aria-expanded") != "true":
        press(rows)
    page.locator(".lab-pair").first.wait_for(state="visible", timeout=30000)


def show_analysis(page, *, by_scrolling: bool = False) -> None:
    """Have the page build its analysis plots (app/page/deferred.py) and wait for their data:
    by pressing the placeholder's button, or as a student does, by scrolling to it."""
    if page.evaluate(ANALYSIS_DRAWN):
        return  # built already
    placeholder = page.locator(".lab-deferred").first
    if by_scrolling:
        placeholder.evaluate("el => el.scrollIntoView({block: 'center'})")
    else:
        placeholder.locator("button").click()
    page.wait_for_function(ANALYSIS_DRAWN, timeout=30000)


class LabPage:
    """One browser tab on the lab (one server session)."""

    def __init__(self, browser, url: str, problems: list[str], *, more_settings: bool = True):
        self.page = browser.new_page(
            viewport={"width": 1600, "height": 1000},
            permissions=["clipboard-read", "clipboard-write"],
        )
        self.problems = problems
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
        self.page.on("request", self._request)
        self.page.add_init_script(TOAST_LOG)
        self.page.goto(url)
        self.page.wait_for_function(LOADED, timeout=30000)
        if more_settings and self.page.locator("button.lab-disclosure").first.is_visible():
            open_more_settings(self.page)  # most tests move a control from there

    def _console(self, msg) -> None:
        if msg.type == "error":
            self.problems.append(f"console error: {msg.text}")

    def _request(self, request) -> None:
        host = request.url.split("/")[2] if "://" in request.url else ""
        if not host.startswith(("127.0.0.1", "localhost")) and not request.url.startswith(
            ("data:", "blob:")
        ):
            self.problems.append(f"request left the machine: {request.url}")

    def show_analysis(self, *, by_scrolling: bool = False) -> None:
        show_analysis(self.page, by_scrolling=by_scrolling)

    def show_pair_rows(self) -> None:
        open_pair_rows(self.page)

    # -- reading ------------------------------------------------------------------------------
    def data(self, name: str) -> dict[str, list]:
        out = self.page.evaluate(READ_SOURCE, name)
        assert out is not None, f"no ColumnDataSource named {name!r} in the page"
        return out

    def column(self, name: str, column: str) -> np.ndarray:
        return np.array(self.data(name)[column], dtype=float)

    def model_attr(self, name: str, attr: str):
        return self.page.evaluate(READ_MODEL, [name, attr])

    def link_warnings(self) -> list[str]:
        """The lines of the link's warnings on the page now (none once dismissed)."""
        lines = self.page.locator(LINK_WARNINGS)
        return [line.strip() for line in lines.all_inner_texts()] if lines.count() else []

    def toasts(self) -> list[str]:
        """The text of every toast this page has shown, in order, expired ones included."""
        return self.page.evaluate(TOASTS_SHOWN)

    def search(self) -> str:
        return self.page.evaluate("() => window.location.search")

    def shows(self, text: str) -> bool:
        """Is `text` visible anywhere in the page, shadow roots included?"""
        found = self.page.get_by_text(text)
        return any(found.nth(i).is_visible() for i in range(found.count()))

    def wait_for_change(self, name: str, before: dict, timeout: float = WAIT_S) -> dict:
        """Poll the source until its data differs from `before`; returns the new data."""

        def changed():
            now = self.data(name)
            return None if _same(now, before) else now

        return self.wait_until(changed, f"source {name!r} to change", timeout)

    def wait_until(self, predicate, what: str, timeout: float = WAIT_S):
        return page_wait_until(self.page, predicate, what, timeout)

    def server_round_trip(self) -> None:
        server_round_trip(self.page)

    # -- acting (keyboard, like a user without a mouse) ---------------------------------------
    def slider_keys(self, title: str, key: str, times: int = 1) -> None:
        handles = self.page.locator(".noUi-handle")
        index = handles.evaluate_all(FIND_SLIDER, title)
        assert index >= 0, f"no slider titled {title!r}"
        handle = handles.nth(index)
        handle.focus()
        for _ in range(times):
            handle.press(key)

    def toggle_checkbox(self, text: str) -> None:
        boxes = self.page.locator("input[type=checkbox]")
        index = boxes.evaluate_all(FIND_CHECKBOX, text)
        assert index >= 0, f"no checkbox labelled {text!r}"
        box = boxes.nth(index)
        box.focus()
        box.press("Space")

    def drag(self, figure: str, start: tuple[float, float], end: tuple[float, float]) -> None:
        """Drag with the mouse from one data point to another inside a named figure."""
        x0, y0 = self.page.evaluate(SCREEN_POINT, [figure, *start])
        x1, y1 = self.page.evaluate(SCREEN_POINT, [figure, *end])
        mouse = self.page.mouse
        mouse.move(x0, y0)
        mouse.down()
        for step in range(1, 11):
            mouse.move(x0 + (x1 - x0) * step / 10, y0 + (y1 - y0) * step / 10)
            next_frames(self.page)  # each move is drawn before the next, as a hand moves
        mouse.up()

    def open_tab(self, name: str) -> None:
        self.page.get_by_text(name, exact=True).first.click()

    def tab_through(self, presses: int) -> list[str]:
        """Press Tab `presses` times from the top; the names of the elements that took focus."""
        self.page.locator("body").focus()
        names = []
        for _ in range(presses):
            self.page.keyboard.press("Tab")
            names.append(self.page.evaluate(FOCUSED))
        return names

    def click_button(self, name: str) -> None:
        self.page.get_by_role("button", name=name).first.click()

    def close(self) -> None:
        self.page.close()


def _same(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    for key in a:
        x, y = a[key], b[key]
        if len(x) != len(y):
            return False
        for u, v in zip(x, y, strict=True):
            if isinstance(u, float) and isinstance(v, float):
                if not (u == v or (math.isnan(u) and math.isnan(v))):
                    return False
            elif u != v:
                return False
    return True


def page_opener(chromium, server, problems: list[str]):
    """(open, close_all): `open(query)` opens a page of `server`'s lab in a context of its own;
    `close_all()` closes every page it opened."""
    pages = []

    def _open(query: str = "", *, more_settings: bool = True) -> LabPage:
        page = LabPage(chromium, server.url + query, problems, more_settings=more_settings)
        pages.append(page)
        return page

    def close_all() -> None:
        for page in pages:
            page.close()

    return _open, close_all
