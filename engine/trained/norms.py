"""The binding model's layer norm, shared by its forward (binding.py) and its hand-written
backward (backward.py), so that neither imports the other for it."""

from __future__ import annotations

import array_api_compat

LN_EPS = 1e-5  # nn.LayerNorm's default, as binding_torch.py trains it


def layer_norm(x, weight, bias, eps: float = LN_EPS):
    """(x - mean) / sqrt(var + eps) * weight + bias along the last axis, NumPy or torch."""
    xp = array_api_compat.array_namespace(x)
    mu = xp.mean(x, axis=-1, keepdims=True)
    var = xp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / xp.sqrt(var + eps) * weight + bias
