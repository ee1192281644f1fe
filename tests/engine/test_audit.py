"""The audit passes on correct attention and catches each broken mechanism it is meant to catch."""

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine.audit as audit_mod
from engine import BackendInfo, attention, softmax
from engine.audit import CHECK_NAMES, Check, ranking_violation, run_audit
from engine.backends import to_numpy
from engine.scenarios import SCENARIOS

Q = np.array([1.0, 0.0])
K = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [-0.5, 0.5]])
V = np.array([[10.0, 0.0], [0.0, 10.0], [-5.0, 5.0], [1.0, 1.0]])
MASK = np.array([True, True, False, True])

SUM, MASKED, RANGE, PERM, SWAP, SHIFT, TEMP, DELETE, TILED, TORCH = CHECK_NAMES


def by_name(checks):
    assert [c.name for c in checks] == list(CHECK_NAMES)
    return {c.name: c for c in checks}


def assert_clean(checks):
    bad = [c for c in checks if not c.passed]
    assert not bad, bad


# ---------------------------------------------------------------- correct attention passes


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_scenario_passes(name):
    s = SCENARIOS[name]
    checks = run_audit(
        s.query,
        s.keys,
        s.values,
        mask=s.legal_mask(causal=True),
        temperature=s.temperature,
        scale=s.scale,
    )
    assert_clean(checks)
    assert by_name(checks)[TORCH].applicable  # CI installs torch: the comparison must run


def test_masked_configuration_applies_every_check():
    checks = by_name(run_audit(Q, K, V, mask=MASK))
    assert all(c.applicable and c.passed for c in checks.values()), checks
    # float64 metamorphic checks are exact to rounding; the kernel comparisons run in float32.
    exact = {n: c for n, c in checks.items() if n not in (TILED, TORCH)}
    assert all(np.isfinite(c.error) and c.error < 1e-9 for c in exact.values())
    for name in (TILED, TORCH):
        assert 0 <= checks[name].error <= 1e-5, checks[name]


def test_float_mask_and_several_queries():
    q = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.2]])
    bias = np.array([0.5, -np.inf, 0.0, 2.0])
    assert_clean(run_audit(q, K, V, mask=bias, temperature=0.7, scale=0.9))
    per_row = np.array([[True, True, False, True], [True, False, True, True], [True] * 4])
    assert_clean(run_audit(q, K, V, mask=per_row))


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(1, 7),
    d=st.integers(1, 4),
    seed=st.integers(0, 10**6),
    temperature=st.floats(0.05, 20),
    scale=st.sampled_from([True, False, 0.3, 3.0]),
    use_mask=st.booleans(),
)
def test_random_configurations_pass(n, d, seed, temperature, scale, use_mask):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(d) * 3
    k = rng.standard_normal((n, d)) * 3
    v = rng.standard_normal((n, 2))
    mask = None
    if use_mask:
        mask = rng.random(n) < 0.6
        mask[rng.integers(n)] = True
    assert_clean(run_audit(q, k, v, mask=mask, temperature=temperature, scale=scale))


def test_inputs_are_not_modified():
    k, v, m = K.copy(), V.copy(), MASK.copy()
    run_audit(Q, k, v, mask=m)
    np.testing.assert_array_equal(k, K)
    np.testing.assert_array_equal(v, V)
    np.testing.assert_array_equal(m, MASK)


def test_invalid_configuration_raises_attentions_error():
    with pytest.raises(ValueError, match="no legal key"):
        run_audit(Q, K, V, mask=np.zeros(4, dtype=bool))
    with pytest.raises(ValueError, match="run_audit expects"):
        run_audit(Q, K[None], V)
    with pytest.raises(ValueError, match="does not broadcast"):
        run_audit(Q, K, V, mask=np.ones(3, dtype=bool))


# ---------------------------------------------------------------- not applicable, said so


def test_equal_values_make_the_swap_not_applicable():
    checks = by_name(run_audit(Q, K, np.ones((4, 2))))
    swap = checks[SWAP]
    assert not swap.applicable and swap.passed and swap.status == "n/a"
    assert "all values are equal" in swap.detail


def test_equal_weights_make_the_swap_not_applicable():
    keys = np.array([[1.0, 0.0], [1.0, 0.0]])
    swap = by_name(run_audit(Q, keys, V[:2]))[SWAP]
    assert not swap.applicable and "equal weight" in swap.detail


def test_single_key_and_all_legal_cases():
    checks = by_name(run_audit(Q, K[:1], V[:1]))
    assert not checks[PERM].applicable and "only one key" in checks[PERM].detail
    assert not checks[DELETE].applicable and "no legal key" in checks[DELETE].detail
    assert not checks[MASKED].applicable and "every key is legal" in checks[MASKED].detail
    assert checks[SUM].applicable and checks[SUM].passed


def test_torch_check_can_be_switched_off_or_missing(monkeypatch):
    off = by_name(run_audit(Q, K, V, torch_check=False))[TORCH]
    assert not off.applicable and "torch_check=False" in off.detail
    missing = [
        BackendInfo("numpy", "cpu", True, "NumPy"),
        BackendInfo("torch", "cpu", False, "torch is not installed"),
    ]
    monkeypatch.setattr(audit_mod, "backends", lambda: missing)
    gone = by_name(run_audit(Q, K, V))[TORCH]
    assert not gone.applicable and gone.passed and "torch is not installed" in gone.detail


# ---------------------------------------------------------------- broken attention fails


def _float_mask(mask, n):
    if mask is None:
        return np.zeros(n)
    m = np.asarray(mask)
    return np.where(m, 0.0, -np.inf) if m.dtype == bool else m.astype(float)


def from_logits(transform):
    """An attention whose weights are softmax(transform(logits, kw)) over the same logits."""

    def fn(q, k, v, **kw):
        res = attention(q, k, v, **kw)
        z = np.asarray(to_numpy(res.logits), dtype=float)
        w = softmax(transform(z, kw), axis=-1)
        return SimpleNamespace(weights=w, output=w @ np.asarray(v), lse=to_numpy(res.lse))

    return fn


def edit_result(edit):
    def fn(q, k, v, **kw):
        res = attention(q, k, v, **kw)
        w = np.asarray(to_numpy(res.weights), dtype=float)
        out = np.asarray(to_numpy(res.output), dtype=float)
        w, out = edit(w, out, kw)
        return SimpleNamespace(weights=w, output=out, lse=to_numpy(res.lse))

    return fn


def edit_mask(edit):
    def fn(q, k, v, **kw):
        kw["mask"] = edit(_float_mask(kw.get("mask"), np.shape(k)[0]), np.asarray(v), kw)
        return attention(q, k, v, **kw)

    return fn


def leaky_mask(mask, v, kw):
    return np.where(np.isneginf(mask), -5.0, mask)  # "masked" by a finite penalty


BROKEN = {
    "weights scaled by 1.01": (edit_result(lambda w, o, kw: (w * 1.01, o)), [SUM]),
    "finite mask penalty": (edit_mask(leaky_mask), [MASKED, DELETE]),
    "output pushed outside": (edit_result(lambda w, o, kw: (w, o + 100.0)), [RANGE]),
    "position bias": (edit_mask(lambda m, v, kw: m + 0.5 * np.arange(m.shape[-1])), [PERM]),
    "value-dependent route": (edit_mask(lambda m, v, kw: m + 0.3 * v[:, 0]), [SWAP]),
    "logits divided by their max": (
        from_logits(lambda z, kw: z / np.max(np.abs(z[np.isfinite(z)]))),
        [SHIFT],
    ),
    "order flips when hot": (
        from_logits(lambda z, kw: -z if kw["temperature"] > 2 else z),
        [TEMP],
    ),
    "tiled kernel off by 1e-3": (
        edit_result(lambda w, o, kw: (w, o + (1e-3 if kw.get("kernel") == "tiled" else 0))),
        [TILED],
    ),
    "torch off by 1e-3": (
        edit_result(lambda w, o, kw: (w, o + (1e-3 if kw.get("backend") == "torch" else 0))),
        [TORCH],
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_each_check_catches_its_broken_mechanism(case):
    fn, expected = BROKEN[case]
    checks = by_name(run_audit(Q, K, V, mask=MASK, temperature=1.0, attention_fn=fn))
    for name in expected:
        assert checks[name].applicable and not checks[name].passed, checks[name]
        assert checks[name].error > 1e-6 and checks[name].status == "fail"
    # And the same configuration is clean with the real attention.
    assert by_name(run_audit(Q, K, V, mask=MASK))[expected[0]].passed


def test_masked_zero_is_exact():
    # A -30 penalty leaks only ~1e-14 of weight: still a failure, because masked means zero.
    fn = edit_mask(lambda m, v, kw: np.where(np.isneginf(m), -30.0, m))
    masked = by_name(run_audit(Q, K, V, mask=MASK, attention_fn=fn))[MASKED]
    assert not masked.passed and 0 < masked.error < 1e-12


def test_swap_catches_an_output_that_ignores_value_order():
    def sorted_values(q, k, v, **kw):
        res = attention(q, k, v, **kw)
        w = np.asarray(to_numpy(res.weights), dtype=float)
        return SimpleNamespace(weights=w, output=w @ np.sort(v, axis=0), lse=res.lse)

    swap = by_name(run_audit(Q, K, V, attention_fn=sorted_values))[SWAP]
    assert swap.applicable and not swap.passed


def test_a_crashing_check_is_a_failure_not_a_crash():
    def refuses_tiled(q, k, v, **kw):
        if kw.get("kernel") == "tiled":
            raise RuntimeError("no tiles today")
        return attention(q, k, v, **kw)

    tiled = by_name(run_audit(Q, K, V, attention_fn=refuses_tiled))[TILED]
    assert not tiled.passed and tiled.error == np.inf and "no tiles today" in tiled.detail


def test_nan_weights_fail_the_sum():
    def nan_fn(q, k, v, **kw):
        res = attention(q, k, v, **kw)
        w = np.asarray(res.weights, dtype=float).copy()
        w[0] = np.nan
        return SimpleNamespace(weights=w, output=res.output, lse=res.lse)

    assert not by_name(run_audit(Q, K, V, attention_fn=nan_fn))[SUM].passed


# ---------------------------------------------------------------- helpers on bad data


def test_ranking_violation():
    assert ranking_violation([0.5, 0.3, 0.2], [0.4, 0.35, 0.25]) == 0.0
    assert ranking_violation([0.5, 0.3, 0.2], [0.2, 0.3, 0.5]) == pytest.approx(0.3)
    # Ties on either side (underflow at low temperature) are not reversals.
    assert ranking_violation([0.9, 0.1, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]) == 0.0
    assert ranking_violation([0.5, 0.5], [0.9, 0.1]) == 0.0
    assert ranking_violation([[0.6, 0.4], [0.1, 0.9]], [[0.6, 0.4], [0.9, 0.1]]) == 0.8


def test_check_status_labels():
    assert Check("x", True, 0.0, "").status == "pass"
    assert Check("x", False, 1.0, "").status == "fail"
    assert Check("x", True, 0.0, "", applicable=False).status == "n/a"
