"""A model's weights placed on one backend and device, and host arrays brought to them there.

Every trained model places its weights with `PlacedWeights.of` (once per process and device,
`model_base.TrainedModel.weights_on`) and its forward reads them from the result: ``w`` by name,
``layers[i]`` for a model whose layers share one set of names (the Llama's ``wqkv3``, ``wo3``,
... as ``layers[3]["wqkv"]``), and ``put`` for what the run brings from the host (a residual
stream, a mask, an edit's vector). A module of its own, below the models and the maps, so that
``decoder.py`` and ``backward.py`` can read it too.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..backends import Backend


def on_device(a: np.ndarray, be: Backend, dtype=None):
    """A host array as ``be``'s array: NumPy's is the array itself; torch on the CPU wraps it
    without a copy, an accelerator gets one copy (in ``dtype`` when given)."""
    if be.is_numpy:
        return a
    import torch

    # The read-only weights are shared, never written: torch's warning about a non-writable
    # buffer does not apply, and on the CPU this makes no copy.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(np.ascontiguousarray(a)).to(device=be.device, dtype=dtype)


@dataclass(frozen=True)
class PlacedWeights:
    """The weights on one backend and device, as a forward reads them."""

    backend: Backend
    w: dict[str, Any]  # every weight by its name
    dtype: Any  # the floating dtype there: what `put` gives a host float array
    layers: tuple[dict[str, Any], ...] = ()  # layer i's weights by their name without the i

    @classmethod
    def of(
        cls, arrays: Mapping[str, np.ndarray], be: Backend, layer_names: Sequence[str] = ()
    ) -> PlacedWeights:
        """``arrays`` on ``be``, in their own precision (Apple's MPS has no float64: float32
        there). ``layer_names`` (such as "wqkv") gathers ``{name}{i}`` into ``layers[i]``."""
        dtype = np.result_type(*(a.dtype for a in arrays.values()))
        if be.is_numpy:
            w = dict(arrays)
        else:
            import torch

            single = be.device_name == "mps" or dtype == np.float32
            dtype = torch.float32 if single else torch.float64
            w = {key: on_device(a, be, dtype) for key, a in arrays.items()}
        return cls(be, w, dtype, _by_layer(w, layer_names))

    @property
    def attention_options(self) -> dict[str, str]:
        """engine.attention's backend options for arrays placed here."""
        if self.backend.is_numpy:
            return {"backend": "numpy"}
        return {"backend": "torch", "device": self.backend.device_name}

    def put(self, a):
        """A host array on this backend, as a copy: floats in the weights' dtype, booleans and
        integers as they are. NumPy: the array itself."""
        if self.backend.is_numpy:
            return a
        import torch

        a = np.asarray(a)
        dtype = self.dtype if a.dtype.kind == "f" else None
        return torch.tensor(a, dtype=dtype, device=self.backend.device)

    def index(self, ids: np.ndarray):
        """Token ids as an index into the placed embedding."""
        if self.backend.is_numpy:
            return ids
        import torch

        return torch.as_tensor(ids, device=self.backend.device)

    def concat(self, a, b):
        """``a`` and ``b`` (placed here) joined along the first axis."""
        if self.backend.is_numpy:
            return np.concatenate([a, b])
        import torch

        return torch.cat([a, b])


def _by_layer(w: dict[str, Any], names: Sequence[str]) -> tuple[dict[str, Any], ...]:
    """``{name}{i}`` gathered into one dict per layer i, for as many layers as ``w`` has."""
    layers: list[dict[str, Any]] = []
    while names and f"{names[0]}{len(layers)}" in w:
        i = len(layers)
        layers.append({name: w[f"{name}{i}"] for name in names if f"{name}{i}" in w})
    return tuple(layers)
