"""Benchmark: the decoder forward of this tree beside an earlier revision's, in one process.

    python -m tools.bench_decoder                    # before = 5e6cdf1 (the Llama-only forward)
    python -m tools.bench_decoder --before REV --repeats 21

The earlier forward module (``engine/trained/llama.py``, or ``decoder.py`` at a later revision)
is read with ``git show REV:...`` and imported beside today's, so both run on the same model
object, the same weights and the same machine minute, timed in turns (old, new, old, new, ...)
at one thread. Each pair's logits must be bit-identical, or the benchmark stops: a faster forward
that computes something else is no result. Models: SmolLM2-135M (when installed) and a tiny
random Llama file (engine/trained/random_gguf.py), at 16 and 256 tokens.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

TEXT = "The meeting was on Monday. It moved to Friday. So the meeting is on "
BEFORE = "5e6cdf1"


def earlier_forward(rev: str):
    """The forward module at ``rev``, imported inside engine.trained (its relative imports
    resolve to today's helpers: attention, edits, runs)."""
    for name in ("decoder", "llama"):
        shown = subprocess.run(
            ["git", "show", f"{rev}:engine/trained/{name}.py"], capture_output=True, text=True
        )
        if shown.returncode == 0:
            break
    else:
        raise SystemExit(f"{rev} has neither engine/trained/decoder.py nor llama.py")
    path = Path(tempfile.mkdtemp()) / f"{name}_{rev}.py"
    path.write_text(shown.stdout, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"engine.trained.{name}_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _placed_before(old, model, be):
    """The earlier `place` took (weights, backend, max_tokens, d_head, rope_base)."""
    if "shape" in inspect.signature(old.place).parameters:
        return old.place(model.w, be, model.max_tokens, model.shape, model.cfg.rope_base)
    return old.place(model.w, be, model.max_tokens, model.d_head, model.cfg.rope_base)


def _models():
    from engine import trained
    from engine.trained import smollm
    from engine.trained.gguf_model import load_file
    from engine.trained.random_gguf import write_random

    if smollm.status()[0]:
        yield "SmolLM2-135M", trained.load("smollm2-135m")
    path = Path(tempfile.mkdtemp()) / "tiny-llama.gguf"
    write_random(path, "llama", n_layers=4, d_model=128, n_heads=4, n_kv_heads=2, context=512)
    yield "tiny Llama", load_file(path, name="tiny")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE)
    parser.add_argument("--repeats", type=int, default=21, help="16 tokens (256: a third)")
    args = parser.parse_args(argv)

    from engine.backends import blas_threads, resolve
    from engine.trained import decoder

    old = earlier_forward(args.before)
    be = resolve("numpy", None)
    print(f"decoder forward: this tree beside {args.before}, NumPy, one thread, medians (ms)")
    with blas_threads(1):
        for name, model in _models():
            before, now = _placed_before(old, model, be), model.weights_on("numpy")
            for n in (16, 256):
                ids = np.asarray((model.encode(TEXT) * 40)[:n])
                fns = {
                    "before": lambda m=model, p=before, ids=ids: old.forward(m, p, ids),
                    "now": lambda m=model, p=now, ids=ids: decoder.forward(m, p, ids),
                }
                if not np.array_equal(fns["before"]().logits, fns["now"]().logits):
                    raise SystemExit(f"{name}, {n} tokens: the two forwards' logits differ")
                times: dict[str, list[float]] = {k: [] for k in fns}
                for _ in range(args.repeats if n == 16 else max(3, args.repeats // 3)):
                    for key, fn in fns.items():
                        t0 = time.perf_counter()
                        fn()
                        times[key].append(time.perf_counter() - t0)
                b, a = (1000 * statistics.median(times[k]) for k in ("before", "now"))
                print(
                    f"    {name:13} {n:4} tokens: before {b:8.1f}  now {a:8.1f}  now/before "
                    f"{a / b:.2f}  (logits bit-identical)"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
