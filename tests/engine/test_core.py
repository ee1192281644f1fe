"""engine.attention and engine.softmax: the routing contract, result fields and seed numbers."""

import math

import numpy as np
import pytest

from engine import AttentionResult, attention, softmax

SEED_Q = np.array([1.0, 0.0])
SEED_K = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
SEED_V = np.array([[10.0, 0.0], [0.0, 10.0], [-5.0, 5.0]])


def rand(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def naive(q, k, v, *, scale, temperature=1.0, legal=None, bias=None):
    """Straight-line float64 attention used as the oracle in these tests."""
    logits = scale * (q @ np.swapaxes(k, -1, -2))
    if bias is not None:
        logits = logits + bias
    logits = logits / temperature
    if legal is not None:
        logits = np.where(legal, logits, -np.inf)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return w @ v, w


# ------------------------------------------------------------------------------------ seed numbers


def test_softmax_of_the_seed_contest():
    np.testing.assert_allclose(softmax([2.0, 1.0, 0.0]), [0.665, 0.245, 0.090], atol=5e-4)


def test_softmax_ignores_a_shift_and_sharpens_with_a_factor():
    base = softmax([2.0, 1.0, 0.0])
    np.testing.assert_allclose(softmax([102.0, 101.0, 100.0]), base, rtol=1e-12)
    assert softmax([20.0, 10.0, 0.0])[0] > 0.9999


def test_softmax_temperature_axis_and_dtype():
    x = np.array([[2.0, 0.0], [1.0, 3.0]], dtype=np.float32)
    out = softmax(x, axis=0, temperature=2.0)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.sum(axis=0), [1.0, 1.0], rtol=1e-6)
    np.testing.assert_allclose(out[:, 0], softmax([1.0, 0.5]), rtol=1e-6)
    half = softmax(np.array([2.0, 1.0, 0.0], dtype=np.float16))
    assert half.dtype == np.float16
    np.testing.assert_allclose(half, [0.665, 0.245, 0.090], atol=1e-3)


def test_softmax_handles_huge_logits_and_minus_inf():
    np.testing.assert_allclose(softmax([1000.0, 0.0]), [1.0, 0.0])
    assert softmax([0.0, -np.inf]).tolist() == [1.0, 0.0]


@pytest.mark.parametrize(
    ("x", "kwargs", "message"),
    [
        ([1.0, np.nan], {}, "must not contain NaN or \\+inf"),
        ([1.0, np.inf], {}, "must not contain NaN or \\+inf"),
        ([-np.inf, -np.inf], {}, "all -inf"),
        ([1.0, 2.0], {"temperature": 0.0}, "temperature must be a finite number > 0, got 0.0"),
        ([1.0, 2.0], {"temperature": -1}, "temperature must be a finite number > 0"),
        ([1.0, 2.0], {"temperature": math.nan}, "temperature must be a finite number > 0"),
        ([1.0, 2.0], {"axis": 1}, "axis 1 is out of range for x of shape \\(2,\\)"),
        (3.0, {}, "at least one axis"),
        (["a", "b"], {}, "real numbers"),
    ],
)
def test_softmax_errors(x, kwargs, message):
    with pytest.raises(ValueError, match=message):
        softmax(x, **kwargs)


def test_seed_lab_invariants():
    res = attention(SEED_Q, SEED_K, SEED_V, scale=False)
    assert res.weights.shape == (3,) and res.output.shape == (2,)
    np.testing.assert_allclose(res.weights.sum(), 1.0)
    np.testing.assert_allclose(res.weights, softmax([1.0, 0.8, 0.0]))
    swapped = attention(SEED_Q, SEED_K, SEED_V[[1, 0, 2]], scale=False)
    np.testing.assert_array_equal(swapped.weights, res.weights)  # the route stays
    assert not np.allclose(swapped.output, res.output)  # the payload changes


# ------------------------------------------------------------------------------- the computation


@pytest.mark.parametrize("scale", [True, False, 0.37, None])
@pytest.mark.parametrize("temperature", [1.0, 0.25, 3.0])
def test_matches_the_equation(scale, temperature):
    q, k, v = rand(2, 4, 8), rand(2, 6, 8, seed=1), rand(2, 6, 3, seed=2)
    factor = {True: 1 / math.sqrt(8), None: 1 / math.sqrt(8), False: 1.0}.get(scale, scale)
    out, w = naive(q, k, v, scale=factor, temperature=temperature)
    res = attention(q, k, v, scale=scale, temperature=temperature)
    np.testing.assert_allclose(res.output, out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res.weights, w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(res.scores, q @ np.swapaxes(k, -1, -2), rtol=1e-12)
    np.testing.assert_allclose(res.logits, factor * res.scores / temperature, rtol=1e-12)
    assert res.scale == pytest.approx(factor) and res.temperature == temperature


def test_scale_and_temperature_are_separate_controls():
    q, k, v = rand(3, 4), rand(5, 4, seed=1), rand(5, 2, seed=2)
    a = attention(q, k, v, scale=0.5, temperature=1.0)
    b = attention(q, k, v, scale=1.0, temperature=2.0)
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-12)
    # ... but the Jacobian carries 1/temperature, so they are not the same object
    assert not np.allclose(a.jacobian, b.jacobian)


def test_lse_is_logsumexp_of_the_logits():
    q, k, v = rand(3, 4), rand(6, 4, seed=1), rand(6, 2, seed=2)
    mask = rand(3, 6, seed=3) > -0.5
    mask[:, 0] = True
    res = attention(q, k, v, mask=mask, temperature=0.7)
    logits = np.where(mask, q @ k.T / 2 / 0.7, -np.inf)
    expected = np.log(np.sum(np.exp(logits), axis=-1))
    np.testing.assert_allclose(res.lse, expected, rtol=1e-12)
    np.testing.assert_allclose(res.weights, np.exp(res.logits - res.lse[:, None]), atol=1e-15)


def test_batch_dimensions_broadcast_numpy_style():
    q, k, v = rand(2, 1, 4, 3), rand(5, 6, 3, seed=1), rand(1, 6, 2, seed=2)
    res = attention(q, k, v)
    assert res.output.shape == (2, 5, 4, 2) and res.weights.shape == (2, 5, 4, 6)
    one = attention(q[1, 0], k[3], v[0])
    np.testing.assert_allclose(res.output[1, 3], one.output, rtol=1e-12)


def test_one_dimensional_query_squeezes_every_field():
    res = attention(SEED_Q, SEED_K, SEED_V)
    assert res.output.shape == (2,)
    assert res.lse.shape == ()
    for name in ("weights", "logits", "scores"):
        assert getattr(res, name).shape == (3,), name
    assert res.contributions.shape == (3, 2)
    assert res.entropy.shape == () and res.effective_keys.shape == ()
    assert res.jacobian.shape == (3, 3)
    batched = attention(SEED_Q, np.stack([SEED_K, SEED_K[::-1]]), SEED_V)
    assert batched.output.shape == (2, 2) and batched.weights.shape == (2, 3)


def test_integer_and_list_inputs_compute_in_float64():
    res = attention([[1, 0]], [[1, 0], [0, 1]], [[1, 2], [3, 4]])
    assert res.output.dtype == np.float64
    np.testing.assert_allclose(res.weights, [softmax([1 / math.sqrt(2), 0.0])])


# --------------------------------------------------------------------------------- derived views


def test_contributions_sum_to_the_output():
    q, k, v = rand(2, 3, 4), rand(2, 5, 4, seed=1), rand(2, 5, 3, seed=2)
    res = attention(q, k, v)
    assert res.contributions.shape == (2, 3, 5, 3)
    np.testing.assert_allclose(res.contributions.sum(axis=-2), res.output, rtol=1e-12)
    np.testing.assert_allclose(res.contributions, res.weights[..., None] * v[:, None], rtol=1e-12)


def test_entropy_and_effective_keys():
    uniform = attention(np.zeros((1, 2)), rand(4, 2), rand(4, 2, seed=1))
    np.testing.assert_allclose(uniform.entropy, [math.log(4)], rtol=1e-12)
    np.testing.assert_allclose(uniform.effective_keys, [4.0], rtol=1e-12)
    mask = np.array([True, True, False, False])
    half = attention(np.zeros(2), rand(4, 2), rand(4, 2, seed=1), mask=mask)
    np.testing.assert_allclose(half.effective_keys, 2.0, rtol=1e-12)  # 0 log 0 counts as 0
    sharp = attention(SEED_Q, SEED_K, SEED_V, temperature=1e-3)
    assert sharp.entropy < 1e-6 and sharp.effective_keys == pytest.approx(1.0)


def test_jacobian_matches_finite_differences_of_the_weights():
    q, k, v = rand(4), rand(5, 4, seed=1), rand(5, 2, seed=2)
    temperature, eps = 0.6, 1e-6
    res = attention(q, k, v, scale=False, temperature=temperature)
    z = q @ k.T  # logits before the temperature, which the Jacobian differentiates
    numeric = np.empty((5, 5))
    for j in range(5):
        dz = np.zeros(5)
        dz[j] = eps
        numeric[:, j] = (softmax((z + dz) / temperature) - softmax((z - dz) / temperature)) / (
            2 * eps
        )
    np.testing.assert_allclose(res.jacobian, numeric, atol=1e-8)
    np.testing.assert_allclose(res.jacobian.sum(axis=0), 0.0, atol=1e-15)


def test_derived_views_are_computed_lazily_once():
    res = attention(SEED_Q, SEED_K, SEED_V)
    assert "jacobian" not in vars(res)
    first = res.jacobian
    assert "jacobian" in vars(res) and res.jacobian is first


def test_to_numpy_returns_an_independent_copy():
    res = attention(SEED_Q, SEED_K, SEED_V)
    copy = res.to_numpy()
    assert isinstance(copy, AttentionResult)
    np.testing.assert_array_equal(copy.weights, res.weights)
    copy.weights[0] = 42.0
    assert res.weights[0] != 42.0
    np.testing.assert_allclose(copy.entropy, res.entropy)
    assert "AttentionResult(output(2,)" in repr(copy)


# ----------------------------------------------------------------------------------------- masks


def test_bool_mask_gives_exact_zeros_and_renormalises():
    q, k, v = rand(3, 4), rand(5, 4, seed=1), rand(5, 2, seed=2)
    mask = np.array([True, False, True, False, True])
    res = attention(q, k, v, mask=mask)
    assert np.all(res.weights[:, ~mask] == 0.0)
    assert np.all(np.isneginf(res.logits[:, ~mask]))
    kept = attention(q, k[mask], v[mask])
    np.testing.assert_allclose(res.weights[:, mask], kept.weights, rtol=1e-12)
    np.testing.assert_allclose(res.output, kept.output, rtol=1e-12)


def test_float_mask_is_added_before_the_temperature():
    q, k, v = rand(3, 4), rand(5, 4, seed=1), rand(5, 2, seed=2)
    bias = rand(3, 5, seed=3)
    res = attention(q, k, v, mask=bias, temperature=0.5)
    out, w = naive(q, k, v, scale=0.5, temperature=0.5, bias=bias)
    np.testing.assert_allclose(res.weights, w, rtol=1e-12)
    np.testing.assert_allclose(res.output, out, rtol=1e-12)


def test_float_mask_minus_inf_is_a_legal_key_removal():
    q, k, v = rand(3, 4), rand(5, 4, seed=1), rand(5, 2, seed=2)
    bias = np.zeros(5)
    bias[1] = -np.inf
    legal = np.isfinite(bias)
    a = attention(q, k, v, mask=bias)
    b = attention(q, k, v, mask=legal)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert np.all(a.weights[:, 1] == 0.0)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_masked_weights_are_exactly_zero_in_every_dtype(dtype):
    q, k, v = rand(4, 8, dtype=dtype), rand(6, 8, seed=1, dtype=dtype), rand(6, 3, seed=2)
    v = v.astype(dtype)
    mask = np.tril(np.ones((4, 6), bool))
    res = attention(q * 30, k * 30, v, mask=mask)  # large logits: masked keys must stay at 0
    assert res.weights.dtype == dtype and res.output.dtype == dtype
    assert np.all(res.weights[~mask] == 0)
    np.testing.assert_allclose(res.weights.astype(np.float64).sum(-1), 1.0, rtol=1e-2)


def test_large_negative_mask_beyond_the_score_range_still_is_not_a_route():
    q, k, v = rand(2, 4) * 1e3, rand(4, 4, seed=1) * 1e3, rand(4, 2, seed=2)
    mask = np.array([True, True, False, True])
    res = attention(q, k, v, mask=mask)  # logits around -1e4 or lower: a -1e4 mask would leak
    assert np.all(res.weights[:, 2] == 0.0)


def test_finite_minimum_float_mask_is_not_a_full_mask():
    # torch semantics: a row masked with finfo.min everywhere is legal and averages V.
    q, k, v = (rand(3, 4, seed=s, dtype=np.float32) for s in range(3))
    bias = np.zeros((3, 3), np.float32)
    bias[1] = np.finfo(np.float32).min
    for temperature in (1.0, 0.25):  # even when /temperature would overflow float32
        res = attention(q, k, v, mask=bias, temperature=temperature)
        np.testing.assert_allclose(res.output[1], v.mean(axis=0), rtol=1e-5)
        np.testing.assert_allclose(res.weights[1], 1 / 3, rtol=1e-6)


def test_causal_is_top_left_aligned():
    q, k, v = rand(3, 4), rand(5, 4, seed=1), rand(5, 2, seed=2)
    res = attention(q, k, v, is_causal=True)  # Lq < Lk: query i sees keys 0..i
    expected = np.tril(np.ones((3, 5), bool))
    np.testing.assert_array_equal(res.weights > 0, expected)
    np.testing.assert_allclose(res.weights, attention(q, k, v, mask=expected).weights)
    long = attention(rand(6, 4), k, v, is_causal=True)  # Lq > Lk: rows past Lk see every key
    np.testing.assert_array_equal(long.weights > 0, np.tril(np.ones((6, 5), bool)))


# -------------------------------------------------------------------------- fully masked queries


def test_fully_masked_error_names_the_query_positions():
    q, k, v = rand(4, 2), rand(3, 2, seed=1), rand(3, 2, seed=2)
    mask = np.ones((4, 3), bool)
    mask[[1, 3]] = False
    with pytest.raises(ValueError, match=r"2 query row\(s\) have no legal key.*positions 1, 3"):
        attention(q, k, v, mask=mask)
    bias = np.zeros((4, 3))
    bias[2] = -np.inf
    with pytest.raises(ValueError, match="positions 2;"):
        attention(q, k, v, mask=bias)


def test_fully_masked_error_with_batches_and_many_rows():
    mask = np.zeros((2, 12, 3), bool)
    mask[0] = True
    with pytest.raises(ValueError, match=r"12 query row\(s\).*\(1, 0\), \(1, 1\).* and 2 more"):
        attention(rand(2, 12, 2), rand(3, 2, seed=1), rand(3, 2, seed=2), mask=mask)
    with pytest.raises(ValueError, match="positions 1;"):  # 1-D q in a batch of 2: the batch index
        attention(rand(2), rand(2, 3, 2), rand(3, 2), mask=np.array([[True] * 3, [False] * 3]))


def test_fully_masked_single_query_says_so():
    with pytest.raises(ValueError, match=r"1 query row\(s\).*positions \(the only query\)"):
        attention(SEED_Q, SEED_K, SEED_V, mask=np.zeros(3, bool))


def test_results_do_not_change_when_the_caller_edits_inputs_later():
    q, k, v = rand(4, 3), rand(6, 3, seed=1), rand(6, 2, seed=2)
    mask = np.ones((4, 6), bool)
    res = attention(q, k, v, mask=mask, kernel="tiled", block_size=4)
    before = attention(q, k, v, mask=mask)
    mask[:, 0] = False
    k *= 3
    v += 1
    np.testing.assert_allclose(res.weights, before.weights, rtol=1e-12)
    np.testing.assert_allclose(res.contributions, before.contributions, rtol=1e-12)


@pytest.mark.parametrize("encoding", ["bool", "-inf"])
def test_fully_masked_zero_gives_zero_weights_and_output(encoding):
    q, k, v = rand(3, 2), rand(4, 2, seed=1), rand(4, 2, seed=2)
    legal = np.ones((3, 4), bool)
    legal[1] = False
    mask = legal if encoding == "bool" else np.where(legal, 0.0, -np.inf)
    res = attention(q, k, v, mask=mask, fully_masked="zero")
    assert np.all(res.weights[1] == 0.0) and np.all(res.output[1] == 0.0)
    assert res.lse[1] == -np.inf and np.isfinite(res.lse[[0, 2]]).all()
    assert res.entropy[1] == 0.0 and res.effective_keys[1] == 0.0
    assert np.all(res.jacobian[1] == 0.0)
    np.testing.assert_allclose(res.output[[0, 2]], attention(q[[0, 2]], k, v).output)


# ----------------------------------------------------------------------------- validation errors


GOOD = {"q": rand(3, 4), "k": rand(5, 4, seed=1), "v": rand(5, 2, seed=2)}


def call(**overrides):
    args = dict(GOOD)
    args.update(overrides)
    q, k, v = args.pop("q"), args.pop("k"), args.pop("v")
    return attention(q, k, v, **args)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"q": np.array([[np.nan, 0, 0, 0]])},
            r"q must be finite, but 1 of its entries .*\(1, 4\)",
        ),
        ({"k": np.full((5, 4), np.inf)}, r"k must be finite, but 20 of its entries .*\(5, 4\)"),
        ({"v": np.where(np.eye(5, 2) > 0, -np.inf, 0)}, r"v must be finite.*\(5, 2\)"),
        ({"temperature": 0}, "temperature must be a finite number > 0, got 0"),
        ({"temperature": -2.0}, "temperature must be a finite number > 0, got -2.0"),
        ({"temperature": math.inf}, "temperature must be a finite number > 0, got inf"),
        ({"temperature": "hot"}, "temperature must be a finite number > 0, got 'hot'"),
        ({"temperature": True}, "temperature must be a finite number > 0, got True"),
        ({"scale": 0.0}, "scale must be a finite number > 0, got 0.0"),
        ({"scale": -1}, "scale must be a finite number > 0, got -1"),
        ({"scale": math.nan}, "scale must be a finite number > 0, got nan"),
        (
            {"q": rand(3, 5)},
            r"share the key dimension Dk: q \(3, 5\) has Dk=5, k \(5, 4\) has Dk=4",
        ),
        ({"v": rand(6, 2)}, r"one value per key: k \(5, 4\) has Lk=5, v \(6, 2\) has 6"),
        ({"k": rand(4)}, r"expected q .* got q \(3, 4\), k \(4,\), v \(5, 2\)"),
        ({"q": np.float64(1.0)}, r"expected q .* got q \(\)"),
        ({"k": np.zeros((0, 4)), "v": np.zeros((0, 2))}, r"at least one key .* k \(0, 4\)"),
        (
            {"q": rand(2, 3, 4), "k": rand(3, 5, 4)},
            r"batch dimensions of q \(2, 3, 4\), k \(3, 5, 4\) and v \(5, 2\) do not broadcast",
        ),
        ({"mask": np.ones((3, 4), bool)}, r"mask of shape \(3, 4\) does not broadcast .*\(3, 5\)"),
        ({"mask": np.ones((2, 3, 5), bool)}, r"mask of shape \(2, 3, 5\) does not broadcast"),
        ({"mask": np.ones((3, 5), int)}, "mask must be bool .* or floating .* got dtype int64"),
        (
            {"mask": np.full((3, 5), np.nan)},
            r"mask must not contain NaN or \+inf \(shape \(3, 5\)\)",
        ),
        ({"mask": np.full(5, np.inf)}, r"mask must not contain NaN or \+inf"),
        ({"mask": np.ones(5, bool), "is_causal": True}, "either mask or is_causal=True, not both"),
        ({"is_causal": "yes"}, "is_causal must be True or False, got 'yes'"),
        ({"fully_masked": "nan"}, r"fully_masked must be one of \('error', 'zero'\), got 'nan'"),
        (
            {"kernel": "flash"},
            r"kernel must be one of \('auto', 'reference', 'tiled'\), got 'flash'",
        ),
        ({"block_size": 0}, "block_size must be a positive integer or None, got 0"),
        ({"block_size": 2.5}, "block_size must be a positive integer or None, got 2.5"),
        ({"block_size": 4, "kernel": "reference"}, "block_size applies to kernel='tiled'"),
        ({"backend": "jax"}, r"backend must be one of \('numpy', 'torch'\), got 'jax'"),
        ({"device": "tpu"}, r"device must be one of \('cpu', 'cuda', 'mps'\) or None, got 'tpu'"),
        ({"q": np.array([["a"] * 4])}, "q must hold real numbers, got dtype <U1"),
        ({"v": np.ones((5, 2), complex)}, "v must hold real numbers, got dtype complex128"),
    ],
)
def test_every_validation_error_names_the_problem(overrides, message):
    with pytest.raises(ValueError, match=message):
        call(**overrides)


def test_nan_in_a_masked_key_is_still_refused():
    k = rand(5, 4, seed=1)
    k[2, 0] = np.nan
    with pytest.raises(ValueError, match="k must be finite, but 1 of its entries"):
        call(k=k, mask=np.array([True, True, False, True, True]))


def test_numpy_integers_are_accepted_as_block_size_and_controls():
    res = call(block_size=np.int64(2), temperature=np.float32(0.5), scale=np.float64(0.25))
    assert res.kernel == "tiled" and res.temperature == 0.5 and res.scale == 0.25


def test_overflowing_dot_products_are_reported():
    q = np.full((1, 4), 1e20, np.float32)
    k = np.full((2, 4), 1e20, np.float32)
    with pytest.raises(ValueError, match=r"logits overflowed float32: q \(1, 4\) \. k \(2, 4\)"):
        attention(q, k, np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match=r"scale / temperature = 5e\+307"):
        attention(np.ones((1, 4)), np.ones((2, 4)), np.ones((2, 2)), temperature=1e-308)


def test_numpy_backend_refuses_an_accelerator():
    from engine import EngineUnavailable

    with pytest.raises(EngineUnavailable, match="backend='numpy' runs on the CPU only"):
        call(device="cuda")
    assert issubclass(EngineUnavailable, RuntimeError)


def test_missing_torch_is_reported_not_raised(monkeypatch):
    import importlib
    import sys

    from engine import EngineUnavailable, backends

    real_import = importlib.import_module

    def no_torch(name, *args, **kwargs):
        if name == "torch":
            raise ImportError("No module named 'torch'")
        return real_import(name, *args, **kwargs)

    engine_backends = sys.modules["engine.backends"]
    monkeypatch.setattr(engine_backends.importlib, "import_module", no_torch)
    infos = backends()
    assert [(b.name, b.device, b.available) for b in infos] == [
        ("numpy", "cpu", True),
        ("torch", "cpu", False),
        ("torch", "cuda", False),
        ("torch", "mps", False),
    ]
    assert all("torch is not installed" in b.reason for b in infos[1:])
    with pytest.raises(EngineUnavailable, match="backend='torch' is unavailable: torch is not"):
        call(backend="torch")


def test_one_dimensional_query_takes_a_per_key_mask():
    q, k, v = rand(4), rand(5, 4, seed=1), rand(5, 2, seed=2)
    res = attention(q, k, v, mask=np.array([True, False, True, True, False]))
    assert res.weights.shape == (5,) and res.weights[1] == 0 and res.weights[4] == 0
    with pytest.raises(
        ValueError, match=r"mask of shape \(4,\) does not broadcast .*\(5,\) \(\.\.\., Lk\)"
    ):
        attention(q, k, v, mask=np.ones(4, bool))
