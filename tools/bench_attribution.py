"""Benchmark: the attribution map (one backward) beside the exact maps it estimates.

    python -m tools.bench_attribution                 # both models, NumPy and torch:cpu
    python -m tools.bench_attribution --repeats 9 --map-repeats 3 --backends numpy

For each installed model and backend, at one thread (NumPy's BLAS through
engine.backends.blas_threads(1), torch through torch.set_num_threads(1)), timed in turns so the
machine's load falls on every line alike, medians printed in ms and in forwards (``model.run`` of
the same text):

- ``model.run``: one forward, records included (the unit);
- ``attribution_map(verify=0)``: the run and one backward, every head's estimated ablation
  effect. Target: at most 5 forwards;
- ``attribution_map(corrupted=..., verify=0)``: both runs and one backward, every head's
  estimated patching share;
- ``causal_map`` and ``patching_map``: the exact maps (one intervention per head, the cache
  cleared before each repeat).

Then the receipt of each estimate against the exact map over every head: Spearman's rank
correlation and how many of the 10 heads with the largest |exact value| the estimate's 10 largest
find (``engine.trained.attribution.receipt``).
"""

from __future__ import annotations

import argparse
import os
import sys

from tools.bench_lm import interleaved_ms

TEXTS = {  # (clean, corrupted of the same length)
    "binding": ("approved_limit=5000; temporary_limit=7000; charge=250; ?temporary_limit", None),
    "smollm2-135m": (
        "The meeting was on Monday. It moved to Friday. So the meeting is on",
        "The meeting was on Monday. It moved to Tuesday. So the meeting is on",
    ),
}
TARGET_FORWARDS = 5


def measure(model, backend: str, repeats: int, map_repeats: int) -> list[str]:
    """The timing and receipt lines of one model on one backend."""
    from engine.trained import attribution, causal, counterfactual

    text, corrupted = TEXTS[model.name]
    if corrupted is None:
        corrupted, _ = counterfactual.counterfactual(model, text)

    def exact_map(name: str):
        def run():
            causal.clear_cache(model)
            if name == "causal":
                return model.causal_map(text, backend=backend)
            return model.patching_map(text, corrupted, backend=backend)

        return run

    quick = interleaved_ms(
        {
            "model.run": lambda: model.run(text, backend=backend),
            "attribution_map(verify=0)": lambda: model.attribution_map(
                text, verify=0, backend=backend
            ),
            "attribution_map(corrupted, verify=0)": lambda: model.attribution_map(
                text, corrupted=corrupted, verify=0, backend=backend
            ),
        },
        repeats,
    )
    slow = interleaved_ms(
        {"causal_map (exact)": exact_map("causal"), "patching_map (exact)": exact_map("patch")},
        map_repeats,
        warm=False,
    )
    forward = quick["model.run"]
    tokens = len(model.run(text).ids)
    lines = [f"{model.name}, {backend}, {tokens} tokens:"]
    for name, ms in (quick | slow).items():
        lines.append(f"  {name:<40} {ms:9.1f} ms  {ms / forward:6.2f} forwards")
    cost = quick["attribution_map(verify=0)"] / forward
    verdict = "ok" if cost <= TARGET_FORWARDS else "OVER"
    lines.append(f"  attribution: {cost:.2f} forwards, target <= {TARGET_FORWARDS}: {verdict}")
    for what, estimate, exact in _receipts(model, text, corrupted, backend):
        r = attribution.receipt(estimate, exact)
        lines.append(
            f"  receipt, {what}: Spearman {r.spearman:.3f}, top 10 found {r.top_k}/{r.k} "
            f"({r.heads} heads)"
        )
    return lines


def _receipts(model, text, corrupted, backend):
    """(what, estimates, exact values) over every head, for ablation and for patching."""
    ablation = model.attribution_map(text, verify=0, backend=backend)
    effects = [r.effect for r in model.causal_map(text, backend=backend).records]
    patching = model.attribution_map(text, corrupted=corrupted, verify=0, backend=backend)
    shares = [r.recovered for r in model.patching_map(text, corrupted, backend=backend).records]
    return [
        ("ablation (causal map's effect)", [r.estimate for r in ablation.records], effects),
        ("patching (patching map's share)", [r.estimate for r in patching.records], shares),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--map-repeats", type=int, default=3)
    parser.add_argument("--models", nargs="+", default=list(TEXTS), choices=list(TEXTS))
    parser.add_argument("--backends", nargs="+", default=["numpy", "torch:cpu"])
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.map_repeats < 1:
        parser.error("--repeats and --map-repeats >= 1")

    from engine import trained
    from engine.backends import EngineUnavailable, blas_threads

    print("load average before (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    installed = {name: ok for name, _, ok, _ in trained.available()}
    for name in args.models:
        if not installed.get(name):
            print(f"{name}: not installed, skipped", file=sys.stderr)
            continue
        model = trained.load(name)
        for backend in args.backends:
            try:
                _one_thread(backend)
                with blas_threads(1):
                    lines = measure(model, backend, args.repeats, args.map_repeats)
            except EngineUnavailable as exc:
                lines = [f"{name}, {backend}: skipped ({exc})"]
            print("\n".join(lines), flush=True)
    print("load average after (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


def _one_thread(backend: str) -> None:
    if backend.startswith("torch"):
        import torch

        torch.set_num_threads(1)


if __name__ == "__main__":
    raise SystemExit(main())
