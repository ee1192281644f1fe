"""The torch backend against torch.nn.functional.scaled_dot_product_attention and against NumPy."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

from engine import attention, backends  # noqa: E402
from engine.tolerance import check_close  # noqa: E402

pytestmark = pytest.mark.torch
sdpa = torch.nn.functional.scaled_dot_product_attention


def rand(*shape, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)


def qkv(n_q=7, n_k=11, d=16, d_v=8, batch=(2, 3), dtype=torch.float32):
    return (
        rand(*batch, n_q, d, seed=1, dtype=dtype),
        rand(*batch, n_k, d, seed=2, dtype=dtype),
        rand(*batch, n_k, d_v, seed=3, dtype=dtype),
    )


def on_torch(q, k, v, kernel, block_size, **kwargs):
    """The engine's torch backend; block_size only goes with the tiled kernel."""
    if kernel == "tiled":
        kwargs["block_size"] = block_size
    return attention(q, k, v, backend="torch", kernel=kernel, **kwargs)


def golden_of(*tensors):
    return [t.double() for t in tensors]


def assert_torch_rule(test, golden, reference, what=""):
    passed, error, bound = check_close(test, golden, reference)
    assert passed, f"{what}: error {error:.3g} exceeds bound {bound:.3g}"


def test_backends_lists_torch_devices_with_reasons():
    infos = {(b.name, b.device): b for b in backends()}
    assert infos[("numpy", "cpu")].available
    assert infos[("torch", "cpu")].available
    assert torch.__version__ in infos[("torch", "cpu")].reason
    cuda = infos[("torch", "cuda")]
    assert cuda.available == torch.cuda.is_available()
    if not cuda.available:
        assert "CUDA" in cuda.reason


@pytest.mark.hardware("no-cuda")
def test_unavailable_device_is_a_clear_error():
    from engine import EngineUnavailable

    with pytest.raises(EngineUnavailable, match="backend='torch', device='cuda' is unavailable"):
        attention(np.ones((1, 2)), np.ones((1, 2)), np.ones((1, 2)), backend="torch", device="cuda")


def test_results_are_tensors_on_the_device_and_to_numpy_copies():
    q, k, v = qkv()
    res = attention(q, k, v, backend="torch", device="cpu")
    assert isinstance(res.output, torch.Tensor) and res.output.device.type == "cpu"
    assert res.backend == "torch" and res.device == "cpu"
    for name in ("weights", "logits", "scores", "lse", "entropy", "effective_keys"):
        assert isinstance(getattr(res, name), torch.Tensor), name
    copy = res.to_numpy()
    assert isinstance(copy.output, np.ndarray) and isinstance(copy.jacobian, np.ndarray)
    np.testing.assert_array_equal(copy.weights, res.weights.numpy())
    default = attention(q, k, v, backend="torch")  # device=None: the best available
    assert default.device == ("cuda" if torch.cuda.is_available() else default.device)


@pytest.mark.parametrize("kernel", ["reference", "tiled"])
@pytest.mark.parametrize("scale", [None, 0.3, 2.0])
def test_plain_and_scaled_match_sdpa(kernel, scale):
    q, k, v = qkv()
    res = on_torch(q, k, v, kernel, 5, scale=scale)
    expected = sdpa(q, k, v, scale=scale)
    golden = sdpa(*golden_of(q, k, v), scale=scale)
    assert_torch_rule(res.output, golden, expected, f"{kernel}, scale {scale}")


@pytest.mark.parametrize("kernel", ["reference", "tiled"])
def test_bool_and_float_masks_match_sdpa(kernel):
    q, k, v = qkv()
    legal = rand(7, 11, seed=4) > -0.3
    legal[:, 0] = True
    bias = rand(2, 1, 7, 11, seed=5)
    for mask in (legal, bias, torch.where(legal, bias, -math.inf)):
        res = on_torch(q, k, v, kernel, 4, mask=mask)
        expected = sdpa(q, k, v, attn_mask=mask)
        golden = sdpa(
            *golden_of(q, k, v), attn_mask=mask if mask.dtype == torch.bool else mask.double()
        )
        assert_torch_rule(res.output, golden, expected, f"{kernel}, mask {mask.dtype}")


@pytest.mark.parametrize("kernel", ["reference", "tiled"])
@pytest.mark.parametrize(("n_q", "n_k"), [(3, 9), (9, 3), (6, 6)])
def test_causal_with_unequal_lengths_matches_sdpa_top_left(kernel, n_q, n_k):
    q, k, v = qkv(n_q, n_k)
    res = on_torch(q, k, v, kernel, 2, is_causal=True)
    with sdpa_kernel(SDPBackend.MATH):
        expected = sdpa(q, k, v, is_causal=True)
        golden = sdpa(*golden_of(q, k, v), is_causal=True)
    assert_torch_rule(res.output, golden, expected, f"causal {n_q}x{n_k}")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("kernel", ["reference", "tiled"])
def test_half_precisions_compute_in_float32_and_match_sdpa(dtype, kernel):
    q, k, v = qkv(dtype=dtype)
    legal = rand(7, 11, seed=4) > -0.5
    legal[:, 3] = True
    res = on_torch(q, k, v, kernel, 3, mask=legal)
    assert res.output.dtype == dtype and res.weights.dtype == dtype
    assert torch.all(res.weights[..., ~legal] == 0)
    with sdpa_kernel(SDPBackend.MATH):
        expected = sdpa(q, k, v, attn_mask=legal)
    golden = sdpa(*(t.float() for t in (q, k, v)), attn_mask=legal)  # torch's golden for halves
    assert_torch_rule(res.output, golden, expected, str(dtype))


@pytest.mark.parametrize("encoding", ["bool", "-inf"])
@pytest.mark.parametrize("kernel", ["reference", "tiled"])
def test_fully_masked_rows_zero_policy_matches_sdpa(encoding, kernel):
    q, k, v = qkv()
    legal = torch.ones(7, 11, dtype=torch.bool)
    legal[2] = False
    mask = legal if encoding == "bool" else torch.zeros(7, 11).masked_fill(~legal, -math.inf)
    with pytest.raises(ValueError, match="positions .*2"):
        attention(q, k, v, mask=mask, backend="torch")
    res = on_torch(q, k, v, kernel, 3, mask=mask, fully_masked="zero")
    with sdpa_kernel(SDPBackend.MATH):
        expected = sdpa(q, k, v, attn_mask=mask)
    assert torch.all(expected[..., 2, :] == 0)  # torch >= 2.5 safe softmax
    assert torch.all(res.output[..., 2, :] == 0)
    golden = sdpa(*golden_of(q, k, v), attn_mask=mask if encoding == "bool" else mask.double())
    assert_torch_rule(res.output, golden, expected, encoding)


@pytest.mark.parametrize("kernel", ["reference", "tiled"])
def test_finite_minimum_mask_averages_values_like_sdpa(kernel):
    q, k, v = qkv()
    mask = torch.zeros(7, 11)
    mask[4] = torch.finfo(torch.float32).min
    res = on_torch(q, k, v, kernel, 4, mask=mask)
    expected = sdpa(q, k, v, attn_mask=mask)
    torch.testing.assert_close(expected[..., 4, :], v.mean(dim=-2))
    torch.testing.assert_close(res.output[..., 4, :].cpu(), v.mean(dim=-2))
    golden = sdpa(*golden_of(q, k, v), attn_mask=mask.double())
    assert_torch_rule(res.output, golden, expected, "finfo.min")


@pytest.mark.parametrize("kernel", ["reference", "tiled"])
def test_torch_backend_equals_numpy_backend(kernel):
    q, k, v = (t.double().numpy() for t in qkv(n_q=30, n_k=70))
    legal = rand(30, 70, seed=6).numpy() > -1
    legal[:, 0] = True
    kwargs = {"mask": legal, "temperature": 0.7, "kernel": kernel}
    if kernel == "tiled":
        kwargs["block_size"] = 9
    a = attention(q, k, v, **kwargs)
    b = attention(q, k, v, backend="torch", **kwargs).to_numpy()
    for name in ("output", "lse", "weights", "logits", "entropy", "jacobian", "contributions"):
        np.testing.assert_allclose(getattr(b, name), getattr(a, name), rtol=1e-10, atol=1e-13)


def test_torch_validation_errors_match_numpy():
    q, k, v = qkv()
    bad = q.clone()
    bad[0, 0, 0, 0] = math.nan
    with pytest.raises(
        ValueError, match=r"q must be finite, but 1 of its entries .*\(2, 3, 7, 16\)"
    ):
        attention(bad, k, v, backend="torch")
    with pytest.raises(ValueError, match=r"mask of shape \(7, 10\) does not broadcast"):
        attention(q, k, v, mask=torch.ones(7, 10, dtype=torch.bool), backend="torch")
    with pytest.raises(ValueError, match="mask must be bool .* got dtype torch.int64"):
        attention(q, k, v, mask=torch.ones(7, 11, dtype=torch.int64), backend="torch")
    with pytest.raises(ValueError, match="v must hold real numbers"):
        attention(q, k, v.to(torch.complex64), backend="torch")


def test_numpy_backend_accepts_cpu_tensors_and_softmax_accepts_tensors():
    from engine import softmax

    q, k, v = qkv()
    res = attention(q, k, v)
    assert isinstance(res.output, np.ndarray) and res.output.dtype == np.float32
    out = softmax(torch.tensor([2.0, 1.0, 0.0]))
    assert isinstance(out, torch.Tensor)
    torch.testing.assert_close(out, torch.tensor([0.665241, 0.244728, 0.090031]))
    half = softmax(torch.tensor([2.0, 1.0, 0.0], dtype=torch.bfloat16))
    assert half.dtype == torch.bfloat16


def test_mps_refuses_float64_by_name():
    import sys

    core = sys.modules["engine.core"]
    be = sys.modules["engine.backends"].Backend("torch", "mps", None)
    with pytest.raises(ValueError, match="the MPS device has no float64"):
        core._dtypes(be, torch.zeros(1, dtype=torch.float64), torch.zeros(1))
    assert core._dtypes(be, torch.zeros(1, dtype=torch.float16)) == (torch.float32, torch.float16)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_finite_minimum_mask_matches_sdpa(dtype):
    # Both compute in float32: finfo(bfloat16).min is as large as float32's and swallows the
    # scores (mean of V, as in float32), while finfo(float16).min = -65504 is just a constant
    # shift of the row, which softmax ignores. Never -inf, never NaN.
    q, k, v = qkv(dtype=dtype)
    q, k = q * 4, k * 4
    mask = torch.zeros(7, 11, dtype=dtype)
    mask[1] = torch.finfo(dtype).min
    res = attention(q, k, v, mask=mask, backend="torch")
    assert torch.isfinite(res.output).all()
    with sdpa_kernel(SDPBackend.MATH):
        expected = sdpa(q, k, v, attn_mask=mask)
    golden = sdpa(*(t.float() for t in (q, k, v)), attn_mask=mask.float())
    assert_torch_rule(res.output, golden, expected, str(dtype))
    if dtype == torch.bfloat16:
        mean = v.float().mean(dim=-2).to(dtype)
        torch.testing.assert_close(res.output[..., 1, :].cpu(), mean, atol=2e-2, rtol=2e-2)
    else:
        unmasked = attention(q, k, v, backend="torch").output
        torch.testing.assert_close(res.output[..., 1, :], unmasked[..., 1, :], atol=2e-3, rtol=1e-2)
