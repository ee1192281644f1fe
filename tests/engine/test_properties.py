"""Hypothesis properties of the routing contract over shapes, dtypes, masks, scales, temperatures."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from engine import attention

PROPS = settings(max_examples=40, deadline=None)
TOL = {np.float32: 2e-5, np.float64: 1e-12}


@st.composite
def problems(draw, *, dtypes=(np.float32, np.float64), masked=True, max_len=8):
    """q (B, Lq, D), k (B, Lk, D), v (B, Lk, Dv), a legal mask with a key per row, controls."""
    dtype = draw(st.sampled_from(dtypes))
    batch = draw(st.sampled_from([(), (2,)]))
    n_q, n_k = draw(st.integers(1, max_len)), draw(st.integers(1, max_len))
    d, d_v = draw(st.integers(1, 6)), draw(st.integers(1, 4))
    elements = st.floats(-3, 3, width=16 if dtype == np.float16 else 32)

    def arr(*shape):
        return draw(arrays(dtype, batch + shape, elements=elements))

    q, k, v = arr(n_q, d), arr(n_k, d), arr(n_k, d_v)
    legal = None
    if masked and draw(st.booleans()):
        legal = draw(arrays(np.bool_, (n_q, n_k)))
        legal[np.arange(n_q), draw(arrays(np.int64, n_q, elements=st.integers(0, n_k - 1)))] = True
    scale = draw(st.one_of(st.booleans(), st.floats(0.1, 3.0)))
    temperature = draw(st.floats(0.2, 5.0))
    return q, k, v, legal, {"scale": scale, "temperature": temperature}


def legal_or_all(legal, shape):
    return np.ones(shape, bool) if legal is None else np.broadcast_to(legal, shape)


@PROPS
@given(problems(dtypes=(np.float16, np.float32, np.float64)))
def test_weights_sum_to_one_over_legal_keys_and_masked_are_zero(problem):
    q, k, v, legal, controls = problem
    res = attention(q, k, v, mask=legal, **controls)
    assert res.weights.dtype == q.dtype and res.output.dtype == q.dtype
    legal = legal_or_all(legal, res.weights.shape)
    assert np.all(res.weights[~legal] == 0)
    assert np.all(res.weights >= 0)
    sums = res.weights.astype(np.float64).sum(-1)
    np.testing.assert_allclose(sums, 1.0, rtol=TOL.get(q.dtype.type, 1e-3 / 5) * 5)


@PROPS
@given(problems(), st.randoms(use_true_random=False))
def test_permuting_keys_and_values_together_keeps_the_output(problem, rnd):
    q, k, v, legal, controls = problem
    perm = np.array(rnd.sample(range(k.shape[-2]), k.shape[-2]))
    res = attention(q, k, v, mask=legal, **controls)
    moved = attention(
        q,
        k[..., perm, :],
        v[..., perm, :],
        mask=None if legal is None else legal[:, perm],
        **controls,
    )
    tol = TOL[q.dtype.type]
    np.testing.assert_allclose(moved.weights, res.weights[..., perm], rtol=tol * 10, atol=tol)
    np.testing.assert_allclose(moved.output, res.output, rtol=tol * 10, atol=tol * 10)


@PROPS
@given(problems(), st.data())
def test_swapping_values_keeps_the_weights(problem, data):
    q, k, v, legal, controls = problem
    i = data.draw(st.integers(0, k.shape[-2] - 1))
    j = data.draw(st.integers(0, k.shape[-2] - 1))
    swapped = v.copy()
    swapped[..., [i, j], :] = v[..., [j, i], :]
    res = attention(q, k, v, mask=legal, **controls)
    other = attention(q, k, swapped, mask=legal, **controls)
    np.testing.assert_array_equal(other.weights, res.weights)  # the route is the keys' business
    expected = res.weights.astype(np.float64) @ swapped.astype(np.float64)
    np.testing.assert_allclose(other.output, expected, rtol=1e-4, atol=1e-4)


@PROPS
@given(problems(dtypes=(np.float64,)), st.floats(-100, 100))
def test_shifting_every_legal_logit_keeps_the_weights(problem, shift):
    q, k, v, legal, controls = problem
    res = attention(q, k, v, mask=legal, **controls)
    bias = np.full(res.weights.shape[-2:], shift)
    if legal is not None:
        bias = np.where(legal, bias, -np.inf)
    shifted = attention(q, k, v, mask=bias, **controls)
    np.testing.assert_allclose(shifted.weights, res.weights, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(shifted.lse, res.lse + shift / controls["temperature"], rtol=1e-9)


@PROPS
@given(problems())
def test_output_stays_inside_the_legal_values_box(problem):
    q, k, v, legal, controls = problem
    res = attention(q, k, v, mask=legal, **controls)
    legal = legal_or_all(legal, res.weights.shape)
    v_b = np.broadcast_to(v[..., None, :, :], legal.shape + v.shape[-1:])
    lo = np.where(legal[..., None], v_b, np.inf).min(axis=-2)
    hi = np.where(legal[..., None], v_b, -np.inf).max(axis=-2)
    slack = 1e-5 * (1 + np.abs(v).max())
    assert np.all(res.output >= lo - slack) and np.all(res.output <= hi + slack)


@PROPS
@given(problems())
def test_equal_scores_give_the_mean_of_the_legal_values(problem):
    q, k, v, legal, controls = problem
    res = attention(np.zeros_like(q), k, v, mask=legal, **controls)
    legal = legal_or_all(legal, res.weights.shape)
    expected = (legal @ v.astype(np.float64)) / legal.sum(-1, keepdims=True)
    np.testing.assert_allclose(res.output, expected, rtol=1e-5, atol=1e-5)


@PROPS
@given(problems(masked=False), st.data())
def test_masking_a_key_equals_deleting_it(problem, data):
    q, k, v, _, controls = problem
    n_k = k.shape[-2]
    if n_k < 2:
        return
    j = data.draw(st.integers(0, n_k - 1))
    keep = np.arange(n_k) != j
    masked = attention(q, k, v, mask=keep, **controls)
    deleted = attention(q, k[..., keep, :], v[..., keep, :], **controls)
    tol = TOL[q.dtype.type]
    assert np.all(masked.weights[..., j] == 0)
    np.testing.assert_allclose(masked.weights[..., keep], deleted.weights, rtol=tol, atol=tol)
    np.testing.assert_allclose(masked.output, deleted.output, rtol=tol * 10, atol=tol * 10)


@PROPS
@given(problems(max_len=40), st.integers(1, 50))
def test_tiled_equals_reference_for_any_block_size(problem, block_size):
    q, k, v, legal, controls = problem
    ref = attention(q, k, v, mask=legal, kernel="reference", **controls)
    tiled = attention(q, k, v, mask=legal, kernel="tiled", block_size=block_size, **controls)
    tol = TOL[q.dtype.type]
    np.testing.assert_allclose(tiled.output, ref.output, rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(tiled.lse, ref.lse, rtol=tol * 10, atol=tol * 10)


@PROPS
@given(problems(masked=False))
def test_causal_equals_an_explicit_lower_triangle(problem):
    q, k, v, _, controls = problem
    n_q, n_k = q.shape[-2], k.shape[-2]
    causal = attention(q, k, v, is_causal=True, **controls)
    tril = attention(q, k, v, mask=np.tril(np.ones((n_q, n_k), bool)), **controls)
    np.testing.assert_array_equal(causal.weights, tril.weights)
    np.testing.assert_array_equal(causal.output, tril.output)


@pytest.mark.torch
@PROPS
@given(problems(), st.sampled_from(["reference", "tiled"]))
def test_numpy_equals_torch(problem, kernel):
    pytest.importorskip("torch")
    q, k, v, legal, controls = problem
    kwargs = dict(controls, mask=legal, kernel=kernel)
    if kernel == "tiled":
        kwargs["block_size"] = 3
    a = attention(q, k, v, **kwargs)
    b = attention(q, k, v, backend="torch", **kwargs).to_numpy()
    tol = TOL[q.dtype.type]
    assert b.output.dtype == a.output.dtype
    np.testing.assert_allclose(b.weights, a.weights, rtol=tol * 10, atol=tol)
    np.testing.assert_allclose(b.output, a.output, rtol=tol * 10, atol=tol * 10)
