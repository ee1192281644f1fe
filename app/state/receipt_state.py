"""The fast estimate of every head's ablation effect, and its receipt, for the open sentence.

No Panel or Bokeh import. It follows one `ModelState` (model, sentence, query position): for
each sentence it first publishes the attribution estimate of every head (one backward pass), then
checks the heads with the largest |estimate| by exact ablation, `BATCH` at a time, publishing the
map again after each batch with the exact values found so far, until `VERIFY` heads are checked.
The work runs on its own worker, not the maps' (`causal_state`'s): behind another session's
exact map (10 s for 16 tokens, minutes for 441) no student would see an estimate. It is one
short task per step, so every session's receipt advances in turn; results reach the page
through the session's `handover`, as the maps' do (a `jobs.LatestJob`, each batch a step of the
same work). A newer sentence supersedes the older one: its tasks stop at their next step, and
anything they still hand over is dropped. `settle()` waits for the worker in a notebook or a
test, `close()` drops the work when the page closes.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import param

from app.state import attribution_runs, jobs, model_runs
from app.state.map_cost import time_left

# One worker per process, beside the maps' one: its tasks are short (a backward, two ablations),
# and a student who edits a sentence is waiting for them.
POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lab-receipts")
VERIFY = 20  # heads checked exactly, the largest |estimate| first: a top 10 among 20 says something
BATCH = 2  # heads per delivery: a SmolLM2 batch of two costs about one forward


class ReceiptState(jobs.HandsOver, param.Parameterized):
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
        # Results reach the session's thread as its model's runs do (the session's hand-over).
        self.handover = mstate.handover
        # A new sentence makes the older one's estimate and checks stale.
        self._job = jobs.LatestJob(POOL.submit, self.hand_over, failed=self._failed)
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
        self._job.drop()
        self._set(amap=None, planned=0, error="")
        if self.following and where is not None:
            self._job.submit(self._estimate, where)

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until none of this state's tasks is queued or at work; True if idle."""
        return self._job.settle(timeout)

    def close(self) -> None:
        """The page closed: drop the estimate and checks under way; nothing more arrives."""
        self._job.stop()

    # ---------------------------------------------------------------- on the worker
    # A task for a superseded sentence does no work at all; one under way stops at its next
    # layer (`causal.Cancelled`, which the job drops with everything else of a stale ticket).

    def _estimate(self, ticket: jobs.Ticket, where) -> None:
        # One forward for the whole receipt: a long text's run is too large for the run cache,
        # so the batches carry it (each made its own, seconds each on 400 tokens).
        plain = attribution_runs.plain_run(*where)
        attribution_runs.query_rows(*where, run=plain)  # what the page draws the estimate with
        amap = attribution_runs.estimate(*where, run=plain)
        heads = [(r.layer, r.head) for r in amap.ranked()[:VERIFY]]
        ticket.deliver(self._show, amap=amap, planned=len(heads))
        ticket.then(self._check, where, amap, heads, {}, plain)

    def _check(self, ticket: jobs.Ticket, where, amap, heads, found, plain) -> None:
        batch = heads[len(found) : len(found) + BATCH]
        found = found | attribution_runs.exact(*where, batch, cancel=ticket.stale, run=plain)
        ticket.deliver(self._show, amap=amap.with_exact(found))
        if len(found) < len(heads):  # the next batch waits behind other sessions' tasks
            ticket.then(self._check, where, amap, heads, found, plain)

    # ---------------------------------------------------------------- on the session

    def _show(self, **values) -> None:
        if "planned" in values:  # the estimate: the checks start now
            self._since = time.monotonic()
        self._set(**values)

    def _failed(self, failure: str) -> None:
        self._set(error=failure)

    def _set(self, **values) -> None:
        with param.edit_constant(self):
            self.param.update(**values)
