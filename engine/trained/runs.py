"""What every trained model returns: one `Run` per text, holding one `HeadRecord` per head.

A model (the binding model, SmolLM2) has the interface `HeadModel` (at the end); a run calls
its ``forward_one`` (one sequence, reusing the layers below the first edited one), its
``check_edits`` and its ``next_tokens``, and optionally ``encode(text)`` and
``token_id(text)`` so `Run.prob` can price any single token.

The next-token distribution uses the engine's own softmax, in float64.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Protocol

import numpy as np

from ..core import softmax
from .edits import Edit

LOSS_ROWS = 64  # positions whose next-token logits `Run.token_log_probs` holds at once


@dataclass(frozen=True)
class HeadRecord:
    """One head at the question (query) position."""

    layer: int
    head: int
    q: np.ndarray  # (d_head,) the question row's query (after any rotation)
    k: np.ndarray  # (n, d_head) keys after edits
    v: np.ndarray  # (n, d_head) values after edits
    scores: np.ndarray  # (n,) raw q.k
    logits: np.ndarray  # (n,) scores * scale_factor / temperature, -inf where illegal
    weights: np.ndarray  # (n,)
    output: np.ndarray  # (d_head,) weights @ v (zero if the head is ablated)
    legal: np.ndarray  # (n,) bool
    scale_factor: float
    temperature: float
    contribution: np.ndarray  # (d_model,) output @ W_O's rows for this head
    all_weights: np.ndarray  # (n, n) every query row's weights
    ablated: bool
    all_outputs: np.ndarray | None = None  # (n, d_head) every row's output (for patching)

    def row(self, i: int) -> HeadRecord:
        """Sequence ``i`` of a record a batched forward made (read-only views)."""
        return replace(self, **{f: read_only(getattr(self, f)[i]) for f in _ARRAY_FIELDS})

    def batched(self) -> HeadRecord:
        """This record with a batch axis of one (views), for a batched forward to reuse."""
        return replace(self, **{f: getattr(self, f)[None] for f in _ARRAY_FIELDS})


_ARRAY_FIELDS = tuple(
    f.name for f in fields(HeadRecord) if f.type in ("np.ndarray", "np.ndarray | None")
)


@dataclass
class Pass:
    """One forward of one sequence: the residual stream before each layer and after the last,
    every head's record, and the next-token logits at the question position."""

    resid: list[np.ndarray]  # n_layers + 1 arrays (n, d_model)
    heads: dict[tuple[int, int], HeadRecord]
    logits: np.ndarray  # (n_outputs,)
    query: int | None = None  # the position the records and logits are for (None: the last)


def read_only(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def check_query(query, n: int) -> int:
    """The query position ``query`` (None: the last of ``n``), or ValueError naming the range."""
    if query is None:
        return n - 1
    if isinstance(query, bool) or not isinstance(query, int | np.integer) or not 0 <= query < n:
        raise ValueError(f"query position {query!r} is out of range 0..{n - 1}")
    return int(query)


class Run:
    """One text through a model, with the edits applied."""

    def __init__(
        self,
        model: HeadModel,
        text: str,
        ids,
        tokens: tuple[str, ...],
        edits,
        ps: Pass,
        *,
        query_position: int | None = None,
        expected: str | None = None,
        backend: str = "numpy",
    ):
        self.model = model
        self.text = text
        self.ids: tuple[int, ...] = tuple(int(i) for i in ids)
        self.tokens = tuple(tokens)
        self.edits: tuple[Edit, ...] = tuple(edits)
        self._pass = ps
        self.query_position = len(self.ids) - 1 if query_position is None else query_position
        self.expected = expected  # the right answer, where the task has one
        self.backend = backend  # where the forward ran: "numpy", "torch", "torch:cuda"
        self.logits = np.array(ps.logits)
        self._p = softmax(self.logits.astype(np.float64))
        self.probs, self.answer = model.next_tokens(self._p)

    def prob(self, token_text: str) -> float:
        """The probability that the next token is ``token_text`` (exactly one token)."""
        if token_text in self.probs:
            return float(self.probs[token_text])
        # A token shown by its bytes (a piece of a character) is looked up, not encoded.
        by_bytes = getattr(self.model, "token_id", None)
        if by_bytes is not None and (i := by_bytes(token_text)) is not None:
            return float(self._p[i])
        ids = self.model.encode(token_text)
        if len(ids) != 1:
            raise ValueError(
                f"{token_text!r} is {len(ids)} tokens, not one: {self.model.check(token_text)}"
            )
        return float(self._p[ids[0]])

    def head(self, layer: int, head: int) -> HeadRecord:
        if (layer, head) not in self._pass.heads:
            raise ValueError(
                f"no head ({layer}, {head}): layers 0..{self.model.n_layers - 1}, "
                f"heads 0..{self.model.n_heads - 1}"
            )
        return self._pass.heads[(layer, head)]

    def attention(self, layer: int, head: int) -> np.ndarray:
        return self.head(layer, head).weights

    def residual(self, layer: int) -> np.ndarray:
        """The residual stream (n, d_model) entering ``layer`` (n_layers: after the last)."""
        return self._pass.resid[layer]

    def token_log_probs(self) -> np.ndarray:
        """log P(the token that actually comes next) at every position but the last, (n - 1,)
        in float64: entry i is how well the run predicted token i + 1 from tokens 0..i (its
        loss is minus that). ValueError for a model that predicts only its answer."""
        final, nxt = self.residual(self.model.n_layers)[:-1], np.asarray(self.ids[1:])
        out = np.empty(len(nxt), dtype=np.float64)
        # A block of rows at a time: a long text's logits at every position (n x vocab, in
        # float64) would be hundreds of MB at once.
        for start in range(0, len(nxt), LOSS_ROWS):
            rows = slice(start, start + LOSS_ROWS)
            logits = np.asarray(self.model.logits_everywhere(final[rows]), dtype=np.float64)
            top = logits.max(axis=-1, keepdims=True)
            log_z = top[:, 0] + np.log(np.exp(logits - top).sum(axis=-1))
            out[rows] = logits[np.arange(len(logits)), nxt[rows]] - log_z
        return out

    def arrays(self) -> list:
        """Every array the run holds (its residual stream, its head records' arrays, its logits
        and next-token distribution), shared ones once each: what a cache of runs counts."""
        found: dict[int, object] = {}
        records = [getattr(r, f.name) for r in self._pass.heads.values() for f in fields(r)]
        for a in (*self._pass.resid, *records, self._pass.logits, self.logits, self._p):
            if hasattr(a, "shape"):
                found.setdefault(id(a), a)
        return list(found.values())

    def freeze(self) -> Run:
        """Make its logits and distribution read-only, as its records are (a run shared
        between sessions); returns the run."""
        for a in (self.logits, self._p):
            a.setflags(write=False)
        return self

    def _with(self, edits: tuple[Edit, ...], ps: Pass) -> Run:
        return Run(
            self.model,
            self.text,
            self.ids,
            self.tokens,
            edits,
            ps,
            query_position=self.query_position,
            expected=self.expected,
            backend=self.backend,
        )

    def at_query(self, position: int) -> Run:
        """The same text and edits with the records and the prediction at ``position``."""
        if position == self.query_position:
            return self
        return self.model.run(self.text, self.edits, query=position, backend=self.backend)

    def intervene(self, *edits: Edit) -> Run:
        """A new run with these edits added; layers below the first edited one are reused."""
        if len(edits) == 1 and isinstance(edits[0], list | tuple):
            edits = tuple(edits[0])
        edits = self.model.check_edits(edits, len(self.ids))
        if not edits:
            return self._with(self.edits, self._pass)
        start = min(e.first_layer() for e in edits)
        ps = self.model.forward_one(
            np.asarray(self.ids),
            self.edits + edits,
            start=start,
            resid=self._pass.resid,
            heads=self._pass.heads,
            query=self.query_position,
            backend=self.backend,
        )
        return self._with(self.edits + edits, ps)

    def __repr__(self):
        told = f", expected {self.expected!r}" if self.expected is not None else ""
        return f"Run({self.text!r} -> {self.answer!r}, p={self.probs[self.answer]:.3f}{told})"


class HeadModel(Protocol):
    """What the lab needs from a model whose heads it opens; its runs are `Run`s, which need
    the three methods after ``run``."""

    name: str
    title: str
    n_layers: int
    n_heads: int
    retrieval_head: tuple[int, int]
    examples: Mapping[str, str]

    def check(self, text: str) -> Sequence[str]: ...

    def run(
        self, text: str, edits: Sequence = (), *, query: int | None = None, backend: str = "numpy"
    ) -> Run: ...

    def check_edits(self, edits: Iterable, n: int) -> tuple[Edit, ...]:
        """The edits as a tuple, or ValueError naming one the model cannot apply to n tokens."""
        ...

    def forward_one(
        self,
        ids: Sequence[int],
        edits: tuple[Edit, ...] = (),
        start: int = 0,
        resid: list[np.ndarray] | None = None,
        heads: dict | None = None,
        query: int | None = None,
        backend: str = "numpy",
    ) -> Pass:
        """One sequence through the model. With ``start`` > 0 the residual stream ``resid``
        and the head records ``heads`` below layer ``start`` are reused, so an edit re-runs
        only the layers it touches; ``query`` is the position whose row the records keep and
        whose next token is predicted (None: the last)."""
        ...

    def next_tokens(self, p: np.ndarray) -> tuple[dict[str, float], str]:
        """The listed next tokens with their probabilities, and the likeliest."""
        ...

    def logits_everywhere(self, final: np.ndarray) -> np.ndarray:
        """The next-token logits (n, vocab) at every position from the residual stream after
        the last layer (`Run.token_log_probs`); ValueError where the model has none."""
        ...

    def head_gradients(self, run: Run, seed: np.ndarray) -> np.ndarray:
        """d (seed . next-token logits) / d every head's output before W_O in an unedited run,
        (layers, heads, n, d_head): what the attribution map needs (`trained.backward`)."""
        ...
