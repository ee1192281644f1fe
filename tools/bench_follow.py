"""Server CPU for a class follower's whole page to follow each lesson step, before and after a
change, side by side in one run (a script, not a test):
`python -m tools.bench_follow [--pages 8] [--rounds 2] [--before REV] [--no-lm]`.

`tools/bench_class_step.py` measures the state's share of a teacher's Next; this measures the
rest, what a student's page pays on the server: full lab pages are built in-process as a session
builds one (`app.patches.apply_all()` first, then as `tools/bench_page.py` does), and they
follow the teacher through the 24 steps in order, 1..24, as a class does (`lessons.open(k)`,
what `app/views/class_panel.py` calls on a follower's page). With `--no-lm`, or without the
SmolLM2 weights, the SmolLM2 steps are left out. Step by step: a first page (the teacher's,
who meets every cache cold) opens the step, then each of `--pages` follower pages does. For each
follower and step two figures are taken in thread CPU (`time.thread_time`):

- change: `lessons.open(k)` itself, every watcher it sets off, views and Bokeh models included;
- send: turning the Bokeh property changes it made into the PATCH-DOC message the server
  writes to the browser, serialised (its JSON and binary buffers).

How the Bokeh changes are counted, in-process: Panel applies a change to the Bokeh models at
once when the document has no server session, as a served session does when its document is
unblocked, but when a `pn.io.hold()` ends on a document that is not connected it *drops* the
events held (the document is sent whole once a browser connects), so counting `doc.on_change`
callbacks alone would see nothing. So each step runs inside a hold of the measuring code's own
(`doc.hold("combine")`, the policy Panel's hold uses, which then leaves the document held):
every event is collected, combined per property as Panel combines them, and taken off with
`take_held_events` (`tools/bokeh_internals.py`) before `doc.unhold()`. The table gives the
number of those patch events, the message's bytes, and the Bokeh models the step added to the
page (its size after the step minus before: a widget built on the way shows up there).

Both trees run the same measuring code in their own process: this tree (HEAD plus the working
tree) and REV (default: the commit before this work, 6efcfb1), unpacked with `git archive` into
a temporary folder, so nothing in the repository changes. They alternate round by round on the
same machine; per step the table gives the median over every follower of every round.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from tools.bench_class_step import run_worker, unpack

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "6efcfb1"

# Run in each tree's own process (its PYTHONPATH first): only names both versions have.
WORKER = r"""
import json, sys, time
pages, with_lm = int(sys.argv[1]), sys.argv[2] == "1"
from bokeh.document import Document
from bokeh.document.events import DocumentPatchedEvent
from bokeh.protocol import Protocol
from panel.io.state import set_curdoc
from app.patches import apply_all
apply_all()
from app.page.lab_page import create_app
from app.state.lab_state import LabState
from app.views.lesson_panel import ALL_LESSONS
from engine import trained
from tools.bokeh_internals import take_held_events

def lm(step):
    return getattr(step, "model", "binding") != "binding"

steps = [n for n, s in enumerate(ALL_LESSONS, start=1) if with_lm or not lm(s)]
for n in steps:
    step = ALL_LESSONS[n - 1]
    if hasattr(step, "model"):
        trained.load(step.model)  # loaded once per process before the class starts

def build():
    doc = Document()
    with set_curdoc(doc):
        with doc.models.freeze():  # as app/server/serve.py builds it
            template = create_app(LabState())
            template.server_doc(doc)
        doc.to_json()  # what the server sends when the page pulls its document
    return doc, template.lab

def follow(doc, lab, n):
    models = len(doc.models)
    doc.hold("combine")
    t0 = time.thread_time()
    with set_curdoc(doc):
        lab.lessons.open(n)
    t1 = time.thread_time()
    events = [e for e in take_held_events(doc) if isinstance(e, DocumentPatchedEvent)]
    size = 0
    if events:
        msg = Protocol().create("PATCH-DOC", events)
        size = len(msg.header_json) + len(msg.metadata_json) + len(msg.content_json)
        size += sum(len(buf.to_bytes()) for buf in msg.buffers)
    t2 = time.thread_time()
    doc.unhold()
    return {"change": t1 - t0, "send": t2 - t1, "events": len(events), "bytes": size,
            "models": len(doc.models) - models}

teacher = build()
followers = [build() for _ in range(pages)]
rows = []
for n in steps:
    first = follow(*teacher, n)
    rows.append({"step": n, "title": ALL_LESSONS[n - 1].title, "first": first,
                 "followers": [follow(doc, lab, n) for doc, lab in followers]})
print(json.dumps(rows))
"""


def measure(tree: Path, pages: int, with_lm: bool) -> list[dict]:
    return run_worker(tree, WORKER, str(pages), "1" if with_lm else "0")


def lm_installed() -> bool:
    from engine import trained

    return any(name != "binding" and ok for name, _title, ok, _why in trained.available())


def summary(rounds: list[list[dict]]) -> list[dict]:
    """Per step: medians over every follower of every round."""
    steps = []
    for i, row in enumerate(rounds[0]):
        every = [f for r in rounds for f in r[i]["followers"]]

        def med(key, every=every):
            return statistics.median(f[key] for f in every)

        total = [f["change"] + f["send"] for f in every]
        steps.append(
            {
                "step": row["step"],
                "title": row["title"],
                "change": med("change"),
                "send": med("send"),
                "total": statistics.median(total),
                "events": med("events"),
                "bytes": med("bytes"),
                "models": med("models"),
                "first": max(r[i]["first"]["change"] + r[i]["first"]["send"] for r in rounds),
                "all": total,
            }
        )
    return steps


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=8, help="follower pages per round")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--before", default=BEFORE, help="the revision to compare with")
    ap.add_argument("--no-lm", action="store_true", help="leave out the SmolLM2 steps")
    args = ap.parse_args(argv)
    with_lm = not args.no_lm and lm_installed()
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-follow-") as tmp:
        before_tree = unpack(args.before, Path(tmp))
        runs: dict[str, list[list[dict]]] = {"before": [], "after": []}
        for _ in range(args.rounds):
            runs["before"].append(measure(before_tree, args.pages, with_lm))
            runs["after"].append(measure(ROOT, args.pages, with_lm))
    before, after = summary(runs["before"]), summary(runs["after"])
    print(
        f"Server CPU per follower page per Next: {args.pages} follower pages x {args.rounds} "
        f"round(s), SmolLM2 steps {'in' if with_lm else 'left out'}; before = {args.before}, "
        "after = this tree. Milliseconds of thread CPU (median over followers): change = "
        "lessons.open, send = the PATCH-DOC serialised; events, bytes and new Bokeh models per "
        "page; 1st = the teacher's page, cold caches (change + send)."
    )
    print(
        f"{'step':34s} {'before':>15s} {'after':>15s} {'ratio':>6s} {'events':>8s} "
        f"{'kB':>11s} {'models':>7s} {'1st b/a':>12s}"
    )
    # Steps are paired by title: the lessons grow, and a step the older tree lacks has no pair.
    before_by_title = {b["title"]: b for b in before}
    for a in after:
        b = before_by_title.get(a["title"])
        name = f"{a['step']:2d} {a['title']}"[:34]
        if b is None:
            print(
                f"{name:34s} {'(not in it)':>15s} "
                f"{a['change'] * 1e3:7.1f}+{a['send'] * 1e3:5.1f} {'':6s} "
                f"{a['events']:8.0f} {a['bytes'] / 1e3:11.1f} {a['models']:7.0f} "
                f"{a['first'] * 1e3:12.0f}"
            )
            continue
        ratio = b["total"] / a["total"] if a["total"] > 0 else float("inf")
        print(
            f"{name:34s} {b['change'] * 1e3:7.1f}+{b['send'] * 1e3:5.1f} "
            f"{a['change'] * 1e3:7.1f}+{a['send'] * 1e3:5.1f} {ratio:5.1f}x "
            f"{b['events']:3.0f}/{a['events']:<4.0f} {b['bytes'] / 1e3:5.1f}/{a['bytes'] / 1e3:<5.1f} "
            f"{b['models']:3.0f}/{a['models']:<3.0f} {b['first'] * 1e3:5.0f}/{a['first'] * 1e3:<5.0f}"
        )
    all_b = [t for s in before for t in s["all"]]
    all_a = [t for s in after for t in s["all"]]
    print(
        f"{'median over every step and follower':34s} {statistics.median(all_b) * 1e3:13.1f} "
        f"{statistics.median(all_a) * 1e3:15.1f} "
        f"{statistics.median(all_b) / statistics.median(all_a):5.1f}x"
    )
    print(
        f"{'median of the per-step medians':34s} "
        f"{statistics.median(s['total'] for s in before) * 1e3:13.1f} "
        f"{statistics.median(s['total'] for s in after) * 1e3:15.1f}"
    )
    print(
        f"{'one follower, every step (s)':34s} {sum(s['total'] for s in before):13.2f} "
        f"{sum(s['total'] for s in after):15.2f}"
    )
    print(f"wall time of the benchmark: {time.perf_counter() - t_start:.0f} s")
    return {"before": before, "after": after}


if __name__ == "__main__":
    main()
