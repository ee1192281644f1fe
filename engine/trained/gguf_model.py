"""A language model read from a GGUF file (Llama, Qwen2 or GPT-2 family) behind the binding
model's interface: run a sentence, open any head, intervene, map every head.

The file is read and checked by ``gguf_weights.py``, its tokenizer rebuilt by ``tokenizer.py``
and every forward run by ``decoder.py``; SmolLM2 (``smollm.py``) is one such file with its own
demonstration sentences. Every head's attention goes through ``engine.attention`` (one call per
layer, batched over the heads, with an explicit bool mask: the causal triangle plus whatever the
edits hide). Under grouped-query attention each query head gets its own copy of its shared
key/value head, so an edit on one query head's keys or values does not leak into the others.

>>> from engine import trained
>>> model = trained.load("path/to/gpt2.Q8_0.gguf")      # doctest: +SKIP
>>> model.run("The capital of France is").answer      # doctest: +SKIP
' Paris'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..backends import Backend
from ..heads import find_heads
from ..wording import N_
from . import decoder, long_context
from .gguf_weights import Config, read_gguf
from .model_base import TrainedModel
from .placed import PlacedWeights
from .runs import Pass, Run, check_query

MAX_TOKENS = 512  # the seed's long-context tests need room; the page thins its labels past ~40
TOP = 20  # next tokens kept in Run.probs
BANK = "The bank approved the loan because it was"

# Sentences any English-reading model can be asked about; a model's list keeps those that fit.
EXAMPLES: dict[str, str] = {
    N_("The bank and the loan"): BANK,
    N_("A known fact"): "The capital of France is",
    N_("A superseded fact"): "The meeting was on Monday. It moved to Friday. The meeting is on",
    N_("A distractor with a larger norm"): (
        "The key is in the drawer. The KEY!!! THE KEY IS IN THE BOX!!! The key is in the"
    ),
}


class GGUFModel(TrainedModel):
    """A decoder model from a GGUF file, in NumPy (or torch). Weights are read-only float32."""

    about = N_(
        "A language model from a GGUF file the operator listed, run from its weights as stored "
        "(a quantised file's vectors are close to the original model's, not equal to them). "
        "Many heads share the work, so ablating one head may change nothing; its next-word "
        "list shows the 20 likeliest tokens."
    )

    def __init__(
        self,
        cfg: Config,
        weights: dict[str, np.ndarray],
        tokenizer,
        *,
        name: str,
        title: str,
        rope_factors: np.ndarray | None = None,
        examples: dict[str, str] | None = None,
    ):
        super().__init__()
        self.name, self.title = name, title
        self.cfg, self.w, self.tokenizer = cfg, weights, tokenizer
        self.rope_factors = rope_factors
        self.n_layers, self.n_heads, self.n_kv_heads = cfg.n_layers, cfg.n_heads, cfg.n_kv_heads
        self.d_head, self.d_model, self.vocab_size = cfg.d_head, cfg.d_model, cfg.vocab
        self.max_tokens = _max_tokens(cfg, weights)
        self._group = cfg.n_heads // cfg.n_kv_heads
        self.shape = cfg.shape
        self.examples = self._fitting(examples if examples is not None else _default_examples())
        self._measure_retrieval_head()

    def _fitting(self, examples: dict[str, str]) -> dict[str, str]:
        """The examples this model can read whole (a small file's context may be short)."""
        fits = {
            t: text for t, text in examples.items() if len(self.encode(text)) <= self.max_tokens
        }
        return fits or {"A short sentence": BANK}

    def _measure_retrieval_head(self) -> None:
        """The head opened first: measured, not guessed. On the bank sentence, the head whose
        last-position weight on the token where "loan" starts is largest."""
        ids, spans = self.tokenizer.encode_with_offsets(BANK)
        at = BANK.index("loan")
        self.bank_loan_position = next(
            (i for i, (start, end) in enumerate(spans) if start <= at < end), len(ids) - 2
        )
        bank = self.run(BANK)
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
        return list(self.tokenizer.encode(text))

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids))

    def label(self, token_id: int) -> str:
        """How token ``token_id`` is shown (its text, or its bytes for part of a character)."""
        return self.tokenizer.texts[token_id]

    def token_id(self, token_text: str) -> int | None:
        """The id of a token shown by its bytes, else None."""
        return self.tokenizer.id_of_text(token_text)

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
        return [self.label(i) for i in self._ids(text)]

    # ------------------------------------------------------------------------------ forward
    def _place(self, be: Backend) -> PlacedWeights:
        return decoder.place(
            self.w, be, self.max_tokens, self.shape, self.cfg.rope_base, self.rope_factors
        )

    def forward_placed(self, placed, ids, edits, start, resid, heads, query) -> Pass:
        return decoder.forward(self, placed, ids, edits, start, resid, heads, query)

    def batched_replacements(self, run, requests, progress=None, cancel=None) -> np.ndarray:
        """`decoder.replacement_logits` of the run, which the causal and patching maps ask for."""
        with self.running_on(run.backend) as placed:
            return decoder.replacement_logits(self, placed, run, requests, progress, cancel)

    def logits_everywhere(self, final: np.ndarray) -> np.ndarray:
        return decoder.logits_everywhere(self, final)

    def logits(self, text: str) -> np.ndarray:
        """Next-token logits (vocab,) after the last token, float32."""
        return self.forward_one(self._ids(text)).logits

    # ------------------------------------------------------------------------------ API
    def head_gradients(self, run: Run, seed: np.ndarray) -> np.ndarray:
        """d (seed . next-token logits) / d every head's output in an unedited run, (layers,
        heads, n, d_head), on the run's backend (`backward.decoder_head_gradients`)."""
        from .backward import decoder_head_gradients

        return decoder_head_gradients(self, run, seed)

    def next_tokens(self, p: np.ndarray) -> tuple[dict[str, float], str]:
        """The TOP likeliest next tokens with their probabilities, and the likeliest."""
        order = np.argsort(-p, kind="stable")[:TOP]
        probs: dict[str, float] = {}
        for i in order:
            # Two ids can decode to the same text (a broken UTF-8 byte): keep the likelier.
            probs.setdefault(self.label(int(i)), float(p[i]))
        return probs, self.label(int(order[0]))

    def run(self, text: str, edits=(), *, query: int | None = None, backend: str = "numpy") -> Run:
        """``text`` through the model with ``edits``; ``query`` picks the position whose row the
        records keep and whose next token is predicted (default: the last); ``backend`` is
        "numpy", "torch" (its default device) or "torch:cpu" / "torch:cuda"."""
        ids = self._ids(text)
        edits = self.check_edits(edits, len(ids))
        query = check_query(query, len(ids))
        tokens = tuple(self.label(i) for i in ids)
        ps = self.forward_one(ids, edits, query=query, backend=backend)
        return Run(self, text, ids, tokens, edits, ps, query_position=query, backend=backend)

    def __repr__(self):
        return (
            f"{type(self).__name__}({self.cfg.arch}, layers={self.n_layers}, "
            f"heads={self.n_heads}, kv_heads={self.n_kv_heads}, d_head={self.d_head}, "
            f"retrieval_head={self.retrieval_head})"
        )


def _max_tokens(cfg: Config, weights: dict[str, np.ndarray]) -> int:
    """The longest text a run takes: MAX_TOKENS, or less where the file's context is shorter
    (a learned position table has no rows past its end)."""
    limits = [MAX_TOKENS]
    if "pos_embed" in weights:
        limits.append(len(weights["pos_embed"]))
    if cfg.context:
        limits.append(cfg.context)
    return min(limits)


def _default_examples() -> dict[str, str]:
    return dict(EXAMPLES) | long_context.examples()


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


def file_title(path: Path, cfg: Config) -> str:
    """How the menu names a file's model: what the file calls it, its family and the file."""
    family = {"llama": "Llama family", "qwen2": "Qwen2", "gpt2": "GPT-2"}[cfg.arch]
    called = cfg.name or path.stem
    return f"{called} ({family}, {cfg.n_layers} layers x {cfg.n_heads} heads, from {path.name})"


def load_file(
    path: Path,
    *,
    name: str,
    max_mb: float | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> GGUFModel:
    """Read, check, dequantise and wrap a GGUF file (seconds for a small model; the caller
    caches it). ValueError naming the file for one the lab cannot run."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path.name}: no such file")
    report = progress or (lambda fraction, message: None)
    cfg, weights, tokenizer, factors = read_gguf(path, report, max_mb)
    report(0.98, "measuring the default head")
    model = GGUFModel(
        cfg,
        weights,
        tokenizer,
        name=name,
        title=file_title(path, cfg),
        rope_factors=factors,
    )
    report(1.0, "ready")
    return model
