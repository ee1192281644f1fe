"""The attribution estimate and the exact effects that check it, once per process. Panel-free.

Like the runs they are made from (`model_runs`), they depend on the sentence alone, so thirty
students on one sentence share one backward and one set of ablations. Both are bounded LRUs
(`BoundedCache`): an estimate is a few hundred records, an exact effect one float, kept per
head so a receipt cut short by a newer sentence keeps what it had checked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from app.state import model_runs
from app.state.estimated_map import QueryRows
from app.state.pipeline import BoundedCache, MiB
from engine import trained
from engine.trained import attribution
from engine.trained.counterfactual import counterfactual as find_counterfactual

BACKEND = "numpy"  # the exact maps of the Causal map tab run on NumPy: the receipt checks those

ESTIMATES = BoundedCache(
    "attribution estimates",
    max_entries=64,
    max_bytes=16 * MiB,
    size=lambda amap: 4096 + 256 * len(amap.records),
)
ROWS = BoundedCache("query rows", max_entries=64, max_bytes=8 * MiB, size=lambda r: r.nbytes)
EXACT = BoundedCache("exact head effects", max_entries=8192, max_bytes=2 * MiB, size=lambda _: 200)


def plain_run(model: str, text: str, query: int):
    return model_runs.plain_run(model, text, query, BACKEND)


def query_rows(model: str, text: str, query: int, run=None) -> QueryRows:
    """Every head's query row and output norm in the plain run (`run`, if the caller holds it):
    what the estimated map draws, kept when the run itself is too large to keep."""
    return ROWS.get_or_compute(
        (model, text, query),
        lambda: QueryRows.of(run if run is not None else plain_run(model, text, query)),
    )


def estimate(model: str, text: str, query: int, run=None) -> attribution.AttributionMap:
    """Every head's first-order estimate of its ablation effect on the run's answer (none
    verified: `exact` checks them), of the plain run (`run`, if the caller holds it)."""
    key = (model, text, query)
    return ESTIMATES.get_or_compute(
        key,
        lambda: attribution.attribution_map(
            run if run is not None else plain_run(model, text, query), verify=0
        ),
    )


def patching(model: str, clean: str, corrupted: str, verify: int) -> attribution.AttributionMap:
    """Every head's estimate of the share of the clean answer its clean output brings back into
    the `corrupted` run (the patching map's `recovered`), the `verify` largest measured."""
    key = ("patching", model, clean, corrupted, verify)

    def compute():
        clean_run, corrupted_run = (
            model_runs.plain_run(model, t, None, BACKEND) for t in (clean, corrupted)
        )
        return attribution.attribution_map(clean_run, corrupted=corrupted_run, verify=verify)

    return ESTIMATES.get_or_compute(key, compute)


CHANGES = BoundedCache("counterfactuals", max_entries=256, max_bytes=1 * MiB, size=lambda _: 1024)


def counterfactual(model: str, text: str) -> tuple[str, str]:
    """`engine.trained.counterfactual.counterfactual` of `text` (the changed sentence and which
    token changed), once per process: it runs the model on each candidate change, a quarter of
    a second on SmolLM2, and a step that patches from it asks again for every student who
    follows."""
    return CHANGES.get_or_compute(
        (model, text), lambda: find_counterfactual(trained.load(model), text)
    )


def exact(
    model: str,
    text: str,
    query: int,
    heads: Iterable[tuple[int, int]],
    cancel: Callable[[], bool] | None = None,
    run=None,
) -> dict[tuple[int, int], float]:
    """The exact ablation effect of each of ``heads``, measured together where not cached (one
    batch: SmolLM2 reuses the layers below each head), on the plain run (`run`, if the caller
    holds it: a long text's run is not kept, and a forward of it costs seconds)."""
    heads = list(heads)
    found = {lh: EXACT.get((model, text, query, lh)) for lh in heads}
    missing = [lh for lh, value in found.items() if value is None]
    if missing:
        run = run if run is not None else plain_run(model, text, query)
        measured = attribution.exact_effects(run, missing, cancel=cancel)
        for lh, value in measured.items():
            found[lh] = EXACT.get_or_compute((model, text, query, lh), lambda v=value: v)
    return found


def clear() -> None:
    ESTIMATES.clear()
    CHANGES.clear()
    ROWS.clear()
    EXACT.clear()
