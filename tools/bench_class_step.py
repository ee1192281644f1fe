"""Server CPU per follower per lesson step, before and after a change, side by side in one run
(a script, not a test): `python -m tools.bench_class_step [--students 30] [--before REV]`.

A class of N students follows the teacher through all 24 lesson steps (the lab's 11,
`app/lessons/lab_lessons.py`, then the trained models' 13, `app/lessons/model_lessons.py`):
for every step, each of N `LabState`s (or `ModelState`s) is put on the step as a teacher's Next
would (`step.start(state)`), and the thread CPU of that call is recorded. This is the state's
share of a Next only (the pipeline or the model's forward and the snapshot), without the views.

Both trees run the same measuring code in their own process: this tree (HEAD plus what is in
the working tree) and REV (default: the commit before the pipeline cache, c9b8886), unpacked
with `git archive` into a temporary folder, so nothing in the repository changes. The two
alternate round by round (`--rounds`) on the same machine; the table gives per step the median
over every follower of every round, and the first follower's cost (who pays for a cold cache).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "c9b8886"

# Run in each tree's own process (its PYTHONPATH first): only names both versions have.
WORKER = r"""
import json, sys, time
students, with_lm = int(sys.argv[1]), sys.argv[2] == "1"
from app.lessons.lab_lessons import LESSONS
from app.lessons.model_lessons import MODEL_LESSONS
from app.state.lab_state import LabState
from app.state.model_state import ModelState
from engine import trained
if with_lm:
    for s in MODEL_LESSONS:
        trained.load(s.model)  # loaded once per process before the class starts
rows = []
labs = [LabState() for _ in range(students)]
models = [ModelState() for _ in range(students)]
for kind, steps, states in (("lab", LESSONS, labs), ("model", MODEL_LESSONS, models)):
    for step in steps:
        if not with_lm and getattr(step, "model", "binding") != "binding":
            continue
        cpu = []
        for state in states:
            t0 = time.thread_time()
            step.start(state)
            cpu.append(time.thread_time() - t0)
        rows.append({"kind": kind, "title": step.title, "cpu": cpu})
print(json.dumps(rows))
"""


def unpack(rev: str, into: Path) -> Path:
    """The tree of `rev`, unpacked from `git archive` (the repository is left as it is)."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev],
        check=True,
        capture_output=True,
    ).stdout
    tar = into / "tree.tar"
    tar.write_bytes(archive)
    with tarfile.open(tar) as tf:
        tf.extractall(into / "tree", filter="data")
    return into / "tree"


def run_worker(tree: Path, worker: str, *args: str) -> list[dict]:
    """Run `worker` (Python source) in a process of its own with `tree` first on the path;
    what its last line of output holds, as JSON."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run(
        [sys.executable, "-c", worker, *args],
        cwd=tree,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(tree: Path, students: int, with_lm: bool) -> list[dict]:
    return run_worker(tree, WORKER, str(students), "1" if with_lm else "0")


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--before", default=BEFORE, help="the revision to compare with")
    ap.add_argument(
        "--no-lm", action="store_true", help="leave out the SmolLM2 steps (no 4-bit weights)"
    )
    args = ap.parse_args(argv)
    with_lm = not args.no_lm
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-class-step-") as tmp:
        before_tree = unpack(args.before, Path(tmp))
        runs: dict[str, list[list[dict]]] = {"before": [], "after": []}
        for _ in range(args.rounds):
            runs["before"].append(measure(before_tree, args.students, with_lm))
            runs["after"].append(measure(ROOT, args.students, with_lm))

    def per_step(label):
        rounds = runs[label]
        steps = []
        for i, row in enumerate(rounds[0]):
            every = [c for r in rounds for c in r[i]["cpu"]]
            firsts = [r[i]["cpu"][0] for r in rounds]
            steps.append((row["kind"], row["title"], statistics.median(every), max(firsts)))
        return steps

    before, after = per_step("before"), per_step("after")
    print(
        f"Server CPU per follower per Next, {args.students} students, {args.rounds} round(s); "
        f"before = {args.before}, after = this tree. Milliseconds of thread CPU."
    )
    print(f"{'step':52s} {'before':>9s} {'after':>9s} {'ratio':>7s} {'1st after':>10s}")
    for (kind, title, b, _bf), (_, _, a, af) in zip(before, after, strict=True):
        ratio = b / a if a > 0 else float("inf")
        name = f"{kind}: {title}"[:52]
        print(f"{name:52s} {b * 1e3:9.2f} {a * 1e3:9.3f} {ratio:6.0f}x {af * 1e3:10.2f}")
    all_b = [c for r in runs["before"] for row in r for c in row["cpu"]]
    all_a = [c for r in runs["after"] for row in r for c in row["cpu"]]
    sum_b = sum(b for *_, b, _ in before)
    sum_a = sum(a for *_, a, _ in after)
    print(
        f"{'median over every step and follower':52s} {statistics.median(all_b) * 1e3:9.2f} "
        f"{statistics.median(all_a) * 1e3:9.3f}"
    )
    print(
        f"{'total CPU of the whole class, all steps (s)':52s} {sum(all_b) / args.rounds:9.2f} "
        f"{sum(all_a) / args.rounds:9.3f}"
    )
    print(f"(sum of the per-step medians: {sum_b * 1e3:.1f} ms before, {sum_a * 1e3:.2f} ms after)")
    print(f"wall time of the benchmark: {time.perf_counter() - t_start:.0f} s")
    return {"before": before, "after": after}


if __name__ == "__main__":
    main()
