"""Load each model once per process, in the foreground or in a background thread, with progress
a page can show while it waits (a language model takes seconds to dequantise).

The registry in ``engine.trained`` passes its (loader, status) pair; a loader that accepts a
``progress(fraction, message)`` callback reports through it, any other is shown at 0 then 1.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from dataclasses import dataclass


class ModelNotInstalled(ValueError):
    """The model's packages are missing; the message names the install command."""


@dataclass
class _State:
    fraction: float = 0.0
    message: str = "not loaded"
    error: str = ""
    model: object = None
    thread: threading.Thread | None = None


_GUARD = threading.Lock()
_LOCKS: dict[str, threading.Lock] = {}
_STATES: dict[str, _State] = {}


def _state(name: str) -> _State:
    with _GUARD:
        if name not in _STATES:
            _STATES[name] = _State()
            _LOCKS[name] = threading.Lock()
        return _STATES[name]


def load_once(name: str, loader: Callable, status: Callable[[], tuple[bool, str]]) -> object:
    """The model, loaded by the first caller; a concurrent caller waits for that load."""
    st = _state(name)
    if st.model is not None:
        return st.model
    with _LOCKS[name]:
        if st.model is not None:
            return st.model
        installed, reason = status()
        if not installed:
            st.error = reason
            st.message = "not installed"
            raise ModelNotInstalled(f"{name}: {reason}")

        def progress(fraction: float, message: str) -> None:
            st.fraction = max(0.0, min(1.0, float(fraction)))
            st.message = message

        st.error = ""
        progress(0.0, "loading")
        try:
            takes_progress = "progress" in inspect.signature(loader).parameters
            model = loader(progress=progress) if takes_progress else loader()
        except BaseException as exc:
            st.error = f"{type(exc).__name__}: {exc}"
            st.message = "failed"
            raise
        st.model = model
        progress(1.0, "ready")
        return model


def start(name: str, loader: Callable, status: Callable[[], tuple[bool, str]]) -> None:
    """Begin loading in a daemon thread (no-op when loaded or already loading)."""
    st = _state(name)
    with _GUARD:
        if st.model is not None or (st.thread is not None and st.thread.is_alive()):
            return

        def work():
            try:
                load_once(name, loader, status)
            except BaseException:  # noqa: S110 - recorded in the state for loading_status
                pass

        st.thread = threading.Thread(target=work, name=f"load-{name}", daemon=True)
        st.thread.start()


def status_of(name: str, status: Callable[[], tuple[bool, str]]) -> tuple[float, str, bool, str]:
    """(fraction 0..1, message, ready, error) for the named model."""
    st = _state(name)
    if st.model is not None:
        return 1.0, "ready", True, ""
    if not st.error and st.fraction == 0.0 and st.message == "not loaded":
        installed, reason = status()
        if not installed:
            return 0.0, "not installed", False, reason
    return st.fraction, st.message, False, st.error
