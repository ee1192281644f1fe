"""Benchmark: the reference and tiled kernels beside torch's SDPA (CPU flash and math kernels).

    python -m tools.bench_engine                        # n = 512 ... 8192, 5 repeats
    python -m tools.bench_engine --sizes 512 1024 --repeats 3

Shapes are B=1, H=8, d=64, float32, self-attention (Lq = Lk = n), no mask. Every repeat runs all
kernels back to back, so the ratios compare runs that saw the same machine load; the table shows
medians. Peak memory is the NumPy kernels' peak traced allocation (tracemalloc, which NumPy
reports its array buffers to), measured in a separate run so tracing never skews the timings.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable

import numpy as np

from engine.core import attention
from engine.kernels import DEFAULT_BLOCK_K

MIB = 2**20


def _numpy_runners(q, k, v, block_size: int) -> dict[str, Callable[[], object]]:
    return {
        "reference": lambda: attention(q, k, v, kernel="reference"),
        "tiled": lambda: attention(q, k, v, kernel="tiled", block_size=block_size),
    }


def _torch_runners(q, k, v) -> dict[str, Callable[[], object]]:
    try:
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        return {}
    tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def run(backend):
        def call():
            with sdpa_kernel(backend), torch.inference_mode():
                return sdpa(tq, tk, tv)

        return call

    return {"torch flash": run(SDPBackend.FLASH_ATTENTION), "torch math": run(SDPBackend.MATH)}


def peak_bytes(fn: Callable[[], object]) -> int:
    """Peak traced allocation while ``fn`` runs (its result included, then released)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
        del result
    finally:
        tracemalloc.stop()
    return peak


def bench_size(n: int, *, heads: int, dim: int, repeats: int, block_size: int, use_torch: bool):
    rng = np.random.default_rng(n)
    q, k, v = (rng.standard_normal((1, heads, n, dim), dtype=np.float32) for _ in range(3))
    runners = _numpy_runners(q, k, v, block_size)
    if use_torch:
        runners.update(_torch_runners(q, k, v))
    warm = {name: fn() for name, fn in runners.items()}  # imports, thread pools, first touch
    # Sanity, not speed: the two NumPy kernels must agree before their times mean anything.
    agreement = float(np.max(np.abs(warm["tiled"].output - warm["reference"].output)))
    del warm
    times: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(repeats):
        for name, fn in runners.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    memory = {name: peak_bytes(fn) for name, fn in _numpy_runners(q, k, v, block_size).items()}
    return medians, memory, agreement


def format_table(rows: list[dict], heads: int, dim: int) -> str:
    names = [name for name in rows[0]["medians"]]
    head = ["n"] + [f"{name} ms" for name in names]
    head += ["tiled/ref", "tiled/flash", "tiled/math", "ref MiB", "tiled MiB", "mem ratio"]
    head += ["max|tiled-ref|"]
    lines = []
    for row in rows:
        n, med, mem = row["n"], row["medians"], row["memory"]

        def ratio(other, med=med):
            return f"{med['tiled'] / med[other]:.2f}" if other in med else "-"

        cells = [str(n)] + [f"{med[name] * 1e3:.1f}" for name in names]
        cells += [ratio("reference"), ratio("torch flash"), ratio("torch math")]
        cells += [f"{mem['reference'] / MIB:.1f}", f"{mem['tiled'] / MIB:.1f}"]
        cells.append(f"{mem['tiled'] / mem['reference']:.1%}")
        cells.append(f"{row['agreement']:.1e}")
        lines.append(cells)
    widths = [max(len(c), *(len(r[i]) for r in lines)) for i, c in enumerate(head)]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    out = [fmt.format(*head), fmt.format(*("-" * w for w in widths))]
    out += [fmt.format(*cells) for cells in lines]
    flops = ", ".join(
        f"n={r['n']}: {4 * r['n'] ** 2 * dim * heads / r['medians']['tiled'] / 1e9:.0f}"
        for r in rows
    )
    out.append(f"tiled GFLOP/s (4 n^2 d H / time): {flops}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.bench_engine", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024, 2048, 4096, 8192])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--block-size", type=int, default=DEFAULT_BLOCK_K)
    parser.add_argument("--no-torch", action="store_true", help="skip torch's SDPA kernels")
    args = parser.parse_args(argv)
    if args.repeats < 1 or min(args.sizes) < 1:
        parser.error("--repeats and every size must be >= 1")
    print(
        f"B=1 H={args.heads} d={args.dim} float32, medians of {args.repeats} interleaved runs, "
        f"tiled block_size={args.block_size}; memory: tracemalloc peak (NumPy kernels only)",
        flush=True,
    )
    rows = []
    for n in args.sizes:
        medians, memory, agreement = bench_size(
            n,
            heads=args.heads,
            dim=args.dim,
            repeats=args.repeats,
            block_size=args.block_size,
            use_torch=not args.no_torch,
        )
        rows.append({"n": n, "medians": medians, "memory": memory, "agreement": agreement})
        print(f"  n={n} done", file=sys.stderr, flush=True)
    print(format_table(rows, args.heads, args.dim))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
