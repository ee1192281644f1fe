"""The trained models' runs, once per process: one forward per (model, text, edits, query
position, backend), shared by every session. Panel-free.

A run (`engine.trained.Run`) holds the residual stream and every head's record; its arrays are
read-only, so sessions can share one. A class on a SmolLM2 step then costs one forward per
replica, not one per student. The cache is an LRU with a byte budget (`RUNS`): a run of the
binding model weighs tens of KB, one of SmolLM2 on a long text hundreds of MB (a run larger
than the whole budget is returned but not kept).

An edited run is keyed by its edits' values (`edit_key`), so two sessions that make the same
edit (the same lesson step) share it; it is made from the cached plain run (`Run.intervene`
reuses the layers below the first edit).

One computation per run: a session asking for a run another thread is computing waits for
that forward instead of starting its own (`BoundedCache(one_flight=True)`), even when the run
is too large to keep. A page computes its runs on `POOL`, never on the server's event loop
(`ModelState.request`): SmolLM2 on a 441-token text is two seconds of forward, during which
every other page and `/liveness` used to wait.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from app.state.pipeline import BoundedCache, MiB
from engine import trained

# The whole budget for runs, in MiB (ATTENTION_LAB_RUN_CACHE_MB overrides it).
RUN_CACHE_MB = int(os.environ.get("ATTENTION_LAB_RUN_CACHE_MB", "256"))


def edit_key(edit) -> tuple:
    """A hashable value for an edit: its kind and its fields (an array by its bytes)."""
    parts = []
    for f in dataclasses.fields(edit):
        v = getattr(edit, f.name)
        if isinstance(v, np.ndarray):
            v = (v.dtype.str, v.shape, v.tobytes())
        parts.append(v)
    return (type(edit).__name__, tuple(parts))


def run_nbytes(run) -> int:
    """The arrays a run holds (each counted once: an edited run shares its lower layers)."""
    return 4096 + sum(a.nbytes for a in run.arrays() if isinstance(a, np.ndarray))


RUNS = BoundedCache(
    "model runs",
    max_entries=256,
    max_bytes=RUN_CACHE_MB * MiB,
    size=run_nbytes,
    one_flight=True,
)
# The pages' forwards run here, off the event loop. A session has at most one call here at a time
# (its `jobs.LatestJob`: a newer request waits in the job and replaces an older one), so this
# first-come queue serves sessions in turn. Two workers: a forward keeps
# about one core busy, and the other pages need the rest.
POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="lab-model")
log = logging.getLogger(__name__)
# How long each plain run's forward took (seconds), by (model, text, backend): a map of every
# head is priced from it before it starts (`forward_seconds`). The first measure is kept; the
# first forward of a model and backend in a process is not (it sets the weights up: SmolLM2's
# first 8-token forward took 1.9 s, and priced a 10 s map at 4 min).
FORWARD_SECONDS = BoundedCache(
    "forward times", max_entries=1024, max_bytes=1 * MiB, size=lambda _: 256
)
_WARM: set[tuple[str, str]] = set()  # (model, backend) that have run once in this process


def plain_run(model: str, text: str, query: int | None, backend: str):
    """The model's run of `text` with no edits, the records at `query` (None: the last token)
    on the engine's `backend` ("numpy", "torch:cpu", "torch:cuda"). Raises what the model
    raises (ValueError for a refused text, RuntimeError for a missing backend)."""
    key = (model, text, query, backend, ())

    def compute():
        loaded = trained.load(model)
        start = time.perf_counter()
        run = loaded.run(text, query=query, backend=backend)
        took = time.perf_counter() - start
        if (model, backend) in _WARM:
            FORWARD_SECONDS.get_or_compute((model, text, backend), lambda: took)
        _WARM.add((model, backend))
        # One line a forward (a run shared or cached logs nothing): what the server spent on
        # whom, and the moment a long one ended (tests/server/test_server_model_offloop.py reads it).
        # `panel serve --log-level` sets Bokeh's logger only; follow it (as app/server/replica).
        log.setLevel(logging.getLogger("bokeh").getEffectiveLevel())
        log.info("forward: %s, %d tokens, %s, %.3f s", model, len(run.tokens), backend, took)
        return run.freeze()  # shared: read-only like its records

    return RUNS.get_or_compute(key, compute)


def forward_seconds(model: str, text: str, backend: str) -> float | None:
    """How long one forward of `text` took here, as measured when its run was made (None:
    not run yet in this process)."""
    return FORWARD_SECONDS.get((model, text, backend))


def edited_run(model: str, text: str, query: int | None, backend: str, edits: tuple):
    """`plain_run(...)` with `edits` applied (the plain run itself when there are none)."""
    return runs(model, text, query, backend, edits)[1]


def cached_runs(model: str, text: str, query: int | None, backend: str, edits: tuple):
    """(plain, edited) if both are in the cache now, else None: no forward is run."""
    plain = RUNS.get((model, text, query, backend, ()))
    if plain is None:
        return None
    if not edits:
        return plain, plain
    edited = RUNS.get((model, text, query, backend, tuple(edit_key(e) for e in edits)))
    return None if edited is None else (plain, edited)


def runs(model: str, text: str, query: int | None, backend: str, edits: tuple, plain=None):
    """(plain, edited): `plain_run` and `edited_run` of one request (blocking: a page calls it
    on `POOL`). `plain`: the plain run, if the caller holds it (a long text's run is too large
    to keep, and a session holds the one it shows)."""
    if plain is None:
        plain = plain_run(model, text, query, backend)
    if not edits:
        return plain, plain
    key = (model, text, query, backend, tuple(edit_key(e) for e in edits))
    return plain, RUNS.get_or_compute(key, lambda: plain.intervene(*edits).freeze())


def clear() -> None:
    RUNS.clear()
    FORWARD_SECONDS.clear()
