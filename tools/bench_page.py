"""What opening one lab page costs (a script, not a test): `python -m tools.bench_page`.

Reports, from one run, medians of
1. the server's CPU to build a page as a session does (the app, its Bokeh models and the
   document as the browser pulls it), the number of Bokeh models, and the Python memory one
   open page holds (traced allocations of pages kept alive, per page);
   (--speedups both: with and without app/patches/bokeh_speedups.py, side by side);
2. with --browser: in headless Chromium, navigation start to every plot in the page drawn,
   and (once the page defers its analysis plots) a scroll to them until they are drawn;
3. with --served N: on real servers, side by side, what opening N pages at once costs the
   `attention-lab` process and a plain eight-figure Panel page served by `panel serve`
   (tools/plain_page.py): server CPU per page opened, resident memory per open page, and
   their ratios (issue 28's targets: at most 0.7x the plain page's CPU and 2.0 MB a page).

`python -m tools.loadtest` measures the same costs on a running server (CPU and resident memory
per session); this script isolates the page build so a change can be judged side by side.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import tracemalloc

# A figure counts as drawn once BokehJS reports its view finished (every renderer painted).
# Returns the page's clock (ms since navigation start) when every figure in the document is.
ALL_PLOTS_DRAWN = """() => {
  if (!window.Bokeh || !Bokeh.index || Bokeh.documents.length === 0) return null;
  const plots = [...Bokeh.documents[0].all_models].filter(m => m.type === "Figure");
  if (plots.length === 0) return null;
  for (const plot of plots) {
    let view = null;
    for (const root of Bokeh.index.roots) { view = root.owner.find_one(plot); if (view) break; }
    if (view == null || !view.has_finished()) return null;
  }
  return [performance.now(), plots.length];
}"""


def _build_page(language: str = "en", model: bool = False):
    """One session's page in `language`; `model`: switched to the trained model's source, as
    `?source=model` opens it (its views are built on first use)."""
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    from app.page.lab_page import create_app
    from app.state.lab_state import LabState
    from app.state.sources import MODEL

    doc = Document()
    with set_curdoc(doc):
        with doc.models.freeze():  # as app/server/serve.py builds it
            page = create_app(LabState(), language=language)
            if model:
                page.lab.sources.source = MODEL
            page.server_doc(doc)
        doc.to_json()  # what the server sends when the page pulls its document
    return doc, page


def languages_side(repeats: int, languages: tuple[str, ...], model: bool) -> dict:
    """Median CPU to build a page in each language, the languages alternating build by build
    (a machine that slows down slows them alike); keyed by language, in the order given."""
    import os

    from app.server.cli import settle_bokeh_settings

    settle_bokeh_settings(os.environ)
    _use_speedups(True)
    for code in languages:
        for _ in range(3):
            _build_page(code, model)  # warm-up: imports, caches, the catalogues compiled
    cpu = {code: [] for code in languages}
    for _ in range(repeats):
        for code in languages:
            t0 = time.process_time()
            _build_page(code, model)
            cpu[code].append(time.process_time() - t0)
    return {code: statistics.median(times) for code, times in cpu.items()}


def _use_speedups(on: bool) -> None:
    """Bokeh's own property functions, or the lab's shortcuts (app/patches/bokeh_speedups.py)."""
    from app.patches import apply_all, bokeh_speedups

    apply_all()  # every process-wide patch, as the server applies them at start
    if on:
        if not bokeh_speedups.apply():
            raise SystemExit("this Bokeh is not the one the speedups were checked against")
    else:
        bokeh_speedups.remove()


def server_side(repeats: int, kept: int, modes: tuple[bool, ...] = (True,)) -> dict:
    """Medians per mode (True: with the Bokeh speedups); several modes alternate build by build,
    so a machine that slows down during the run slows every mode alike."""
    import os

    from app.server.cli import settle_bokeh_settings

    settle_bokeh_settings(os.environ)  # Bokeh's developer checks as the served lab has them
    for on in modes:
        _use_speedups(on)
        for _ in range(3):
            _build_page()  # warm-up: imports, caches, first allocations
    cpu = {on: [] for on in modes}
    for _ in range(repeats):
        for on in modes:
            _use_speedups(on)
            t0 = time.process_time()
            doc, _page = _build_page()
            cpu[on].append(time.process_time() - t0)
    models = len(list(doc.models))
    results = {}
    for on in modes:
        _use_speedups(on)
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        pages = [_build_page() for _ in range(kept)]
        gc.collect()
        held = (tracemalloc.get_traced_memory()[0] - before) / kept
        tracemalloc.stop()
        del pages
        results[on] = {
            "cpu_s": statistics.median(cpu[on]),
            "models": models,
            "held_mb": held / 2**20,
        }
    _use_speedups(True)  # as the served app runs
    return results


def browser_first_draw(
    loads: int, viewport: tuple[int, int], languages: tuple[str, ...] = ("",)
) -> dict:
    """Median ms from navigation start to every plot drawn, over fresh loads of one server,
    per language of `languages` (the page opened with `?lang=`; "" for none), the languages
    alternating load by load so that a machine that slows down slows them alike."""
    import tempfile
    from pathlib import Path

    from playwright.sync_api import sync_playwright

    from tools.bench_ui import checkout_helpers, serve_quietly

    CHROMIUM_ARGS, _LOADED, chromium_path = checkout_helpers()
    path = chromium_path()
    if path is None:
        raise SystemExit("chromium is not installed; run without --browser")
    seen = {code: {"first": [], "later": [], "counts": []} for code in languages}
    server = serve_quietly(Path(tempfile.mkdtemp(prefix="attention-lab-bench-")) / "lab.log")
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
            for i in range(loads + 1):
                for code in languages:
                    url = f"{server.url}?lang={code}" if code else server.url
                    at, n_plots, shown = _load_once(browser, url, viewport)
                    if i:  # the first loads warm the server and the browser's cache
                        seen[code]["first"].append(at)
                        seen[code]["counts"].append(n_plots)
                        if shown is not None:
                            seen[code]["later"].append(shown)
            browser.close()
    finally:
        server.stop()
    return {
        code: {
            "first_draw_ms": statistics.median(s["first"]),
            "plots": max(s["counts"]),
            "deferred_ms": statistics.median(s["later"]) if s["later"] else None,
        }
        for code, s in seen.items()
    }


def _load_once(browser, url: str, viewport: tuple[int, int]):
    """One fresh page: ms to every plot drawn, the plots, and ms from a scroll to the analysis
    plots until they are drawn (None when the page has no placeholder)."""
    page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    page.goto(url)
    drawn = page.wait_for_function(ALL_PLOTS_DRAWN, polling="raf", timeout=60000)
    at, n_plots = drawn.json_value()
    shown = None
    deferred = page.locator(".lab-deferred")
    if deferred.count():  # the analysis plots are built when scrolled to
        t0 = page.evaluate("() => performance.now()")
        deferred.first.scroll_into_view_if_needed()
        page.wait_for_function(
            "n => { const r = (" + ALL_PLOTS_DRAWN + ")(); return r && r[1] > n; }",
            arg=n_plots,
            polling="raf",
            timeout=60000,
        )
        shown = page.evaluate("() => performance.now()") - t0
    page.close()
    return at, n_plots, shown


def _plain_server(log_path):
    """`panel serve tools/plain_page.py` on a free loopback port, as any Panel app is served."""
    from pathlib import Path

    from tools import harness

    port = harness.free_port()
    script = Path(__file__).with_name("plain_page.py")
    command = [
        *("python3", "-m", "panel", "serve", str(script), "--port", str(port)),
        *("--address", "127.0.0.1", "--allow-websocket-origin", f"localhost:{port}"),
        *("--liveness", "--log-level", "warning"),
        *("--check-unused-sessions", "1000", "--unused-session-lifetime", "1000"),
    ]
    process = harness.popen_logged(command, log_path, env=harness.clean_env())
    server = harness.LabServer(process, port, log_path)
    harness.wait_until_live(process, server.base, 60, "the plain page", log_path)
    return server, f"{server.base}/plain_page"


def served(sessions: int, rounds: int) -> dict:
    """Open `sessions` pages at once on each server, `rounds` times, alternating; medians."""
    import tempfile
    from pathlib import Path

    from tools import classload, loadtest

    classload.register_models()  # the client must know the lab's own models, as a browser does
    folder = Path(tempfile.mkdtemp(prefix="attention-lab-bench-page-"))
    figures = {"lab": {"cpu": [], "rss": []}, "plain": {"cpu": [], "rss": []}}
    for r in range(rounds):
        for name in ("plain", "lab"):
            if name == "lab":
                server = loadtest.start_server(folder / f"lab{r}.log", 0)
                url = server.url
            else:
                server, url = _plain_server(folder / f"plain{r}.log")
            options = loadtest.build_parser().parse_args(
                ["--sessions", str(sessions), "--busy", "0", "--max-seconds", "600"]
            )
            try:
                run = loadtest.Run(options, url, server.pid)
                report = run.execute([run.phase_crowd])
            finally:
                server.stop()
            crowd = report["phases"]["crowd"]
            if report["errors"] or crowd.get("opened") != sessions:
                raise SystemExit(f"{name}: {report['errors'][:3]} ({crowd.get('opened')} opened)")
            figures[name]["cpu"].append(crowd["server_cpu_s_per_session_open"])
            figures[name]["rss"].append(crowd["rss_per_session_mb"])
    return {
        name: {key: statistics.median(values) for key, values in parts.items()}
        for name, parts in figures.items()
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15, help="page builds timed")
    parser.add_argument("--kept", type=int, default=6, help="pages kept open for the memory")
    parser.add_argument("--browser", action="store_true", help="also time the first drawing")
    parser.add_argument("--loads", type=int, default=8, help="page loads in Chromium")
    parser.add_argument("--viewport", default="1920x1080", help="WIDTHxHEIGHT")
    parser.add_argument(
        "--served",
        type=int,
        metavar="N",
        help="also open N pages at once on a served lab and a served plain Panel page",
    )
    parser.add_argument("--rounds", type=int, default=2, help="--served rounds, alternating")
    parser.add_argument(
        "--speedups",
        choices=("on", "off", "both"),
        default="on",
        help="the page build with the Bokeh speedups of app/patches/bokeh_speedups.py (on, as "
        "served), with Bokeh's own functions (off), or both, alternating, with their ratio (the "
        "page build only: --browser always serves with them)",
    )
    parser.add_argument(
        "--languages",
        metavar="CODES",
        help="instead of the rest: the page build in each of these languages (comma-separated, "
        "e.g. en,es,zh-Hans,ar), alternating, with each one's ratio to the first; with "
        "--browser, the first drawing too",
    )
    parser.add_argument(
        "--model", action="store_true", help="with --languages: the trained model's page"
    )
    args = parser.parse_args(argv)
    if args.languages:
        compare_languages(args)
        return

    modes = {"on": (True,), "off": (False,), "both": (True, False)}[args.speedups]
    results = server_side(args.repeats, args.kept, modes)
    for on, r in results.items():
        label = "" if len(results) == 1 else (" with the speedups" if on else " without them")
        print(
            f"page build{label}: {r['cpu_s']:.3f} s of CPU (median of {args.repeats}), "
            f"{r['models']} Bokeh models, {r['held_mb']:.2f} MB of Python memory held per "
            "open page"
        )
    if len(results) == 2:
        fast, slow = results[True], results[False]
        print(
            f"speedups: CPU x{slow['cpu_s'] / fast['cpu_s']:.2f} faster, "
            f"memory x{slow['held_mb'] / fast['held_mb']:.2f} smaller"
        )
    if args.served:
        f = served(args.served, args.rounds)
        lab, plain = f["lab"], f["plain"]
        print(
            f"served, {args.served} pages at once (median of {args.rounds} rounds): server CPU "
            f"per page opened {lab['cpu']:.3f} s (plain eight-figure Panel page "
            f"{plain['cpu']:.3f} s: x{lab['cpu'] / plain['cpu']:.2f}); resident memory per "
            f"open page {lab['rss']:.2f} MB (plain {plain['rss']:.2f} MB)"
        )
    if args.browser:
        width, height = (int(v) for v in args.viewport.split("x"))
        b = browser_first_draw(args.loads, (width, height))[""]
        print(
            f"browser at {args.viewport}: navigation to all {b['plots']} plots drawn "
            f"{b['first_draw_ms']:.0f} ms (median of {args.loads} loads)"
        )
        if b["deferred_ms"] is not None:
            print(
                f"  scrolling to the analysis plots until they are drawn: {b['deferred_ms']:.0f} ms"
            )


def compare_languages(args) -> None:
    """`--languages`: the same page in several languages, side by side in one run."""
    codes = tuple(code.strip() for code in args.languages.split(",") if code.strip())
    page = "the model page" if args.model else "the first screen"
    built = languages_side(args.repeats, codes, args.model)
    first = codes[0]
    for code, cpu in built.items():
        print(
            f"page build, {page}, lang={code}: {1000 * cpu:.0f} ms of CPU "
            f"(median of {args.repeats}), x{cpu / built[first]:.3f} of {first}"
        )
    if args.browser:
        width, height = (int(v) for v in args.viewport.split("x"))
        drawn = browser_first_draw(args.loads, (width, height), codes)
        for code, b in drawn.items():
            ratio = b["first_draw_ms"] / drawn[first]["first_draw_ms"]
            print(
                f"browser at {args.viewport}, lang={code}: all {b['plots']} plots drawn "
                f"{b['first_draw_ms']:.0f} ms (median of {args.loads} loads), x{ratio:.3f} of "
                f"{first}"
            )


if __name__ == "__main__":
    main()
