"""The fast estimate of every head's ablation effect, and its receipt, for the open sentence.

No Panel or Bokeh import. It follows one `ModelState` (model, sentence, query position): for
each sentence it first publishes the attribution estimate of every head (one backward pass), then
checks the heads with the largest |estimate| by exact ablation, `BATCH` at a time, publishing the
map again after each batch with the exact values found so far, until `VERIFY` heads are checked.
The work runs on its own worker, not the maps' (`causal_state`'s): behind another session's
exact map (10 s for 16 tokens, minutes for 441) no student would see an estimate. It is one
short task per step, so every session's receipt advances in turn; results reach the page
through `deliver`, as the maps' do. A newer sentence supersedes the older one: its tasks stop
at their next step, and anything they still hand over is dropped (each carries its
generation). `settle()` waits for the worker in a notebook or a test.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import param

from app.state import attribution_runs, model_runs
from app.state.map_cost import time_left
from engine.trained import causal

# One worker per process, beside the maps' one: its tasks are short (a backward, two ablations),
# and a student who edits a sentence is waiting for them.
POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lab-receipts")
VERIFY = 20  # heads checked exactly, the largest |estimate| first: a top 10 among 20 says something
BATCH = 2  # heads per delivery: a SmolLM2 batch of two costs about one forward


class ReceiptState(param.Parameterized):
    """One session's estimate and receipt. Set `following`; read `amap`, `planned`, `error`."""

    following = param.Boolean(
        default=False, doc="estimate every sentence (set once the student opens the tab)"
    )
    amap = param.Parameter(
        default=None, constant=True, doc="engine AttributionMap, exact values filled as checked"
    )
    planned = param.Integer(default=0, constant=True, doc="heads the receipt will check")
    error = param.String(default="", constant=True)

    def __init__(self, mstate, **params):
        super().__init__(**params)
        self._m = mstate
        self.deliver: Callable[[Callable[[], None]], None] = lambda finish: finish()
        self._generation = 0
        self._idle = threading.Condition()
        self._tasks = 0
        self._where = None
        self._since: float | None = None  # when the estimate was shown and the checks began
        # The run, not the text: it is published after the settings, with its query position;
        # an intervention publishes a run of the same sentence and changes nothing here.
        mstate.param.watch(lambda *_e: self.refresh(), ["run"])
        self.param.watch(lambda *_e: self.refresh(force=True), ["following"])
        self.refresh()

    @property
    def checked(self) -> int:
        return 0 if self.amap is None else len(self.amap.verified())

    @property
    def complete(self) -> bool:
        return self.amap is not None and self.checked >= self.planned

    def time_left(self) -> float | None:
        """Seconds the checks have left: at their own pace once some are in, before that priced
        from one forward of the sentence (a batch costs about one). None when none are under
        way or nothing tells."""
        if self.amap is None or self.complete or self._since is None or self._where is None:
            return None
        model, text, _query = self._where
        forward = model_runs.forward_seconds(model, text, attribution_runs.BACKEND)
        priced = None if forward is None else forward * self.planned / BATCH
        return time_left(time.monotonic() - self._since, self.checked / self.planned, priced)

    def refresh(self, force: bool = False) -> None:
        """Start over on a new sentence (or query position): drop what was shown and supersede
        older work. The same sentence again keeps its receipt unless ``force``."""
        run = self._m.run
        where = None if run is None else (run.model.name, run.text, run.query_position)
        if where == self._where and not force:
            return
        self._where = where
        self._generation += 1
        self._set(amap=None, planned=0, error="")
        if self.following and where is not None:
            self._submit(self._estimate, self._generation, where)

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until none of this state's tasks is queued or at work; True if idle."""
        with self._idle:
            return self._idle.wait_for(lambda: self._tasks == 0, timeout)

    # ---------------------------------------------------------------- on the worker

    def _submit(self, task, *args) -> None:
        with self._idle:
            self._tasks += 1
        POOL.submit(self._guarded, task, *args)

    def _guarded(self, task, generation, *args) -> None:
        try:
            if generation == self._generation:  # a superseded task does no work at all
                task(generation, *args)
        except causal.Cancelled:
            pass  # a newer sentence arrived mid-batch
        except Exception as exc:  # noqa: BLE001 - the page stays up and says what failed
            message = f"{type(exc).__name__}: {exc}"
            self.deliver(functools.partial(self._show, generation, error=message))
        finally:
            with self._idle:
                self._tasks -= 1
                self._idle.notify_all()

    def _estimate(self, generation, where) -> None:
        # One forward for the whole receipt: a long text's run is too large for the run cache,
        # so the batches carry it (each made its own, seconds each on 400 tokens).
        plain = attribution_runs.plain_run(*where)
        attribution_runs.query_rows(*where, run=plain)  # what the page draws the estimate with
        amap = attribution_runs.estimate(*where, run=plain)
        heads = [(r.layer, r.head) for r in amap.ranked()[:VERIFY]]
        self.deliver(functools.partial(self._show, generation, amap=amap, planned=len(heads)))
        self._submit(self._check, generation, where, amap, heads, {}, plain)

    def _check(self, generation, where, amap, heads, found, plain) -> None:
        batch = heads[len(found) : len(found) + BATCH]
        stale = lambda: generation != self._generation  # noqa: E731 - read at each layer
        found = found | attribution_runs.exact(*where, batch, cancel=stale, run=plain)
        self.deliver(functools.partial(self._show, generation, amap=amap.with_exact(found)))
        if len(found) < len(heads):
            self._submit(self._check, generation, where, amap, heads, found, plain)

    # ---------------------------------------------------------------- on the session

    def _show(self, generation, **values) -> None:
        if generation == self._generation:
            if "planned" in values:  # the estimate: the checks start now
                self._since = time.monotonic()
            self._set(**values)

    def _set(self, **values) -> None:
        with param.edit_constant(self):
            self.param.update(**values)
