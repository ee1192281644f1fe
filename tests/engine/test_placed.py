"""One placed-weights class for every model (engine/trained/placed.py), and the one thread every
forward runs in (TrainedModel.running_on)."""

import numpy as np
import pytest

from engine import trained
from engine.backends import resolve
from engine.trained.placed import PlacedWeights

ARRAYS = {
    "embed": np.ones((5, 4), np.float32),
    "wqkv0": np.zeros((4, 12), np.float32),
    "wo0": np.zeros((4, 4), np.float32),
    "wqkv1": np.ones((4, 12), np.float32),
    "wo1": np.ones((4, 4), np.float32),
    "bqkv1": np.ones(12, np.float32),
}


def test_weights_named_per_layer_are_gathered_by_layer():
    placed = PlacedWeights.of(ARRAYS, resolve("numpy", None), ("wqkv", "wo", "bqkv"))
    assert len(placed.layers) == 2
    assert set(placed.layers[0]) == {"wqkv", "wo"}  # a weight a layer lacks is left out
    assert placed.layers[1]["bqkv"] is ARRAYS["bqkv1"]
    assert placed.w["wo1"] is ARRAYS["wo1"] and placed.layers[1]["wo"] is placed.w["wo1"]
    assert PlacedWeights.of(ARRAYS, resolve("numpy", None)).layers == ()


def test_numpy_placement_is_the_arrays_themselves():
    placed = PlacedWeights.of(ARRAYS, resolve("numpy", None))
    residual = np.arange(4.0)
    assert placed.put(residual) is residual and placed.dtype == np.float32
    assert placed.attention_options == {"backend": "numpy"}


def test_torch_shares_the_weights_and_copies_what_it_is_given_in_their_precision():
    torch = pytest.importorskip("torch")
    placed = PlacedWeights.of(ARRAYS, resolve("torch", "cpu"), ("wqkv", "wo"))
    assert placed.dtype == torch.float32
    assert placed.layers[1]["wqkv"].data_ptr() == ARRAYS["wqkv1"].ctypes.data  # a view
    host = np.arange(4.0)  # float64: put in the weights' float32
    tensor = placed.put(host)
    assert tensor.dtype == torch.float32
    tensor[0] = 9.0
    assert host[0] == 0.0  # a copy: the host array is never written through
    assert placed.put(np.array([True, False])).dtype == torch.bool
    assert placed.attention_options == {"backend": "torch", "device": "cpu"}


def test_every_forward_runs_in_one_torch_thread_and_gives_the_count_back():
    torch = pytest.importorskip("torch")
    model = trained.load("binding")
    before = torch.get_num_threads()
    with model.running_on("torch:cpu") as placed:
        assert torch.get_num_threads() == 1
        assert placed is model.weights_on("torch", "cpu")
    assert torch.get_num_threads() == before
