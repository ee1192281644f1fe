"""The two attention kernels, written once for any array-API namespace (NumPy or torch).

Both compute, per query row,

    scores  = q . k_j                              (raw dot products)
    logits  = (scale * scores + float_mask) / T    (T = temperature), illegal keys -> -inf
    weights = softmax(logits)                      (illegal keys get exactly 0)
    output  = sum_j weights_j * v_j
    lse     = log sum_j exp(logits_j)              (over legal keys; -inf when there are none)

``reference`` materialises the whole (..., Lq, Lk) matrix, which is the equation as written.
``tiled`` never does: it walks the keys in blocks with an online softmax (running max, running
sum, rescaled unnormalised output), FlashAttention's schedule on the CPU, so its working memory is
O(Lq * Dv + block_q * block_k) instead of O(Lq * Lk).
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from itertools import product
from types import ModuleType
from typing import Any

import array_api_compat

NEG_INF = -math.inf

# Tiled kernel defaults: a 256 x 512 fp32 block is 512 KiB, small enough to stay in cache-friendly
# territory and large enough that the two matmuls per block dominate Python overhead.
DEFAULT_BLOCK_Q = 256
DEFAULT_BLOCK_K = 512
# Below this many score entries per task the thread pool costs more than it saves.
_THREAD_MIN_ENTRIES = 1 << 17  # measured: threads pay off from n = 512 (8 heads)


@dataclass(frozen=True)
class LogitRule:
    """How raw scores become masked logits; shared by both kernels and the lazy result views.

    ``factor`` is scale / temperature. ``bias`` (float mask / temperature, 0 where illegal) and
    ``legal`` (bool, True = the key takes part) are already broadcast to the full
    (..., Lq, Lk) shape as views, so any block can be sliced out of them without copying.
    """

    xp: ModuleType
    factor: float
    bias: Any = None
    legal: Any = None
    causal: bool = False

    def logits(
        self,
        scores: Any,
        index: tuple = (),
        rows: slice = slice(None),
        cols: slice = slice(None),
        *,
        prescaled: bool = False,
    ):
        """Masked logits for ``scores``, which cover ``rows`` x ``cols`` of batch entry ``index``.

        ``prescaled``: the scores already carry ``factor`` (the tiled kernel folds it into q).
        """
        xp = self.xp
        z = scores if prescaled else scores * self.factor
        if self.bias is not None:
            z = z + self.bias[index + (rows, cols)]
        legal = self.legal_block(scores, index, rows, cols)
        if legal is not None:
            # where(), never an added large negative: an illegal key can never become a route.
            z = xp.where(legal, z, xp.asarray(NEG_INF, dtype=z.dtype, device=device_of(z)))
        return z

    def legal_block(self, scores: Any, index: tuple, rows: slice, cols: slice):
        xp = self.xp
        legal = None if self.legal is None else self.legal[index + (rows, cols)]
        if self.causal:
            n_rows, n_cols = scores.shape[-2:]
            r0 = rows.start or 0
            c0 = cols.start or 0
            dev = device_of(scores)
            i = xp.arange(r0, r0 + n_rows, device=dev)[:, None]
            j = xp.arange(c0, c0 + n_cols, device=dev)[None, :]
            tril = j <= i  # top-left aligned: query i sees keys 0..i
            legal = tril if legal is None else xp.logical_and(legal, tril)
        return legal


def device_of(x: Any) -> Any:
    return array_api_compat.device(x)


def masked_softmax(xp: ModuleType, logits: Any) -> tuple[Any, Any]:
    """Softmax over the last axis of logits that may hold -inf; returns (weights, lse).

    A row whose logits are all -inf (no legal key) gives zero weights and lse = -inf.
    """
    m = xp.max(logits, axis=-1, keepdims=True)
    # Guard: with no legal key the max is -inf, and (-inf) - (-inf) would be NaN.
    m = xp.where(m == NEG_INF, xp.zeros_like(m), m)
    weights = _exp_shifted(xp, logits - m, 0.0)  # one fresh array, exponentiated in place
    total = xp.sum(weights, axis=-1, keepdims=True)
    weights /= xp.where(total == 0, xp.ones_like(total), total)
    lse = (m + xp.log(total))[..., 0]
    return weights, lse


def reference(q: Any, k: Any, v: Any, rule: LogitRule) -> dict[str, Any]:
    """The materialised equation; returns output, lse, weights, logits and scores."""
    xp = rule.xp
    scores = xp.matmul(q, xp.matrix_transpose(k))
    logits = rule.logits(scores)
    weights, lse = masked_softmax(xp, logits)
    output = xp.matmul(weights, v)
    return {"output": output, "lse": lse, "weights": weights, "logits": logits, "scores": scores}


def _online_rows(q_rows, k, v, rule: LogitRule, index: tuple, rows: slice, block_k: int):
    """Online softmax for one block of query rows against all keys, one key block at a time."""
    xp = rule.xp
    dev = device_of(q_rows)
    n_rows, n_keys = q_rows.shape[0], k.shape[-2]
    m = xp.full((n_rows,), NEG_INF, dtype=q_rows.dtype, device=dev)  # running max
    total = xp.zeros((n_rows,), dtype=q_rows.dtype, device=dev)  # running sum of exp
    acc = xp.zeros((n_rows, v.shape[-1]), dtype=q_rows.dtype, device=dev)  # unnormalised output
    # Causal (top-left): the last row of this block sees keys up to its own index only.
    stop = min(n_keys, rows.stop) if rule.causal else n_keys
    q_rows = q_rows * rule.factor  # once per row block instead of once per score
    for c0 in range(0, stop, block_k):
        cols = slice(c0, min(c0 + block_k, n_keys))
        z = rule.logits(
            xp.matmul(q_rows, xp.matrix_transpose(k[cols])), index, rows, cols, prescaled=True
        )
        m_new = xp.maximum(m, xp.max(z, axis=-1))
        # Guard: rows with no legal key so far keep m = -inf; shift them by 0 instead.
        shift = xp.where(m_new == NEG_INF, xp.zeros_like(m_new), m_new)
        p = _exp_shifted(xp, z, shift[:, None])
        rescale = xp.exp(m - shift)  # exp(-inf) = 0 for rows that had nothing yet
        total = total * rescale + xp.sum(p, axis=-1)
        acc = acc * rescale[:, None] + xp.matmul(p, v[cols])
        m = m_new
    shift = xp.where(m == NEG_INF, xp.zeros_like(m), m)
    out = acc / xp.where(total == 0, xp.ones_like(total), total)[:, None]
    return out, shift + xp.log(total)


def _exp_shifted(xp: ModuleType, z: Any, shift: Any) -> Any:
    """exp(z - shift), overwriting z (which must be a fresh array) where the namespace allows it.

    Same math as ``xp.exp(z - shift)``; in place it saves two block-sized allocations per step,
    which is a fifth of the tiled kernel's time in NumPy.
    """
    if array_api_compat.is_numpy_namespace(xp):
        return _np_exp_inplace(z, shift)
    if array_api_compat.is_torch_namespace(xp):
        return z.sub_(shift).exp_()
    return xp.exp(z - shift)


def _np_exp_inplace(z: Any, shift: Any) -> Any:
    import numpy as np

    np.subtract(z, shift, out=z)
    return np.exp(z, out=z)


def default_workers() -> int:
    return max(1, min(8, os.cpu_count() or 1))


def tiled(
    q: Any,
    k: Any,
    v: Any,
    rule: LogitRule,
    *,
    block_k: int = DEFAULT_BLOCK_K,
    block_q: int = DEFAULT_BLOCK_Q,
    workers: int | None = None,
    task_context: Callable[[], AbstractContextManager] | None = None,
) -> dict[str, Any]:
    """Online-softmax attention in (block_q x block_k) tiles; returns output and lse only.

    Independent (batch entry, query block) tasks run on up to ``workers`` threads when it is
    more than 1 (the caller's and the process's shared pool's, `run_in_lanes`): NumPy's matmul
    and ufuncs release the GIL, so heads proceed in parallel. ``task_context``
    wraps every task (the NumPy backend uses it to keep BLAS to one thread per worker).
    """
    xp = rule.xp
    batch = tuple(_broadcast(q.shape[:-2], k.shape[:-2], v.shape[:-2]))
    n_q, n_k, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
    q = xp.broadcast_to(q, batch + q.shape[-2:])
    k = xp.broadcast_to(k, batch + k.shape[-2:])
    v = xp.broadcast_to(v, batch + v.shape[-2:])
    dev = device_of(q)
    output = xp.zeros(batch + (n_q, d_v), dtype=q.dtype, device=dev)
    lse = xp.zeros(batch + (n_q,), dtype=q.dtype, device=dev)
    tasks = [
        (index, slice(r0, min(r0 + block_q, n_q)))
        for index in product(*(range(n) for n in batch))
        for r0 in range(0, n_q, block_q)
    ]

    def run(task):
        index, rows = task
        with task_context() if task_context else nullcontext():
            out, row_lse = _online_rows(
                q[index + (rows,)], k[index], v[index], rule, index, rows, block_k
            )
        output[index + (rows,)] = out
        lse[index + (rows,)] = row_lse

    workers = default_workers() if workers is None else workers
    big = min(block_q, n_q) * n_k >= _THREAD_MIN_ENTRIES
    if workers > 1 and len(tasks) > 1 and big:
        run_in_lanes(run, tasks, min(workers, len(tasks)))
    else:
        for task in tasks:
            run(task)
    return {"output": output, "lse": lse}


# One pool for the process, made on first use and bounded by the cores: a pool per call started
# and joined its threads on every call, and each session's concurrent calls added their own.
_pool_guard = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_pid: int | None = None


def shared_pool() -> ThreadPoolExecutor:
    """The process's pool of `default_workers` threads for the tiled kernel's tasks. A forked
    child gets a pool of its own: the parent's threads do not exist there."""
    global _pool, _pool_pid
    with _pool_guard:
        if _pool is None or _pool_pid != os.getpid():
            _pool = ThreadPoolExecutor(default_workers(), thread_name_prefix="tiled-attention")
            _pool_pid = os.getpid()
        return _pool


def run_in_lanes(run: Callable[[Any], None], tasks: list, lanes: int) -> None:
    """``run`` on every task, in ``lanes`` lanes at once: the calling thread and lanes - 1
    threads of the shared pool, each taking the next task until none is left (so a call never
    uses more than ``lanes`` threads, and never waits on a pool busy with other calls alone)."""
    pending = iter(tasks)
    taking = threading.Lock()

    def lane() -> None:
        while True:
            with taking:
                task = next(pending, None)
            if task is None:
                return
            run(task)

    helpers = [shared_pool().submit(lane) for _ in range(lanes - 1)]
    try:
        lane()
    finally:
        wait(helpers)
    for helper in helpers:
        helper.result()  # a task's error, raised here


def _broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    ndim = max(len(s) for s in shapes)
    out = []
    for dims in zip(*((1,) * (ndim - len(s)) + tuple(s) for s in shapes), strict=True):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise ValueError(f"batch dimensions {shapes} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)
