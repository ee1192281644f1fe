"""Attention Lab's engine: exact, validated scaled dot-product attention (no UI imports).

>>> from engine import attention
>>> res = attention([1.0, 0.0], [[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [3.0, 4.0]], scale=False)
>>> res.weights.round(3).tolist()
[0.731, 0.269]
"""

from . import audit, diagnosis, dimension, interventions, scenarios  # noqa: F401 - toolkit
from .backends import BackendInfo, EngineUnavailable, backends
from .core import AttentionResult, attention, softmax

__all__ = [
    "AttentionResult",
    "BackendInfo",
    "EngineUnavailable",
    "attention",
    "backends",
    "softmax",
]
