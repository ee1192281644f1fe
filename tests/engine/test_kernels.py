"""The tiled (online softmax) kernel against the materialised one, and the tolerance rule."""

import sys

import numpy as np
import pytest

from engine import attention
from engine.tolerance import check_close, max_abs_error

core = sys.modules["engine.core"]
kernels = sys.modules["engine.kernels"]


def rand(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def compare(q, k, v, block_size, **kwargs):
    """Tiled float32 vs reference float32, both judged against a float64 golden (torch's rule)."""
    golden = attention(q, k, v, kernel="reference", **kwargs)
    f32 = [x.astype(np.float32) for x in (q, k, v)]
    ref = attention(*f32, kernel="reference", **kwargs)
    tiled = attention(*f32, kernel="tiled", block_size=block_size, **kwargs)
    assert tiled.kernel == "tiled" and ref.kernel == "reference"
    for field in ("output", "lse"):
        passed, error, bound = check_close(
            getattr(tiled, field), getattr(golden, field), getattr(ref, field)
        )
        assert passed, f"{field}: error {error:.3g} > bound {bound:.3g} (block {block_size})"
    return golden, tiled


@pytest.mark.parametrize("block_size", [1, 2, 7, 64, 97, 128, 1025, 5000])
def test_tiled_matches_reference_for_any_block_size(block_size):
    q, k, v = rand(2, 70, 16), rand(2, 1100, 16, seed=1), rand(2, 1100, 8, seed=2)
    compare(q, k, v, block_size)


@pytest.mark.parametrize("block_size", [1, 3, 97, 1025])
@pytest.mark.parametrize(("n_q", "n_k"), [(5, 300), (300, 5), (257, 1031)])
def test_tiled_causal_with_unequal_lengths(block_size, n_q, n_k):
    q, k, v = rand(n_q, 8), rand(n_k, 8, seed=1), rand(n_k, 4, seed=2)
    compare(q, k, v, block_size, is_causal=True)


@pytest.mark.parametrize("block_size", [1, 7, 97])
def test_tiled_with_bool_and_float_masks_and_temperature(block_size):
    q, k, v = rand(3, 40, 8), rand(3, 230, 8, seed=1), rand(3, 230, 4, seed=2)
    legal = rand(3, 40, 230, seed=3) > 0.0
    legal[..., 5] = True
    compare(q, k, v, block_size, mask=legal, temperature=0.3)
    bias = np.where(legal, rand(40, 230, seed=4), -np.inf)
    compare(q, k, v, block_size, mask=bias, scale=0.9, temperature=2.0)


def test_tiled_guards_rows_whose_first_blocks_are_fully_masked():
    # The first legal key of each row lies in a later block: m stays -inf for several blocks.
    q, k, v = rand(4, 8), rand(50, 8, seed=1), rand(50, 3, seed=2)
    legal = np.zeros((4, 50), bool)
    legal[0, 49] = legal[1, 20:] = legal[2, [3, 31]] = legal[3] = True
    golden, tiled = compare(q, k, v, 4, mask=legal)
    assert np.isfinite(tiled.output).all()


def test_tiled_fully_masked_rows_give_zero_and_minus_inf_lse():
    q, k, v = rand(6, 8), rand(40, 8, seed=1), rand(40, 3, seed=2)
    legal = rand(6, 40, seed=3) > 0
    legal[2] = False
    res = attention(q, k, v, mask=legal, kernel="tiled", block_size=7, fully_masked="zero")
    ref = attention(q, k, v, mask=legal, kernel="reference", fully_masked="zero")
    assert np.all(res.output[2] == 0.0) and res.lse[2] == -np.inf
    np.testing.assert_allclose(res.output, ref.output, rtol=1e-12, atol=1e-15)


def test_tiled_with_broadcast_batches_and_a_single_query():
    q, k, v = rand(2, 1, 9, 8), rand(3, 200, 8, seed=1), rand(1, 200, 5, seed=2)
    compare(q, k, v, 33)
    one = attention(rand(8), k[0], v[0], kernel="tiled", block_size=13)
    assert one.output.shape == (5,) and one.lse.shape == ()


def test_tiled_derived_views_are_rebuilt_from_q_and_k():
    q, k, v = rand(5, 8), rand(60, 8, seed=1), rand(60, 3, seed=2)
    mask = rand(5, 60, seed=3) > -1
    tiled = attention(q, k, v, mask=mask, kernel="tiled", block_size=16)
    ref = attention(q, k, v, mask=mask, kernel="reference")
    for name in ("weights", "logits", "scores", "entropy", "effective_keys"):
        np.testing.assert_allclose(getattr(tiled, name), getattr(ref, name), rtol=1e-12)
    np.testing.assert_allclose(tiled.weights @ v, tiled.output, rtol=1e-10)


def test_tiled_runs_tasks_in_threads_and_still_agrees(monkeypatch):
    monkeypatch.setattr(kernels, "_THREAD_MIN_ENTRIES", 1)
    q, k, v = rand(4, 600, 16), rand(4, 600, 16, seed=1), rand(4, 600, 16, seed=2)
    compare(q, k, v, 128, is_causal=True)


def test_auto_switches_to_tiled_above_the_budget(monkeypatch):
    q, k, v = rand(8, 4), rand(16, 4, seed=1), rand(16, 2, seed=2)
    assert attention(q, k, v).kernel == "reference"
    assert attention(q, k, v, block_size=4).kernel == "tiled"
    monkeypatch.setattr(core, "AUTO_TILED_BYTES", 8 * 16 * 8 - 1)
    assert attention(q, k, v).kernel == "tiled"
    monkeypatch.setattr(core, "AUTO_TILED_BYTES", 8 * 16 * 8)
    assert attention(q, k, v).kernel == "reference"


@pytest.mark.hardware("openblas")
def test_blas_thread_pinning_restores_the_previous_count():
    backends = sys.modules["engine.backends"]
    setter = backends._BLAS_LOCAL
    with backends.blas_threads(1):
        assert setter(1) == 1  # the call returns the count it replaces
    before = setter(3)
    setter(before)
    with backends.blas_threads(1):
        pass
    assert setter(before) == before


# ------------------------------------------------------------------------------- tolerance rule


def test_check_close_applies_the_five_times_rule():
    golden = np.array([1.0, 2.0, 3.0])
    reference = golden + np.array([0.0, 1e-4, 0.0])
    assert check_close(golden + 4e-4, golden, reference) == (
        True,
        pytest.approx(4e-4),
        pytest.approx(5e-4),
    )
    passed, error, bound = check_close(golden + 6e-4, golden, reference)
    assert not passed and error == pytest.approx(6e-4) and bound == pytest.approx(5e-4)


def test_check_close_has_an_absolute_floor():
    golden = np.ones(3)
    assert check_close(golden + 9e-6, golden, golden).passed
    assert not check_close(golden + 2e-5, golden, golden).passed


def test_check_close_requires_nan_and_inf_agreement():
    golden = np.array([1.0, np.nan, -np.inf])
    assert check_close(golden.copy(), golden, golden).passed
    assert not check_close(np.array([1.0, 0.0, -np.inf]), golden, golden).passed
    assert not check_close(np.array([1.0, np.nan, np.inf]), golden, golden).passed
    assert max_abs_error(np.array([np.nan]), np.array([np.nan])) == 0.0
    # A reference that is NaN where golden is finite gives no yardstick: only the floor remains.
    assert not check_close(golden + 1e-3, golden, np.array([np.nan, np.nan, -np.inf])).passed


def test_check_close_rejects_shape_mismatch():
    with pytest.raises(ValueError, match=r"test \(2,\) and golden \(3,\) must have the same shape"):
        check_close(np.ones(2), np.ones(3), np.ones(3))


def test_tiled_wraps_every_task_in_the_task_context():
    entered = []

    class Recorder:
        def __enter__(self):
            entered.append(1)

        def __exit__(self, *exc):
            return False

    q, k, v = rand(2, 10, 4), rand(2, 30, 4, seed=1), rand(2, 30, 3, seed=2)
    rule = kernels.LogitRule(sys.modules["array_api_compat.numpy"], 0.5)
    out = kernels.tiled(q, k, v, rule, block_q=4, block_k=7, workers=1, task_context=Recorder)
    assert len(entered) == 2 * 3  # two batch entries x three query blocks
    np.testing.assert_allclose(out["output"], kernels.reference(q, k, v, rule)["output"])


def test_numpy_tiled_pins_blas_to_one_thread_per_worker():
    threading = core._tiled_threading(sys.modules["engine.backends"].resolve("numpy", None))
    if not sys.modules["engine.backends"].can_pin_blas_threads():
        assert threading == {"workers": 1}  # no per-thread control: let BLAS use the cores
    else:
        assert threading["workers"] == kernels.default_workers()
        setter = sys.modules["engine.backends"]._BLAS_LOCAL
        before = setter(3)
        with threading["task_context"]():
            assert setter(1) == 1  # each task runs with a one-thread BLAS...
        assert setter(before) == 3  # ...and leaves the thread's count as it found it


def test_tiled_runs_on_the_callers_thread_and_one_shared_pool():
    # A pool per call started and joined threads on every call; the tasks now run on the
    # calling thread and the process's one pool, never on more threads than asked for.
    import threading

    seen: list[set[str]] = []

    class Where:
        def __enter__(self):
            seen[-1].add(threading.current_thread().name)

        def __exit__(self, *exc):
            return False

    q, k, v = rand(4, 256, 8), rand(4, 512, 8, seed=1), rand(4, 512, 8, seed=2)
    rule = kernels.LogitRule(sys.modules["array_api_compat.numpy"], 0.5)
    for _ in range(3):
        seen.append(set())
        out = kernels.tiled(q, k, v, rule, workers=2, task_context=Where)
        np.testing.assert_allclose(out["output"], kernels.reference(q, k, v, rule)["output"])
        assert len(seen[-1]) <= 2
    helpers = set().union(*seen) - {threading.current_thread().name}
    assert all(name.startswith("tiled-attention") for name in helpers), helpers
    assert len(helpers) <= kernels.default_workers()
    assert kernels.shared_pool() is kernels.shared_pool()


def test_a_failing_task_raises_in_the_caller_after_every_lane_stops():
    finished = []

    def run(task):
        if task == 3:
            raise ValueError("task 3")
        finished.append(task)

    with pytest.raises(ValueError, match="task 3"):
        kernels.run_in_lanes(run, list(range(8)), 2)
    assert sorted(finished) == [0, 1, 2, 4, 5, 6, 7]
