"""The binding model in torch: the definition used for training and as the tests' reference.

Only the training script and the tests import this module; the app runs the NumPy forward in
``binding.py``, which reads the same weight names.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from .binding_task import ANSWERS, MAX_LEN, VOCAB


class BindingModel(nn.Module):
    """Attention-only decoder: embeddings + learned positions, ``n_layers`` pre-LN causal
    multi-head self-attention blocks with residuals, a final LayerNorm and an unembedding onto
    the answer vocabulary. Projections carry no bias, so a head is exactly q.k and w @ v."""

    def __init__(self, d_model=64, n_layers=2, n_heads=2, d_head=32):
        super().__init__()
        self.d_model, self.n_layers, self.n_heads, self.d_head = d_model, n_layers, n_heads, d_head
        self.embed = nn.Embedding(len(VOCAB), d_model)
        self.pos = nn.Embedding(MAX_LEN, d_model)
        self.ln = nn.ModuleList(nn.LayerNorm(d_model) for _ in range(n_layers))
        inner = n_heads * d_head
        self.wq = nn.ModuleList(nn.Linear(d_model, inner, bias=False) for _ in range(n_layers))
        self.wk = nn.ModuleList(nn.Linear(d_model, inner, bias=False) for _ in range(n_layers))
        self.wv = nn.ModuleList(nn.Linear(d_model, inner, bias=False) for _ in range(n_layers))
        self.wo = nn.ModuleList(nn.Linear(inner, d_model, bias=False) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.unembed = nn.Linear(d_model, len(ANSWERS))

    def forward(self, ids: torch.Tensor, ablate: tuple[tuple[int, int], ...] = ()) -> torch.Tensor:
        """Answer logits at every position, (B, L, len(ANSWERS))."""
        b, n = ids.shape
        x = self.embed(ids) + self.pos(torch.arange(n, device=ids.device))
        causal = torch.ones(n, n, dtype=torch.bool, device=ids.device).tril()
        for layer in range(self.n_layers):
            h = self.ln[layer](x)

            def split(t):
                return t.view(b, n, self.n_heads, self.d_head).transpose(1, 2)

            q, k, v = (split(w[layer](h)) for w in (self.wq, self.wk, self.wv))
            scores = q @ k.transpose(-1, -2) / math.sqrt(self.d_head)
            scores = scores.masked_fill(~causal, float("-inf"))
            out = torch.softmax(scores, dim=-1) @ v  # (B, H, L, d_head)
            for al, ah in ablate:
                if al == layer:
                    out[:, ah] = 0.0
            x = x + self.wo[layer](out.transpose(1, 2).reshape(b, n, -1))
        return self.unembed(self.ln_f(x))

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The weights as float32 arrays under the names the NumPy forward reads.

        Linear weights are stored transposed (in, out) so that the NumPy side computes x @ W.
        """
        sd = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in self.state_dict().items()}
        out = {
            "embed": sd["embed.weight"],
            "pos": sd["pos.weight"],
            "ln_f.weight": sd["ln_f.weight"],
            "ln_f.bias": sd["ln_f.bias"],
            "unembed.weight": sd["unembed.weight"].T.copy(),
            "unembed.bias": sd["unembed.bias"],
        }
        for layer in range(self.n_layers):
            out[f"ln{layer}.weight"] = sd[f"ln.{layer}.weight"]
            out[f"ln{layer}.bias"] = sd[f"ln.{layer}.bias"]
            for w in ("wq", "wk", "wv", "wo"):
                out[f"{w}{layer}"] = sd[f"{w}.{layer}.weight"].T.copy()
        return out

    @classmethod
    def from_arrays(cls, arrays, dtype=torch.float32, **dims) -> BindingModel:
        """A model holding the given arrays (as written by ``to_arrays``), in ``dtype``."""
        model = cls(**dims)
        sd = {
            "embed.weight": arrays["embed"],
            "pos.weight": arrays["pos"],
            "ln_f.weight": arrays["ln_f.weight"],
            "ln_f.bias": arrays["ln_f.bias"],
            "unembed.weight": np.asarray(arrays["unembed.weight"]).T,
            "unembed.bias": arrays["unembed.bias"],
        }
        for layer in range(model.n_layers):
            sd[f"ln.{layer}.weight"] = arrays[f"ln{layer}.weight"]
            sd[f"ln.{layer}.bias"] = arrays[f"ln{layer}.bias"]
            for w in ("wq", "wk", "wv", "wo"):
                sd[f"{w}.{layer}.weight"] = np.asarray(arrays[f"{w}{layer}"]).T
        model.load_state_dict({k: torch.as_tensor(np.array(v)) for k, v in sd.items()})
        return model.to(dtype).eval()
