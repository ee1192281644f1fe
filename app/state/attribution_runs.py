"""The attribution estimate and the exact effects that check it, once per process. Panel-free.

Like the runs they are made from (`model_runs`), they depend on the sentence alone, so thirty
students on one sentence share one backward and one set of ablations. Both are bounded LRUs
(`BoundedCache`): an estimate is a few hundred records, an exact effect one float, kept per
head so a receipt cut short by a newer sentence keeps what it had checked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from app.state import model_runs
from app.state.pipeline import BoundedCache, MiB
from engine.trained import attribution

BACKEND = "numpy"  # the exact maps of the Causal map tab run on NumPy: the receipt checks those

ESTIMATES = BoundedCache(
    "attribution estimates",
    max_entries=64,
    max_bytes=16 * MiB,
    size=lambda amap: 4096 + 256 * len(amap.records),
)
EXACT = BoundedCache("exact head effects", max_entries=8192, max_bytes=2 * MiB, size=lambda _: 200)


def plain_run(model: str, text: str, query: int):
    return model_runs.plain_run(model, text, query, BACKEND)


def estimate(model: str, text: str, query: int) -> attribution.AttributionMap:
    """Every head's first-order estimate of its ablation effect on the run's answer (none
    verified: `exact` checks them)."""
    key = (model, text, query)
    return ESTIMATES.get_or_compute(
        key, lambda: attribution.attribution_map(plain_run(model, text, query), verify=0)
    )


def exact(
    model: str,
    text: str,
    query: int,
    heads: Iterable[tuple[int, int]],
    cancel: Callable[[], bool] | None = None,
) -> dict[tuple[int, int], float]:
    """The exact ablation effect of each of ``heads``, measured together where not cached (one
    batch: SmolLM2 reuses the layers below each head)."""
    heads = list(heads)
    found = {lh: EXACT.get((model, text, query, lh)) for lh in heads}
    missing = [lh for lh, value in found.items() if value is None]
    if missing:
        run = plain_run(model, text, query)
        measured = attribution.exact_effects(run, missing, cancel=cancel)
        for lh, value in measured.items():
            found[lh] = EXACT.get_or_compute((model, text, query, lh), lambda v=value: v)
    return found


def clear() -> None:
    ESTIMATES.clear()
    EXACT.clear()
