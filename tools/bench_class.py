"""Benchmark: a class of 200 on three replicas behind HAProxy, with Redis between them.

    python -m tools.bench_class                        # 200 students, 3 replicas + Redis
    python -m tools.bench_class --students 60 --single # and the same class on one process
    python -m tools.bench_class --students 30 --languages en,es,zh-Hans,ar
                                   # one process: an English class beside a mixed-language one

Starts redis-server, N `attention-lab` replicas with their class store in it, and HAProxy with
the shipped deploy/haproxy.cfg (only its bind and server lines replaced): tools/harness.py's
ReplicaRoom, the one the balancer's tests run. Then it drives one class through the balancer
with tools/classload.py: the teacher's Next to each student's step shown, each vote to the
teacher's chart, and the votes counted. --single then runs the same
class against one process with the in-process store, in the same run, for the ratio. Prints
medians and p95s; it asserts nothing (the tests check behaviour, this measures it).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from tools import classload
from tools.harness import PYTHON_M_APP, RedisServer, ReplicaRoom, StartError, serve_lab

# Quieter than the default info: a class of 200 logs every page and websocket otherwise.
LAB_ARGS = ("--log-level", "warning")


def across_replicas(
    students: int, replicas: int, steps: int, folder: Path, languages: tuple[str, ...] = ()
) -> dict:
    names = [f"r{i}" for i in range(1, replicas + 1)]
    room = ReplicaRoom(folder, names, redis=True, lab_args=LAB_ARGS, command=PYTHON_M_APP)
    try:
        room.start()
        url = f"{room.base}/app"
        report = classload.drive(url, students, steps, max_seconds=900, languages=languages)
        report["setup"] = f"{replicas} replicas behind HAProxy, Redis store"
        return report
    finally:
        room.stop()


def single(students: int, steps: int, folder: Path, languages: tuple[str, ...] = ()) -> dict:
    server = serve_lab(folder / "single.log", *LAB_ARGS, "--store", "memory", command=PYTHON_M_APP)
    try:
        report = classload.drive(server.url, students, steps, max_seconds=900, languages=languages)
        report["setup"] = "one process, in-process store"
        return report
    finally:
        server.stop()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.bench_class", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--steps", type=int, default=3, help="Next presses measured")
    parser.add_argument("--single", action="store_true", help="also run the class on one process")
    parser.add_argument(
        "--languages",
        metavar="CODES",
        help="instead: the class on one process twice, side by side, every student in English "
        "then the students in these languages in turn (e.g. en,es,zh-Hans,ar), with the ratio",
    )
    parser.add_argument("--rounds", type=int, default=3, help="with --languages: rounds of each")
    options = parser.parse_args(argv)
    if RedisServer.binary() is None:
        raise SystemExit(
            "bench_class: redis-server is not installed (apt-get install redis-server)"
        )
    folder = Path(tempfile.mkdtemp(prefix="attention-lab-class-"))
    if options.languages:
        return mixed_languages(options, folder)
    try:
        reports = [across_replicas(options.students, options.replicas, options.steps, folder)]
        if options.single:
            reports.append(single(options.students, options.steps, folder))
    except StartError as exc:
        raise SystemExit(f"bench_class: {exc}\nlogs: {folder}") from None
    for report in reports:
        print(f"[{report['setup']}]")
        print(classload.render(report))
    if len(reports) == 2:
        a, b = (r["next_to_shown_ms"].get("p95") for r in reports)
        if a and b:
            print(f"p95 Next-to-shown, replicas / one process: {a / b:.2f}x")
    print(f"logs: {folder}")
    return 0 if all(not r["errors"] for r in reports) else 1


def mixed_languages(options, folder: Path) -> int:
    """One process, an English class and a class of mixed languages, alternating for
    `--rounds` rounds in the same run (a machine that slows down slows both alike)."""
    codes = tuple(code for code in options.languages.split(",") if code)
    reports: dict[tuple, list[dict]] = {(): [], codes: []}
    try:
        for _ in range(options.rounds):
            for languages in reports:
                reports[languages].append(
                    single(options.students, options.steps, folder, languages)
                )
    except StartError as exc:
        raise SystemExit(f"bench_class: {exc}\nlogs: {folder}") from None
    for runs in reports.values():
        for report in runs:
            print(classload.render(report))
    p50 = {
        languages: statistics.median(r["next_to_shown_ms"].get("p50") or 0 for r in runs)
        for languages, runs in reports.items()
    }
    english, mixed = p50[()], p50[codes]
    if english and mixed:
        print(
            f"Next-to-shown p50, median of {options.rounds} rounds: English {english:.0f} ms, "
            f"mixed languages {mixed:.0f} ms, x{mixed / english:.2f}"
        )
    print(f"logs: {folder}")
    return 0 if all(not r["errors"] for runs in reports.values() for r in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
