"""Benchmark of the lab's update path (a script, not a test): `python -m tools.bench_ui`.

Reports, from one run, medians and 95th percentiles of
1. server-side time from a control change to every ColumnDataSource updated (the state
   recomputes, every view assigns its sources), at 3 keys and at 4096 keys;
2. the size of that update on the wire: the document patch Bokeh would send, serialised
   (JSON content plus the binary float32 buffers), and the time to serialise it;
3. with --browser: the round trip on loopback in headless Chromium, from a key press on the
   query-angle slider to the redrawn `weights` data in the page.
Targets (issue 3): <= 2 ms at 3 keys, <= 20 ms at 4096 keys, <= 100 ms p95 round trip.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tools.bokeh_internals import take_held_events
from tools.harness import PYTHON_M_APP, serve_lab


def median_and_p95_ms(samples_s: list[float]) -> tuple[float, float]:
    ms = np.asarray(samples_s) * 1e3
    return float(np.median(ms)), float(np.percentile(ms, 95))


def lab_in_document(**settings):
    """A lab page attached to a Bokeh Document, as in a server session but in-process."""
    import panel as pn
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    from app.page.lab_page import create_app
    from app.patches import apply_all
    from app.state.lab_state import LabState

    apply_all()  # the process-wide patches, as the server applies them at start
    doc = Document()
    with set_curdoc(doc):
        template = create_app(LabState(**settings))
        template.server_doc(doc)
    return doc, template.lab, pn


def _patch_message(events):
    from bokeh.document.events import DocumentPatchedEvent
    from bokeh.protocol import Protocol

    patch = [e for e in events if isinstance(e, DocumentPatchedEvent)]
    t0 = time.perf_counter()
    msg = Protocol().create("PATCH-DOC", patch)
    size = len(msg.header_json) + len(msg.metadata_json) + len(msg.content_json)
    size += sum(len(buf.to_bytes()) for buf in msg.buffers)
    return size, time.perf_counter() - t0, len(patch)


def server_side(distractors: int, repeats: int) -> dict:
    """Time `state.angle = a` -> all sources assigned, alternating two angles."""
    doc, lab, _pn = lab_in_document(distractors=distractors)
    state = lab.state
    n_keys = len(state.snapshot.weights)
    times, sizes, ser_times, n_events = [], [], [], 0
    angles = (10.0, 20.0)
    for i in range(repeats + 5):
        doc.hold("combine")
        t0 = time.perf_counter()
        state.angle = angles[i % 2]
        elapsed = lab.drawn_at - t0  # the last source assigned, not the URL write after it
        events = take_held_events(doc)
        doc.unhold()
        if state.error:
            raise RuntimeError(f"the lab refused the change: {state.error}")
        if i < 5:
            continue  # warm-up: caches, first allocations
        times.append(elapsed)
        size, ser, n_events = _patch_message(events)
        sizes.append(size)
        ser_times.append(ser)
    # The views' share: redraw alternating between two snapshots, without the state's recompute.
    snaps = []
    for angle in angles:
        state.angle = angle
        snaps.append(state.snapshot)
    draw = []
    for i in range(repeats):
        doc.hold("combine")
        t0 = time.perf_counter()
        lab.parts.draw(snaps[i % 2])
        draw.append(time.perf_counter() - t0)
        take_held_events(doc)
        doc.unhold()
    return {
        "keys": n_keys,
        "update": median_and_p95_ms(times),
        "views_only": median_and_p95_ms(draw),
        "bytes": int(statistics.median(sizes)),
        "serialise": median_and_p95_ms(ser_times),
        "events": n_events,
    }


def key_press_to_redraw(page, source: str, slider: str, keys: tuple[str, str], repeats: int):
    """Seconds from a key press on `slider` to a change of the named source, timed in the page
    (alternating the two keys, three warm-up presses first)."""
    from tests.browser.labpage import FIND_SLIDER

    page.evaluate(
        """name => {
          const src = Bokeh.documents[0].get_model_by_name(name);
          window.__redrawn = 0;
          src.change.connect(() => { window.__redrawn = performance.now(); });
          document.addEventListener('keydown', () => {
            window.__pressed = performance.now(); }, true);
        }""",
        source,
    )
    handles = page.locator(".noUi-handle")
    handle = handles.nth(handles.evaluate_all(FIND_SLIDER, slider))
    if "PageUp" in keys:  # the page gives each slider its coarse keys once it has drawn it
        page.wait_for_function("h => h.dataset.labCoarse === '1'", arg=handle.element_handle())
    handle.focus()
    samples = []
    for i in range(repeats + 3):
        page.evaluate("() => { window.__redrawn = 0; }")
        handle.press(keys[i % 2])
        page.wait_for_function("() => window.__redrawn > 0", timeout=10000)
        if i >= 3:
            samples.append(page.evaluate("() => window.__redrawn - window.__pressed") / 1e3)
        page.wait_for_timeout(120)  # let the previous update settle between presses
    return samples


def checkout_helpers():
    """The browser tests' Chromium helpers (tests/browser/labpage.py) and the harness's
    `serve_lab` (tools/harness.py)."""
    checkout = Path(__file__).resolve().parents[1]
    if not (checkout / "tests" / "browser" / "labpage.py").is_file():
        raise SystemExit("--browser needs the source checkout (it reuses tests/browser/labpage.py)")
    sys.path.insert(0, str(checkout))
    from tests.browser.labpage import CHROMIUM_ARGS, LOADED, chromium_path

    return CHROMIUM_ARGS, LOADED, chromium_path


def serve_quietly(log_path: Path):
    """The lab in its own process (`python -m app` from this checkout), logging warnings only."""
    return serve_lab(log_path, "--log-level", "warning", command=PYTHON_M_APP)


@contextlib.contextmanager
def lab_page(query: str = "", loaded: str | None = None, **page_args):
    """A served lab (its own server process) open in headless Chromium at `query`, loaded."""
    from playwright.sync_api import sync_playwright

    CHROMIUM_ARGS, LOADED, chromium_path = checkout_helpers()
    path = chromium_path()
    if path is None:
        raise SystemExit("chromium is not installed; run without --browser")
    server = serve_quietly(Path(tempfile.mkdtemp(prefix="attention-lab-bench-")) / "lab.log")
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
            page = browser.new_page(**page_args)
            page.goto(server.url + query)
            page.wait_for_function(loaded or LOADED, timeout=30000)
            yield page
            browser.close()
    finally:
        server.stop()


def browser_round_trip(repeats: int, distractors: int = 0) -> tuple[float, float]:
    """Key press on the angle slider -> `weights` data changed in the page, timed in the page."""
    with lab_page(f"?distractors={distractors}" if distractors else "") as page:
        samples = key_press_to_redraw(
            page, "weights", "Query angle", ("ArrowRight", "ArrowLeft"), repeats
        )
    return median_and_p95_ms(samples)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200, help="samples at 3 keys")
    parser.add_argument("--repeats-large", type=int, default=60, help="samples at 4096 keys")
    parser.add_argument("--browser", action="store_true", help="also time the browser round trip")
    parser.add_argument("--browser-repeats", type=int, default=40)
    args = parser.parse_args(argv)

    print("server side: control change -> all sources updated (ms, median / p95)")
    for distractors, repeats in ((0, args.repeats), (4093, args.repeats_large)):
        r = server_side(distractors, repeats)
        print(
            f"  {r['keys']:5d} keys: update {r['update'][0]:7.2f} / {r['update'][1]:7.2f}"
            f"   views only {r['views_only'][0]:6.2f} / {r['views_only'][1]:6.2f}"
            f"   patch {r['bytes'] / 1024:8.1f} KiB in {r['events']} events,"
            f" serialised in {r['serialise'][0]:.2f} ms"
        )
    if args.browser:
        med, p95 = browser_round_trip(args.browser_repeats)
        print(f"browser round trip, 3 keys (ms): median {med:.1f}, p95 {p95:.1f}")
        med, p95 = browser_round_trip(max(10, args.browser_repeats // 2), distractors=4093)
        print(f"browser round trip, 4096 keys (ms): median {med:.1f}, p95 {p95:.1f}")


if __name__ == "__main__":
    main()
