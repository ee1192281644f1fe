"""Trained models for the lab, run in NumPy with every head through ``engine.attention``.

>>> from engine import trained
>>> [name for name, _, installed, _ in trained.available() if installed]
['binding']

Torch is needed only to retrain (``python -m engine.trained.train_binding``, the ``train``
extra); loading and running use NumPy and the shipped weights in assets/models.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache

from .binding import BindingModel, HeadRecord, Run, load_arrays, models_dir
from .edits import (
    AblateHead,
    Edit,
    HeadTemperature,
    MaskPosition,
    ReplaceKey,
    RotateQuery,
    ScaleKey,
    ScaleValue,
    SwapValues,
    Window,
)


def _load_binding() -> BindingModel:
    folder = models_dir()
    card_path = folder / "binding.json"
    card = json.loads(card_path.read_text(encoding="utf-8")) if card_path.is_file() else {}
    return BindingModel(load_arrays(folder / "binding.npz"), card)


def _binding_status() -> tuple[bool, str]:
    try:
        models_dir()
    except FileNotFoundError as exc:
        return False, str(exc)
    return True, ""


# name -> (title, loader, status). A packaged language model would add an entry whose status
# reports whether its wheel is installed, and whose loader returns an object with this API.
_REGISTRY: dict[str, tuple[str, Callable[[], object], Callable[[], tuple[bool, str]]]] = {
    "binding": (BindingModel.title, _load_binding, _binding_status),
}


def available() -> list[tuple[str, str, bool, str]]:
    """(name, title, installed, reason) for every model the lab knows about."""
    out = []
    for name, (title, _, status) in _REGISTRY.items():
        installed, reason = status()
        out.append((name, title, installed, reason))
    return out


@cache
def load(name: str = "binding"):
    """The named model, loaded once per process (its arrays are read-only)."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown model {name!r}; available: {', '.join(_REGISTRY)}")
    return _REGISTRY[name][1]()


__all__ = [
    "AblateHead",
    "BindingModel",
    "Edit",
    "HeadRecord",
    "HeadTemperature",
    "MaskPosition",
    "ReplaceKey",
    "RotateQuery",
    "Run",
    "ScaleKey",
    "ScaleValue",
    "SwapValues",
    "Window",
    "available",
    "load",
]
