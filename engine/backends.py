"""Where the attention math runs: NumPy on the CPU, or torch on a CPU, CUDA or MPS device.

The kernels are written once against the Python array API (through ``array-api-compat``), so a
backend here is only two things: an array namespace and a device. Torch is optional: it is
imported lazily, and asking for it when it is missing raises :class:`EngineUnavailable` with the
reason instead of an ImportError traceback.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import importlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import array_api_compat
import array_api_compat.numpy as np_xp
import numpy as np

BACKEND_NAMES = ("numpy", "torch")
TORCH_DEVICES = ("cpu", "cuda", "mps")


class EngineUnavailable(RuntimeError):
    """A backend or device that is valid in general but not usable on this machine."""


@dataclass(frozen=True)
class BackendInfo:
    name: str
    device: str
    available: bool
    reason: str


@dataclass(frozen=True)
class Backend:
    """A resolved backend: the array namespace, the device to put arrays on, and labels."""

    name: str
    device_name: str
    xp: ModuleType
    device: Any = None

    @property
    def is_numpy(self) -> bool:
        return self.name == "numpy"


def _import_torch() -> tuple[ModuleType | None, str]:
    try:
        torch = importlib.import_module("torch")
    except ImportError as exc:  # missing wheel, or a broken install
        return None, f"torch is not installed ({exc}); pip install 'attention-lab[torch]'"
    return torch, ""


def _torch_device_status(torch: ModuleType, device: str) -> tuple[bool, str]:
    if device == "cpu":
        return True, f"torch {torch.__version__} on the CPU"
    if device == "cuda":
        if torch.cuda.is_available():
            return True, f"CUDA device: {torch.cuda.get_device_name(0)}"
        if torch.version.cuda is None:
            return False, f"this torch build ({torch.__version__}) has no CUDA support"
        return False, "torch has CUDA support but no CUDA device is visible"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return True, "Apple Metal (MPS) device"
    return False, "no Apple Metal (MPS) device on this machine"


def backends() -> list[BackendInfo]:
    """Every backend/device pair the engine knows, whether it is usable here, and why (not)."""
    infos = [BackendInfo("numpy", "cpu", True, f"NumPy {np.__version__}")]
    torch, reason = _import_torch()
    for device in TORCH_DEVICES:
        if torch is None:
            infos.append(BackendInfo("torch", device, False, reason))
        else:
            ok, why = _torch_device_status(torch, device)
            infos.append(BackendInfo("torch", device, ok, why))
    return infos


def resolve(backend: str, device: str | None) -> Backend:
    """Turn the user's ``backend``/``device`` arguments into a usable :class:`Backend`.

    ``device=None`` means the best device available: CUDA, then MPS, then the CPU.
    """
    if backend not in BACKEND_NAMES:
        raise ValueError(f"backend must be one of {BACKEND_NAMES}, got {backend!r}")
    if device is not None and device not in TORCH_DEVICES:
        raise ValueError(f"device must be one of {TORCH_DEVICES} or None, got {device!r}")
    if backend == "numpy":
        if device not in (None, "cpu"):
            raise EngineUnavailable(
                f"backend='numpy' runs on the CPU only, got device={device!r}; "
                "use backend='torch' for an accelerator"
            )
        return Backend("numpy", "cpu", np_xp)
    torch, reason = _import_torch()
    if torch is None:
        raise EngineUnavailable(f"backend='torch' is unavailable: {reason}")
    if device is None:
        device = next(d for d in ("cuda", "mps", "cpu") if _torch_device_status(torch, d)[0])
    ok, why = _torch_device_status(torch, device)
    if not ok:
        raise EngineUnavailable(f"backend='torch', device={device!r} is unavailable: {why}")
    xp = importlib.import_module("array_api_compat.torch")
    return Backend("torch", device, xp, torch.device(device))


def is_torch_array(x: Any) -> bool:
    return array_api_compat.is_torch_array(x)


def to_numpy(x: Any) -> Any:
    """A NumPy copy of an array from any backend (None passes through)."""
    if x is None:
        return None
    if is_torch_array(x):
        t = x.detach().cpu()
        if str(t.dtype) == "torch.bfloat16":  # NumPy has no bfloat16
            t = t.float()
        return t.numpy().copy()
    return np.array(x, copy=True)


def host(x: Any) -> np.ndarray:
    """A NumPy array on the host: a NumPy array itself (no copy), a torch tensor copied."""
    return x if isinstance(x, np.ndarray) else to_numpy(x)


# ------------------------------------------------------------------ NumPy's BLAS threads, per thread


def _openblas_local_setter() -> Any:
    """OpenBLAS's per-thread ``openblas_set_num_threads_local`` from NumPy's own wheel, or None.

    The tiled kernel runs heads in Python threads; with OpenBLAS also spawning a thread per
    core inside every matmul, a 2-core machine runs 4 busy threads and gets 2-3x slower. Setting
    the count per calling thread leaves every other thread (and the process default) untouched.
    """
    libs_dir = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs_dir, "*openblas*"))):
        try:
            setter = ctypes.CDLL(path).openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        setter.argtypes = [ctypes.c_int]
        setter.restype = ctypes.c_int
        return setter
    return None


_BLAS_LOCAL = _openblas_local_setter()


def can_pin_blas_threads() -> bool:
    return _BLAS_LOCAL is not None


@contextlib.contextmanager
def blas_threads(count: int) -> Iterator[None]:
    """Run the block with NumPy's BLAS limited to ``count`` threads in *this* thread only."""
    if _BLAS_LOCAL is None:
        yield
        return
    previous = _BLAS_LOCAL(count)
    try:
        yield
    finally:
        _BLAS_LOCAL(previous)


@contextlib.contextmanager
def torch_threads(be: Backend, count: int) -> Iterator[None]:
    """torch's intra-op threads set to ``count`` for the block when ``be`` is torch on the CPU
    (a process-wide setting, put back after); any other backend: nothing changes. A small
    model's products are too small to share: on 2 busy cores, torch's default two threads
    ran the binding model's forward 10x slower than one."""
    if be.is_numpy or be.device_name != "cpu":
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)
