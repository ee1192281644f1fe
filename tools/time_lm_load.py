"""How long SmolLM2-135M takes to load, cold and warm, each in a fresh process.

    python -m tools.time_lm_load                 # 3 cold and 3 warm loads, medians printed
    python -m tools.time_lm_load --runs 5

A page that first asks for the model waits for exactly this: `trained.load("smollm2-135m")`
(read the GGUF, dequantise, rebuild the tokenizer, one probe run) in a server that has already
imported the engine. Each load runs in a new Python process, so no load reuses another's
arrays. A *cold* load first evicts the GGUF from the operating system's page cache
(`posix_fadvise(DONTNEED)` on the file, which needs no privilege, and `drop_caches` as well
where this process may write it): the first load after a reboot or on a class's fresh machine.
A *warm* load reads the file from memory: a restarted server on a machine that loaded it
before. The tool says which eviction it could do; the cold and warm loads alternate, so a
change in the machine's load falls on both alike. The load average is printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The child: the engine imported first (a server has it already), then the load alone timed,
# then one forward of a short sentence (what the page runs next).
CHILD = """
import json, time
t0 = time.perf_counter()
from engine import trained
t1 = time.perf_counter()
model = trained.load("smollm2-135m")
t2 = time.perf_counter()
model.run("The bank approved the loan because it was")
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "first_run": t3 - t2}))
"""


def evict(path: Path) -> str:
    """Drop `path` from the page cache; say how it was done."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("1\n")
    except OSError:
        return "the GGUF evicted with posix_fadvise (drop_caches not writable here)"
    return "the GGUF evicted with posix_fadvise, and drop_caches=1 (every clean page)"


def one_load() -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"the load failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="loads of each kind (default 3)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from engine.trained import smollm

    gguf = smollm.find_gguf()
    print(f"weights: {gguf.name} ({gguf.stat().st_size / 1e6:.0f} MB)")
    print("load average before (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    times: dict[str, list[dict]] = {"cold": [], "warm": []}
    how = ""
    for i in range(args.runs):
        how = evict(gguf)
        times["cold"].append(one_load())
        times["warm"].append(one_load())  # the file is in memory again after the cold load
        print(
            f"run {i + 1}: cold {times['cold'][-1]['load']:.2f} s, warm {times['warm'][-1]['load']:.2f} s"
        )
    print(f"cold: {how}")
    for kind, runs in times.items():
        med = {k: statistics.median(r[k] for r in runs) for k in ("import", "load", "first_run")}
        print(
            f"{kind} (median of {len(runs)}): load {med['load']:.1f} s "
            f"(min {min(r['load'] for r in runs):.1f}, max {max(r['load'] for r in runs):.1f}); "
            f"engine import {med['import']:.2f} s; first 9-token run {med['first_run']:.2f} s"
        )
    print("load average after (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
