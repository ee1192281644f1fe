"""Benchmark of a live drag in headless Chromium (a script, not a test): `python -m tools.bench_drag`.

Serves the lab in a subprocess, opens it in Debian's Chromium and drags key C's tip back and
forth with the mouse (mouse down, many small moves, mouse up), several times. For each drag it
measures
1. preview frames per second: how often per second the page's `weights` data changed while the
   button was down (polled on every animation frame, so it also counts server updates, and it
   reads 0 on a lab without the browser preview);
2. messages per second the server received from the dragging page (Bokeh document patches
   sent over the websocket, by what they change);
3. server CPU seconds per second of dragging (the server process's user + system time);
4. preview frames per pointer move (the page's own count of frames it previewed; the browser
   tests once required at least 0.5, which only a fast machine keeps);
5. tip syncs per throttle period (the dragged tip sent to the server, against the periods of
   app/views/preview.py's THROTTLE_MS the drag lasted, plus one; at most 1 by design).
Also the page's own cost of one preview frame (compute and in-place writes, before the canvas
repaint). Prints the medians over the drags. `--url` (and `--pid` for its CPU) benchmarks a lab
that is already running, e.g. another checkout for a before/after comparison.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

from app.views.preview import THROTTLE_MS

ROOT = Path(__file__).resolve().parents[1]

INIT = """() => {
  window.__benchSent = [];
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (typeof data === 'string' && data.startsWith('{"events"')) {
      try {
        const attrs = JSON.parse(data).events.map(e => e.attr || e.kind).join(',');
        window.__benchSent.push([performance.now(), attrs]);
      } catch (e) {}
    }
    return send.call(this, data);
  };
  window.__benchChanges = [];
  let last = null;
  const poll = () => {
    const doc = window.Bokeh && Bokeh.documents[0];
    const src = doc && doc.get_model_by_name('weights');
    if (src) {
      const data = src.data instanceof Map ? src.data.get('weight') : src.data.weight;
      const now = data ? Array.from(data).join(',') : null;
      if (last !== null && now !== last) window.__benchChanges.push(performance.now());
      last = now;
    }
    requestAnimationFrame(poll);
  };
  requestAnimationFrame(poll);
}"""


def _cpu(proc) -> float:
    if proc is None:
        return float("nan")
    times = proc.cpu_times()
    return times.user + times.system


def drag_once(page, server_proc, start, end, steps: int, pause_ms: int) -> dict:
    from browser.labpage import SCREEN_POINT

    x0, y0 = page.evaluate(SCREEN_POINT, ["address_plot", *start])
    x1, y1 = page.evaluate(SCREEN_POINT, ["address_plot", *end])
    page.mouse.move(x0, y0)
    page.wait_for_timeout(300)
    t0 = page.evaluate("() => performance.now()")
    frames0 = page.evaluate("() => window.__attentionLabFrames ?? 0")
    cpu0, wall0 = _cpu(server_proc), time.perf_counter()
    page.mouse.down()
    for step in range(1, steps + 1):
        f = step / steps
        page.mouse.move(x0 + (x1 - x0) * f, y0 + (y1 - y0) * f)
        page.wait_for_timeout(pause_ms)
    t1 = page.evaluate("() => performance.now()")
    frames = page.evaluate("() => window.__attentionLabFrames ?? 0") - frames0
    page.mouse.up()
    page.wait_for_timeout(600)  # the release's authoritative update
    cpu1, wall1 = _cpu(server_proc), time.perf_counter()
    seconds = (t1 - t0) / 1000
    changes = page.evaluate(
        "([a, b]) => window.__benchChanges.filter(t => t >= a && t <= b).length", [t0, t1]
    )
    sent = page.evaluate(
        "([a, b]) => window.__benchSent.filter(m => m[0] >= a && m[0] <= b).map(m => m[1])",
        [t0, t1],
    )
    cost = page.evaluate("() => (window.__attentionLabFrameMs ?? []).slice(-50)")
    tip_syncs = sum(1 for m in sent if m == "data")
    periods = math.ceil(seconds * 1000 / THROTTLE_MS) + 1
    return {
        "seconds": seconds,
        "moves_per_s": steps / seconds,
        "frames_per_move": frames / steps,
        "tip_syncs_per_period": tip_syncs / periods,
        "frame_ms": statistics.median(cost) if cost else float("nan"),
        "fps": changes / seconds,
        "messages_per_s": len(sent) / seconds,
        "tip_messages_per_s": tip_syncs / seconds,
        "other": sorted(set(sent)),
        "cpu_per_s": (cpu1 - cpu0) / (wall1 - wall0),
    }


# Drives the page's own pan handler once per animation frame (no input pipeline in between):
# the preview's display rate. Returns the frames the preview drew and the elapsed ms.
SYNTHETIC = """async ([ms, start, end]) => {
  const doc = Bokeh.documents[0];
  const cb = doc.get_model_by_name('lab_preview');
  const addr = doc.get_model_by_name('address_plot');
  const kt = doc.get_model_by_name('key_tips');
  kt.selected.indices = [2];
  await cb.execute({event_name: 'panstart', origin: addr, x: start[0], y: start[1]});
  const t0 = performance.now();
  const f0 = window.__attentionLabFrames ?? 0;  // frames the preview actually drew
  await new Promise(resolve => {
    const step = async (now) => {
      const f = Math.min(1, (now - t0) / ms);
      const u = 0.5 - 0.5 * Math.cos(2 * Math.PI * 3 * f);  // three sweeps there and back
      await cb.execute({event_name: 'pan', origin: addr,
                        x: start[0] + (end[0] - start[0]) * u, y: start[1] + (end[1] - start[1]) * u});
      if (now - t0 < ms) requestAnimationFrame(step); else resolve();
    };
    requestAnimationFrame(step);
  });
  const elapsed = performance.now() - t0;
  const frames = (window.__attentionLabFrames ?? 0) - f0;
  await cb.execute({event_name: 'panend', origin: addr, x: start[0], y: start[1]});
  return [frames, elapsed];
}"""


def synthetic_drag(page, server_proc, seconds: float) -> dict:
    page.wait_for_timeout(500)
    t0 = page.evaluate("() => performance.now()")
    cpu0, wall0 = _cpu(server_proc), time.perf_counter()
    frames, elapsed = page.evaluate(SYNTHETIC, [seconds * 1000, [0.0, 1.0], [1.2, 0.4]])
    t1 = t0 + elapsed
    page.wait_for_timeout(600)
    cpu1, wall1 = _cpu(server_proc), time.perf_counter()
    sent = page.evaluate(
        "([a, b]) => window.__benchSent.filter(m => m[0] >= a && m[0] <= b).map(m => m[1])",
        [t0, t1],
    )
    cost = page.evaluate("() => (window.__attentionLabFrameMs ?? []).slice(-100)")
    return {
        "fps": frames / (elapsed / 1000),
        "messages_per_s": len(sent) / (elapsed / 1000),
        "cpu_per_s": (cpu1 - cpu0) / (wall1 - wall0),
        "frame_ms": statistics.median(cost) if cost else float("nan"),
    }


def _print_drags(url: str, results: list[dict], steps: int, proc) -> None:
    def med(key):
        return statistics.median(r[key] for r in results)

    print(f"lab: {url}  drags: {len(results)} x {steps} moves")
    print(f"  drag duration            median {med('seconds'):.2f} s")
    print(
        f"  pointer moves / s        median {med('moves_per_s'):.1f}  (what Playwright delivered)"
    )
    print(f"  weights updates / s      median {med('fps'):.1f}  (preview frames while dragging)")
    print(f"  preview compute + write  median {med('frame_ms'):.2f} ms per frame (in the page)")
    print(
        f"  preview frames / move    median {med('frames_per_move'):.2f}  (was a test's floor: 0.5)"
    )
    print(f"  messages / s to server   median {med('messages_per_s'):.1f}")
    print(f"    of which tip syncs / s median {med('tip_messages_per_s'):.1f}")
    print(
        f"  tip syncs / {THROTTLE_MS} ms period  median {med('tip_syncs_per_period'):.2f}  "
        "(at most 1 by design)"
    )
    print(f"    kinds: {sorted({k for r in results for k in r['other']})}")
    if proc is not None:
        print(f"  server CPU s / s         median {med('cpu_per_s'):.3f}")


def _print_synthetic(synthetic: list[dict], proc) -> None:
    def smed(key):
        return statistics.median(r[key] for r in synthetic)

    print(f"display-rate drag (the pan handler once per animation frame, {len(synthetic)} x 4 s):")
    print(f"  preview frames / s       median {smed('fps'):.1f}")
    print(f"  preview compute + write  median {smed('frame_ms'):.2f} ms per frame")
    print(f"  messages / s to server   median {smed('messages_per_s'):.1f}")
    if proc is not None:
        print(f"  server CPU s / s         median {smed('cpu_per_s'):.3f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drags", type=int, default=6)
    parser.add_argument("--steps", type=int, default=60, help="mouse moves per drag")
    parser.add_argument("--pause-ms", type=int, default=16, help="wait after each move")
    parser.add_argument("--url", help="a lab already served (CPU is then not measured)")
    parser.add_argument("--query", default="", help="URL query for the lab, e.g. ?distractors=500")
    parser.add_argument("--pid", type=int, help="with --url: the server's process, for its CPU")
    parser.add_argument("--no-synthetic", action="store_true", help="skip the display-rate run")
    args = parser.parse_args(argv)

    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "tests"))
    from browser.labpage import CHROMIUM_ARGS, LOADED, chromium_path

    from tools.bench_ui import serve_quietly

    path = chromium_path()
    if path is None:
        raise SystemExit("chromium is not installed")
    log = Path(tempfile.mkdtemp(prefix="attention-lab-bench-")) / "lab.log"
    server = None if args.url else serve_quietly(log)
    url = (args.url or server.url) + args.query
    proc = None
    if server is not None or args.pid:
        import psutil

        proc = psutil.Process(server.pid if server is not None else args.pid)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.add_init_script(f"({INIT})()")
            page.goto(url)
            page.wait_for_function(LOADED, timeout=60000)
            page.wait_for_timeout(1500)
            results = []
            a, b = (0.0, 1.0), (1.2, 0.4)  # key C's tip and back
            for i in range(args.drags):
                start, end = (a, b) if i % 2 == 0 else (b, a)
                results.append(drag_once(page, proc, start, end, args.steps, args.pause_ms))
            synthetic = []
            has_preview = page.evaluate(
                "() => Bokeh.documents[0].get_model_by_name('lab_preview') !== null"
            )
            if has_preview and not args.no_synthetic:
                page.reload()
                page.wait_for_function(LOADED, timeout=60000)
                page.wait_for_timeout(1000)
                synthetic = [synthetic_drag(page, proc, 4.0) for _ in range(3)]
            browser.close()
    finally:
        if server is not None:
            server.stop()

    _print_drags(url, results, args.steps, proc)
    if synthetic:
        _print_synthetic(synthetic, proc)


if __name__ == "__main__":
    main()
