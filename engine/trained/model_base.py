"""What every trained model shares, written once: its weights placed on a backend and device once
per process (`weights_on`, `placed_for` reading a backend string such as "torch:cuda"), every
forward run on those weights in one thread (`running_on`, `forward_one`), the edits checked
against its shape (`check_edits`), and the maps as methods (`Maps`). A model adds how its
weights are laid out on a device (`_place`, a `placed.PlacedWeights`) and its forward on them
(`forward_placed`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from ..backends import Backend, blas_threads, resolve, torch_threads
from .copying import HeadScores, head_scores
from .edits import Edit, checked_edits
from .maps import Maps
from .placed import PlacedWeights
from .runs import Pass


class TrainedModel(Maps):
    """The base of the binding model and SmolLM2. A subclass sets ``n_layers`` and ``n_heads``
    and defines ``_place(backend)`` (its weights laid out on one backend and device) and
    ``forward_placed`` (one sequence through the model on them)."""

    n_layers: int
    n_heads: int

    def __init__(self) -> None:
        self._placed: dict[tuple[str, str], PlacedWeights] = {}
        self._placing = threading.Lock()

    def _place(self, be: Backend) -> PlacedWeights:
        raise NotImplementedError

    def weights_on(self, backend: str = "numpy", device: str | None = None) -> PlacedWeights:
        """The weights as ``backend`` arrays on ``device``, made once per process and shared."""
        be = resolve(backend, device)
        key = (be.name, be.device_name)
        with self._placing:
            placed = self._placed.get(key)
            if placed is None:
                placed = self._placed[key] = self._place(be)
        return placed

    def placed_for(self, backend: str) -> PlacedWeights:
        """`weights_on` for a run's backend string: "numpy", "torch" (its best device) or
        "torch:cpu" / "torch:cuda"."""
        name, _, device = backend.partition(":")
        return self.weights_on(name, device or None)

    @contextmanager
    def running_on(self, backend: str) -> Iterator[PlacedWeights]:
        """The weights placed for ``backend``, with NumPy's BLAS and torch's CPU pool held to one
        thread while the block runs: a model's products are too small to gain from sharing
        them, and the page's other work and the other sessions want the other cores. Every
        forward and backward of a model runs inside this."""
        placed = self.placed_for(backend)
        with blas_threads(1), torch_threads(placed.backend, 1):
            yield placed

    def forward_one(
        self, ids, edits=(), start=0, resid=None, heads=None, query=None, backend="numpy"
    ) -> Pass:
        """One sequence (ids (n,)) through the model with ``edits``, as `Run` asks for it: with
        ``start`` > 0 the layers below it come from ``resid`` and ``heads``; ``query`` is the
        position whose row the records keep and whose next token is predicted (default: the
        last); ``backend`` is "numpy", "torch" (its default device) or "torch:cpu" /
        "torch:cuda"."""
        with self.running_on(backend) as placed:
            ids = np.asarray(ids)
            return self.forward_placed(placed, ids, tuple(edits), start, resid, heads, query)

    def forward_placed(
        self, placed: PlacedWeights, ids: np.ndarray, edits, start, resid, heads, query
    ) -> Pass:
        """`forward_one` on weights already placed, in the thread `running_on` pinned."""
        raise NotImplementedError

    def logits_everywhere(self, final: np.ndarray) -> np.ndarray:
        """The next-token logits (n, vocab) at every position, from the residual stream after
        the last layer; a model that predicts only at its question position has none."""
        raise ValueError(
            f"{self.title} predicts only the answer to its question, not every next token: "
            "it has no loss per token"
        )

    def head_scores(self, text: str, backend: str = "numpy") -> list[HeadScores]:
        """Every head's copying scores on ``text`` (engine/trained/copying.py), from one run."""
        return head_scores(self.run(text, backend=backend))

    def check_edits(self, edits, n: int) -> tuple[Edit, ...]:
        """The edits as a tuple, or ValueError naming one that does not fit n tokens."""
        return checked_edits(edits, self.n_layers, self.n_heads, n)
