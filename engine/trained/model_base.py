"""What every trained model shares, written once: its weights placed on a backend and device once
per process (`weights_on`, `placed_for` reading a backend string such as "torch:cuda"), a host
array put on a device without a copy where none is needed (`on_device`), the edits checked
against its shape (`check_edits`), and the maps as methods (`Maps`). A model adds how its
weights are laid out on a device (`_place`) and its forward."""

from __future__ import annotations

import threading
import warnings
from typing import Any

import numpy as np

from ..backends import Backend, resolve
from .edits import Edit, checked_edits
from .maps import Maps


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


class TrainedModel(Maps):
    """The base of the binding model and SmolLM2. A subclass sets ``n_layers`` and ``n_heads``
    and defines ``_place(backend)``: its weights laid out on one backend and device."""

    n_layers: int
    n_heads: int

    def __init__(self) -> None:
        self._placed: dict[tuple[str, str], Any] = {}
        self._placing = threading.Lock()

    def _place(self, be: Backend) -> Any:
        raise NotImplementedError

    def weights_on(self, backend: str = "numpy", device: str | None = None) -> Any:
        """The weights as ``backend`` arrays on ``device``, made once per process and shared."""
        be = resolve(backend, device)
        key = (be.name, be.device_name)
        with self._placing:
            placed = self._placed.get(key)
            if placed is None:
                placed = self._placed[key] = self._place(be)
        return placed

    def placed_for(self, backend: str) -> Any:
        """`weights_on` for a run's backend string: "numpy", "torch" (its best device) or
        "torch:cpu" / "torch:cuda"."""
        name, _, device = backend.partition(":")
        return self.weights_on(name, device or None)

    def check_edits(self, edits, n: int) -> tuple[Edit, ...]:
        """The edits as a tuple, or ValueError naming one that does not fit n tokens."""
        return checked_edits(edits, self.n_layers, self.n_heads, n)
