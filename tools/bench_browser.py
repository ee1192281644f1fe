"""What the test browser costs per lab page (a script, not a test): `python -m tools.bench_browser`.

The browser tests load the lab page about 120 times a run, and on a 2-core machine the browser's
CPU is most of what they cost. This script loads the page in each Chromium build it finds, in
turns (chromium, then chromium-headless-shell, then chromium again...), each load in a fresh
driver process, and prints the medians side by side: the CPU that the browser, its renderers
and the driver used per page (getrusage of the finished children) and the wall time to the
page's weights drawn. The server runs apart and is not counted.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.bench_ui import checkout_helpers, serve_quietly

BUILDS = ("chromium", "chromium-headless-shell")

# One browser, PAGES loads of the lab, each closed after it settles; prints the wall times.
DRIVER = """
import sys, time
from playwright.sync_api import sync_playwright
sys.path.insert(0, sys.argv[4])
from tests.browser.labpage import CHROMIUM_ARGS, LOADED
executable, url, pages = sys.argv[1], sys.argv[2], int(sys.argv[3])
with sync_playwright() as pw:
    browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
    for _ in range(pages):
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        started = time.monotonic()
        page.goto(url)
        page.wait_for_function(LOADED, timeout=120000)
        print(time.monotonic() - started)
        page.wait_for_timeout(1000)  # what a test does next: the page keeps drawing meanwhile
        page.close()
    browser.close()
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_round(executable: str, url: str, pages: int) -> tuple[float, list[float]]:
    """CPU seconds per page and the pages' wall times, from one fresh driver process."""
    checkout = str(Path(__file__).resolve().parents[1])
    before = _children_cpu()
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, executable, url, str(pages), checkout],
        capture_output=True,
        text=True,
        timeout=120 * pages + 60,
    )
    if done.returncode:
        raise SystemExit(f"{executable} failed:\n{done.stderr[-2000:]}")
    return (_children_cpu() - before) / pages, [float(line) for line in done.stdout.split()]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="turns of each build")
    parser.add_argument("--pages", type=int, default=3, help="page loads per turn")
    args = parser.parse_args(argv)
    checkout_helpers()  # the checkout's tests/ on the path, or a clear exit
    builds = {name: shutil.which(name) for name in BUILDS}
    builds = {name: path for name, path in builds.items() if path}
    if not builds:
        raise SystemExit("neither chromium nor chromium-headless-shell is installed")
    cpu = {name: [] for name in builds}
    wall = {name: [] for name in builds}
    server = serve_quietly(Path(tempfile.mkdtemp(prefix="attention-lab-bench-")) / "lab.log")
    try:
        one_round(next(iter(builds.values())), server.url, 1)  # warm the server
        for _ in range(args.rounds):
            for name, path in builds.items():
                per_page, walls = one_round(path, server.url, args.pages)
                cpu[name].append(per_page)
                wall[name].extend(walls)
    finally:
        server.stop()
    first = next(iter(builds))
    for name in builds:
        ratio = statistics.median(cpu[name]) / statistics.median(cpu[first])
        print(
            f"{name}: {statistics.median(cpu[name]):.2f} s of CPU per page (median of "
            f"{args.rounds} turns of {args.pages}; x{ratio:.2f} of {first}), weights drawn "
            f"after {statistics.median(wall[name]):.1f} s"
        )


if __name__ == "__main__":
    main()
