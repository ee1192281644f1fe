"""Benchmark: SmolLM2-135M in NumPy (load, memory, a run, an intervention). Prints medians.

    python -m tools.bench_lm               # 7 repeats
    python -m tools.bench_lm --repeats 15

Run it in a fresh process: the load time and peak RSS are this process's own. Targets from the
issue (a 2-core machine): a 16-token run under 400 ms, an intervention at layer 20 under 150 ms,
resident memory for the weights at or under about 600 MB.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time

import psutil

MIB = 2**20
# 16 tokens; the superseded fact, so the intervention has something to move.
SENTENCE = "The meeting was on Monday. It moved to Friday. So the meeting is on"


def _median_ms(fn, repeats: int) -> float:
    fn()  # warm: first-touch page faults and BLAS start-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)

    from engine import trained
    from engine.trained import smollm

    installed, reason = smollm.status()
    if not installed:
        print(f"smollm2-135m: {reason}", file=sys.stderr)
        return 1
    proc = psutil.Process()
    rss0 = proc.memory_info().rss
    t0 = time.perf_counter()
    model = trained.load("smollm2-135m")
    load_s = time.perf_counter() - t0
    rss1 = proc.memory_info().rss
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    weights = sum(a.nbytes for a in model.w.values())

    n = len(model.check(SENTENCE))
    run = model.run(SENTENCE)
    run_ms = _median_ms(lambda: model.run(SENTENCE), args.repeats)
    edit = trained.HeadTemperature(20, 4, 2.0)
    edit_ms = _median_ms(lambda: run.intervene(edit), args.repeats)
    edit0_ms = _median_ms(lambda: run.intervene(trained.HeadTemperature(0, 4, 2.0)), args.repeats)

    print(f"load (read, dequantise, float16, tokenizer, one probe run): {load_s:.2f} s")
    print(f"peak RSS of this process: {peak / MIB:.0f} MiB")
    print(
        f"resident after load: +{(rss1 - rss0) / MIB:.0f} MiB; weights held: {weights / MIB:.0f} MiB"
    )
    print(f"run of {n} tokens: {run_ms:.0f} ms (median of {args.repeats})")
    print(f"intervention at layer 20 (layers 20..29 recomputed): {edit_ms:.0f} ms")
    print(f"intervention at layer 0 (every layer recomputed): {edit0_ms:.0f} ms")
    print(f"{run.text!r} -> {run.answer!r} ({run.probs[run.answer]:.3f})")
    # Other processes share the cores: the medians mean little without the load beside them.
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
