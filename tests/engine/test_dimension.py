"""The synthetic dimension model: seeded, stable hidden components and the sqrt(d_k) law."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import attention
from engine.dimension import MAX_D_K, DimensionSweep, _unscaled_logits, lift, sweep

Q = np.array([1.0, 0.0])
K = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])


def test_lift_keeps_visible_coordinates_first():
    q, k = lift(Q, K, 16, seed=0)
    assert q.shape == (16,) and k.shape == (3, 16)
    np.testing.assert_array_equal(q[:2], Q)
    np.testing.assert_array_equal(k[:, :2], K)


def test_lift_at_visible_dimension_is_a_copy():
    q, k = lift(Q, K, 2, seed=0)
    np.testing.assert_array_equal(k, K)
    assert k is not K


def test_same_seed_same_hidden_components_other_seed_differs():
    a = lift(Q, K, 32, seed=7)
    b = lift(Q, K, 32, seed=7)
    c = lift(Q, K, 32, seed=8)
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[1][:, 2:], c[1][:, 2:])


@settings(max_examples=25, deadline=None)
@given(
    small=st.integers(2, 100),
    extra=st.integers(0, 200),
    n=st.integers(1, 150),
    more=st.integers(0, 100),
    seed=st.integers(0, 2**20),
)
def test_hidden_components_are_stable_as_d_k_and_key_count_grow(small, extra, n, more, seed):
    rng = np.random.default_rng(seed)
    keys = rng.standard_normal((n + more, 2))
    q_small, k_small = lift(Q, keys[:n], small, seed=seed)
    q_big, k_big = lift(Q, keys, small + extra, seed=seed)
    np.testing.assert_array_equal(q_big[:small], q_small)
    np.testing.assert_array_equal(k_big[:n, :small], k_small)


def test_hidden_components_are_unit_variance_and_independent():
    q, k = lift(Q, np.zeros((500, 2)), 402, seed=3)
    hidden = k[:, 2:]
    assert abs(hidden.mean()) < 0.02 and abs(hidden.std() - 1) < 0.02
    corr = np.corrcoef(hidden[:, :5].T)
    assert np.max(np.abs(corr - np.eye(5))) < 0.15
    assert abs(q[2:].std() - 1) < 0.15


def test_unscaled_route_sharpens_with_d_k_scaled_does_not():
    def mean_max_weight(d_k, scale):
        out = [attention(*lift(Q, K, d_k, seed=s), np.eye(3), scale=scale) for s in range(40)]
        return np.mean([r.weights.max() for r in out])

    assert mean_max_weight(256, False) > 0.9 > 0.6 > mean_max_weight(256, True)
    assert mean_max_weight(2, False) < 0.5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((Q, K, 1), "d_k must be between 2 and"),
        ((Q, K, MAX_D_K + 1), "d_k must be between"),
        ((Q, K, 8.0), "d_k must be an integer"),
        ((Q, K[:, :1], 8), "same D"),
        ((np.array([np.inf, 0]), K, 8), "finite"),
        (([1.0, 0.0, 0.0], np.zeros((2, 3)), 2), "d_k must be between 3 and"),
    ],
)
def test_lift_errors(args, message):
    with pytest.raises(ValueError, match=message):
        lift(*args, seed=0)


def test_lift_rejects_bad_seed():
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        lift(Q, K, 4, seed=-1)


# ---------------------------------------------------------------- sweep

D_KS = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]


def test_sweep_follows_sqrt_d_k():
    s = sweep(D_KS, trials=400)
    assert isinstance(s, DimensionSweep)
    assert s.d_k.tolist() == D_KS
    np.testing.assert_allclose(s.theory_std, np.sqrt(D_KS))
    np.testing.assert_allclose(s.logit_std_unscaled / s.theory_std, 1.0, atol=0.12)
    np.testing.assert_allclose(s.logit_std_scaled, 1.0, atol=0.12)


def test_sweep_entropy_falls_unscaled_and_holds_scaled():
    s = sweep(D_KS)
    assert s.entropy_unscaled[-1] < 0.1 < 1.0 < s.entropy_scaled.min()
    assert np.all(np.diff(s.entropy_unscaled[1:]) < 0.05)  # falls (Monte-Carlo noise allowed)
    assert np.all(s.entropy_scaled <= s.max_entropy) and s.max_entropy == pytest.approx(np.log(8))


def test_sweep_temperature_changes_entropy_not_spread():
    cold = sweep(D_KS[:4], temperature=0.5)
    hot = sweep(D_KS[:4], temperature=4.0)
    np.testing.assert_array_equal(cold.logit_std_unscaled, hot.logit_std_unscaled)
    assert np.all(hot.entropy_scaled > cold.entropy_scaled)
    assert hot.temperature == 4.0


def test_sweep_values_do_not_depend_on_the_other_d_ks():
    a = sweep([8, 64], seed=4)
    b = sweep([64], seed=4)
    assert a.logit_std_unscaled[1] == b.logit_std_unscaled[0]
    assert sweep([64], seed=5).logit_std_unscaled[0] != b.logit_std_unscaled[0]


def test_sampler_matches_literal_dot_products():
    # The fast sampler (|q| times a normal) against building q and k and taking dot products.
    rng = np.random.default_rng(11)
    for d_k in (3, 50):
        q = rng.standard_normal((4000, d_k, 1))
        k = rng.standard_normal((4000, 8, d_k))
        literal = (k @ q)[..., 0]
        fast = _unscaled_logits(d_k, 8, 4000, 0)
        assert fast.std() == pytest.approx(literal.std(), rel=0.05)
        # Same within-row dependence: logits of one query share its norm.
        lit_row = literal.std(axis=1).std()
        assert fast.std(axis=1).std() == pytest.approx(lit_row, rel=0.15)


def test_sweep_arrays_are_read_only():
    s = sweep([4, 8])
    with pytest.raises(ValueError):
        s.entropy_scaled[0] = 0.0


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ([], {}, "non-empty list of integers"),
        ([2.5], {}, "non-empty list of integers"),
        ([0], {}, "d_k must be between 1 and"),
        ([4], {"n_keys": 1}, r"n_keys must be an integer in \[2, "),
        ([4], {"trials": 1}, r"trials must be an integer in \[2, "),
        ([4], {"seed": -1}, "seed must be a non-negative integer"),
        ([4], {"temperature": 0.0}, "temperature must be finite and > 0"),
    ],
)
def test_sweep_errors(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        sweep(args, **kwargs)
