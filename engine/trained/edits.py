"""Interventions on the trained model's heads, as small frozen records.

Each edit names a layer and a head (``None`` = every one, where the class allows it) and acts on
that head's keys, values, mask, query, temperature or output. Keys, values, masks, windows and
ablation act on every query row, so later layers see one consistent change; ``RotateQuery``
acts on the question row only, ``HeadTemperature`` on every row of its head.

Each kind says what it does in its own ``apply``; ``edit_head`` applies a head's edits in the
order given, in one pass, and both forwards (``binding.py``, ``decoder.py``) call it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np

from ..backends import host
from ..head_names import head_name
from ..wording import N_, Amount, Phrase

# `head_name`'s own words as a template (placeholders layer and head): spelled once, in
# engine.head_names, and translated by its one translated twin's entry (app/i18n/head_words.py).
HEAD_NAME = head_name("{layer}", "{head}")


def head_phrase(layer: int, head: int) -> Phrase:
    """`head_name(layer, head)` as a `Phrase`, so a page names the head in its language."""
    return Phrase(HEAD_NAME, {"layer": layer, "head": head})


def _int(name: str, value, *, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")


def _finite(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Edit:
    layer: int | None
    head: int | None

    _every_allowed = False  # may layer/head be None (every layer / head)?

    def __post_init__(self):
        _int("layer", self.layer, allow_none=self._every_allowed)
        _int("head", self.head, allow_none=self._every_allowed)

    # --- validation against a model and a program length
    def positions(self) -> dict[str, int]:
        return {}

    def check(self, n_layers: int, n_heads: int, n_positions: int) -> None:
        kind = type(self).__name__
        if self.layer is not None and not 0 <= self.layer < n_layers:
            raise ValueError(f"{kind}: layer {self.layer} is out of range 0..{n_layers - 1}")
        if self.head is not None and not 0 <= self.head < n_heads:
            raise ValueError(f"{kind}: head {self.head} is out of range 0..{n_heads - 1}")
        for name, pos in self.positions().items():
            if not 0 <= pos < n_positions:
                raise ValueError(
                    f"{kind}: {name} {pos} is out of range 0..{n_positions - 1} "
                    f"(the program has {n_positions} tokens)"
                )

    def targets(self, layer: int, head: int) -> bool:
        return (self.layer is None or self.layer == layer) and (
            self.head is None or self.head == head
        )

    def first_layer(self) -> int:
        return 0 if self.layer is None else self.layer

    def _where(self) -> Phrase:
        # Named as everywhere in the lab (engine.head_names.head_name): "layer 1 head 4". A
        # Phrase, so the page says it in the student's language inside the edit's description.
        if self.layer is not None and self.head is not None:
            return head_phrase(self.layer, self.head)
        if self.layer is not None:
            return Phrase(N_("every head of layer {layer}"), {"layer": self.layer})
        if self.head is None:
            return Phrase(N_("every head"))
        return Phrase(N_("head {head} of every layer"), {"head": self.head})

    def apply(self, head: EditedHead) -> None:
        """Make this edit on one head: its keys, values or mask in place, or note what the
        forward must do around the head's attention."""
        raise NotImplementedError

    def describe(self) -> Phrase:
        """What the edit does, in words: English as `str`, translatable where shown."""
        raise NotImplementedError


@dataclass
class EditedHead:
    """One head of one layer while its edits are applied. Keys, values and the mask are changed
    in place (they are the head's own copies); the rest acts around the attention call."""

    k: Any  # (..., n, d_head) on the forward's backend
    v: Any  # (..., n, d_head)
    legal: np.ndarray  # (n, n) bool: may query row i read key j
    temperature: float = 1.0  # divides the scaled logits
    degrees: float = 0.0  # turns the query row towards its top key (RotateQuery)
    ablated: bool = False  # output zero at every row
    output: np.ndarray | None = None  # (n, d_head) every row's output, replacing the head's own

    def check(self, layer: int, head: int, query: int) -> None:
        """Refuse a query row left with no key (other rows may lose every key: they output
        zero, which is torch's safe softmax)."""
        if not self.legal[query].any():
            raise ValueError(
                f"the edits leave the query position {query} no key to attend to in "
                f"{head_name(layer, head)}: at least one position must stay visible"
            )


def edit_head(
    edits: Iterable[Edit], layer: int, head: int, k, v, legal: np.ndarray, query: int
) -> EditedHead:
    """The edits that target (layer, head), applied in the order given, then checked."""
    edited = EditedHead(k, v, legal)
    for e in edits:
        if e.targets(layer, head):
            e.apply(edited)
    edited.check(layer, head, query)
    return edited


def checked_edits(edits, n_layers: int, n_heads: int, n_positions: int) -> tuple[Edit, ...]:
    """The edits as a tuple, each checked against a model and a text of ``n_positions`` tokens;
    ValueError names the first that does not fit."""
    edits = tuple(edits)
    for e in edits:
        if not isinstance(e, Edit):
            raise ValueError(f"an edit must be one of engine.trained's edits, got {e!r}")
        e.check(n_layers, n_heads, n_positions)
    return edits


@dataclass(frozen=True)
class SwapValues(Edit):
    """Swap the value vectors of positions i and j (keys untouched)."""

    i: int
    j: int

    def __post_init__(self):
        super().__post_init__()
        _int("i", self.i)
        _int("j", self.j)

    def positions(self):
        return {"i": self.i, "j": self.j}

    def apply(self, head):
        head.v[..., [self.i, self.j], :] = head.v[..., [self.j, self.i], :]

    def describe(self):
        # TRANSLATORS: an experiment's edit in the experiments table; {where} names the heads.
        template = N_("swap values of positions {i} and {j} ({where})")
        return Phrase(template, {"i": self.i, "j": self.j, "where": self._where()})


@dataclass(frozen=True)
class ReplaceKey(Edit):
    """Position's key := the source position's key."""

    position: int
    source: int

    def __post_init__(self):
        super().__post_init__()
        _int("position", self.position)
        _int("source", self.source)

    def positions(self):
        return {"position": self.position, "source": self.source}

    def apply(self, head):
        head.k[..., self.position, :] = head.k[..., self.source, :]

    def describe(self):
        template = N_("key of position {position} := key of {source} ({where})")
        values = {"position": self.position, "source": self.source, "where": self._where()}
        return Phrase(template, values)


@dataclass(frozen=True)
class _ScaleRow(Edit):
    """Multiply one position's key or value (`_vector`) by `factor` in one head."""

    position: int
    factor: float
    _vector: ClassVar[str] = "key"

    def __post_init__(self):
        super().__post_init__()
        _int("position", self.position)
        _finite("factor", self.factor)

    def positions(self):
        return {"position": self.position}

    def apply(self, head):
        (head.k if self._vector == "key" else head.v)[..., self.position, :] *= self.factor

    def describe(self):
        if self._vector == "key":
            template = N_("key of position {position} x{factor} ({where})")
        else:
            template = N_("value of position {position} x{factor} ({where})")
        values = {"position": self.position, "factor": Amount(self.factor), "where": self._where()}
        return Phrase(template, values)


@dataclass(frozen=True)
class ScaleKey(_ScaleRow):
    _vector: ClassVar[str] = "key"


@dataclass(frozen=True)
class ScaleValue(_ScaleRow):
    _vector: ClassVar[str] = "value"


@dataclass(frozen=True)
class MaskPosition(Edit):
    """No query may attend to ``position`` (its weight becomes exactly 0)."""

    position: int

    _every_allowed = True

    def __post_init__(self):
        super().__post_init__()
        _int("position", self.position)

    def positions(self):
        return {"position": self.position}

    def apply(self, head):
        head.legal[..., self.position] = False

    def describe(self):
        template = N_("mask position {position} ({where})")
        return Phrase(template, {"position": self.position, "where": self._where()})


@dataclass(frozen=True)
class Window(Edit):
    """A causal window: each query sees only itself and the ``size - 1`` positions before it."""

    size: int

    _every_allowed = True

    def __post_init__(self):
        super().__post_init__()
        _int("size", self.size)
        if self.size < 1:
            raise ValueError(f"Window: size must be >= 1, got {self.size}")

    def apply(self, head):
        n = head.legal.shape[-1]
        rows = np.arange(n)[:, None]
        cols = np.arange(n)[None, :]
        head.legal &= cols > rows - self.size

    def describe(self):
        template = N_("causal window of {size} ({where})")
        return Phrase(template, {"size": self.size, "where": self._where()})


@dataclass(frozen=True)
class HeadTemperature(Edit):
    """Divide the head's scaled logits by ``temperature`` (every row of the head)."""

    temperature: float

    def __post_init__(self):
        super().__post_init__()
        t = _finite("temperature", self.temperature)
        if t <= 0:
            raise ValueError(f"HeadTemperature: temperature must be > 0, got {self.temperature!r}")

    def apply(self, head):
        head.temperature *= float(self.temperature)

    def describe(self):
        template = N_("temperature x{factor} ({where})")
        return Phrase(template, {"factor": Amount(self.temperature), "where": self._where()})


@dataclass(frozen=True)
class RotateQuery(Edit):
    """Rotate the question row's query by ``degrees`` within its head space, in the plane of q
    and the part of the top-weight key orthogonal to q (positive turns q towards that key)."""

    degrees: float

    def __post_init__(self):
        super().__post_init__()
        _finite("degrees", self.degrees)

    def apply(self, head):
        head.degrees += float(self.degrees)

    def describe(self):
        template = N_("rotate the question's query {degrees} degrees ({where})")
        return Phrase(template, {"degrees": Amount(self.degrees), "where": self._where()})


@dataclass(frozen=True)
class AblateHead(Edit):
    """Zero the head's output at every position."""

    def apply(self, head):
        head.ablated = True

    def describe(self):
        return Phrase(N_("ablate {where}"), {"where": self._where()})


@dataclass(frozen=True, eq=False)
class PatchHead(Edit):
    """Replace the head's output at every position with ``output`` (n, d_head), usually the same
    head's output in another run of a sentence of the same length: activation patching."""

    output: np.ndarray
    source: str = ""  # the sentence the output comes from, for the page to name ("": unnamed)

    def __post_init__(self):
        super().__post_init__()
        out = np.array(self.output, dtype=np.float32)
        if out.ndim != 2 or not np.isfinite(out).all():
            raise ValueError(
                "PatchHead: output must be a finite (positions, d_head) array, got shape "
                f"{np.shape(self.output)}"
            )
        out.setflags(write=False)
        object.__setattr__(self, "output", out)

    def check(self, n_layers: int, n_heads: int, n_positions: int) -> None:
        super().check(n_layers, n_heads, n_positions)
        if self.output.shape[0] != n_positions:
            raise ValueError(
                f"PatchHead: the patched output has {self.output.shape[0]} positions and the "
                f"text {n_positions}: patch between texts of the same length in tokens"
            )

    def apply(self, head):
        shape = tuple(head.k.shape[-2:])
        if self.output.shape != shape:
            raise ValueError(
                f"PatchHead: the output has shape {self.output.shape}; this head's is {shape}"
            )
        head.output = self.output

    def describe(self):
        if self.source:  # the sentence is the student's text: never translated
            template = N_("patch the output of {where} from the run of “{sentence}”")
            return Phrase(template, {"where": self._where(), "sentence": self.source})
        return Phrase(N_("patch the output of {where} from another run"), {"where": self._where()})


def turn_query_rows(q, k, weights, query: int, degrees: float, put) -> None:
    """RotateQuery on every sequence of a batch: row ``query`` of q (B, n, d_head), in place,
    turned towards the key its ``weights`` (B, n, n) favour most. ``put`` brings the turned
    NumPy row back to q's backend."""
    for row in range(q.shape[0]):
        top = int(np.argmax(host(weights[row, query])))
        q[row, query] = put(rotate_towards(host(q[row, query]), host(k[row, top]), degrees))


def rotate_towards(q: np.ndarray, key: np.ndarray, degrees: float) -> np.ndarray:
    """q turned by ``degrees`` in the plane of q and key's component orthogonal to q."""
    norm = float(np.linalg.norm(q))
    if norm == 0.0 or degrees == 0.0:
        return q.copy()
    qhat = q / norm
    u = key - (key @ qhat) * qhat
    if np.linalg.norm(u) < 1e-12 * max(1.0, float(np.linalg.norm(key))):
        # The key is parallel to q (or zero): any orthogonal direction will do; take the first
        # basis vector made orthogonal to q, so the choice is reproducible.
        for e in np.eye(len(q)):
            u = e - (e @ qhat) * qhat
            if np.linalg.norm(u) > 1e-6:
                break
    u = u / np.linalg.norm(u)
    theta = math.radians(degrees)
    return norm * (math.cos(theta) * qhat + math.sin(theta) * u)


__all__ = [
    "AblateHead",
    "Edit",
    "EditedHead",
    "HeadTemperature",
    "MaskPosition",
    "PatchHead",
    "ReplaceKey",
    "RotateQuery",
    "ScaleKey",
    "ScaleValue",
    "SwapValues",
    "Window",
    "checked_edits",
    "edit_head",
    "head_phrase",
]
