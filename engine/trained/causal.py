"""Which heads carry the answer: every head's ablation effect, and activation patching.

A head's weight says where it looks; only an intervention says whether the answer needs it. The
causal map ablates each head in turn (its output zeroed at every position, `AblateHead`) and
records the change of the answer's log-probability and probability, beside the head's weight on a
chosen token and the norm of its contribution at the query position. The patching map runs a
corrupted sentence with one head's output taken from a clean sentence of the same length
(`PatchHead`, TransformerLens's activation patching) and records how much of the clean answer
comes back.

A model may offer ``batched_replacements(run, requests, progress, cancel)``: the next-token
logits of one sequence per (layer, head, value) request (value None for an ablation, or an
(n, d_head) output), each re-run from its layer with the activations below it reused. SmolLM2
carries them up the layers in batches; a model without it (the 2 x 2 binding model) is measured
with one `Run.intervene` per head. A test checks both paths against single interventions.

>>> from engine import trained
>>> cmap = trained.load("binding").causal_map("a=5; b=7; a=3; ?a")
>>> cmap.answer, len(cmap.records)
('3', 8)
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .edits import AblateHead, PatchHead

CACHE_SIZE = 8  # maps kept per model (per text, token, answer, backend and edits)


class Cancelled(Exception):
    """Raised inside a map when its ``cancel`` callable said stop."""


@dataclass(frozen=True)
class HeadEffect:
    """One head's row of a causal map."""

    layer: int
    head: int
    weight: float  # the head's weight on `token` from the query position
    contribution: float  # norm of the head's write into the residual stream at the query
    effect: float  # change of log p(answer) when the head is ablated (negative: it helped)
    effect_prob: float  # change of p(answer)
    answer: str  # the token whose probability was measured
    ablated_answer: str  # the likeliest next token with the head ablated


@dataclass(frozen=True)
class CausalMap:
    text: str
    answer: str
    token: int  # the key position whose weight each record reports
    token_text: str
    prob: float  # p(answer) with no head ablated
    records: tuple[HeadEffect, ...]

    def heaviest(self, k: int = 3) -> list[HeadEffect]:
        """The heads with the most weight on the token."""
        return sorted(self.records, key=lambda r: -r.weight)[:k]

    def decisive(self, k: int = 3) -> list[HeadEffect]:
        """The heads whose ablation moves the answer's log-probability the most, either way
        (largest |effect| first): a head whose removal raises the answer decides as well."""
        return sorted(self.records, key=lambda r: -abs(r.effect))[:k]

    def costliest(self, k: int = 3) -> list[HeadEffect]:
        """The heads whose ablation lowers the answer's log-probability the most."""
        return sorted(self.records, key=lambda r: r.effect)[:k]

    def columns(self) -> dict[str, list]:
        """The records as columns (the page's ``causal_map`` source)."""
        names = ("layer", "head", "weight", "contribution", "effect", "effect_prob")
        return {name: [getattr(r, name) for r in self.records] for name in names}


@dataclass(frozen=True)
class PatchEffect:
    layer: int
    head: int
    effect: float  # change of log p(clean answer) in the corrupted run when the head is patched
    recovered: float  # share of the clean-vs-corrupted logit difference the patch brings back


@dataclass(frozen=True)
class PatchingMap:
    clean: str
    corrupted: str
    clean_answer: str
    corrupted_answer: str
    difference_clean: float  # log p(clean answer) - log p(corrupted answer), clean run
    difference_corrupted: float  # the same in the corrupted run
    records: tuple[PatchEffect, ...]
    positions: tuple[int, ...] | None = None  # the positions patched (None: every position)

    def strongest(self, k: int = 3) -> list[PatchEffect]:
        """The heads whose patch moves the difference the most, either way (largest
        |recovered| first): a head that pushes towards the corrupted answer (-0.3) counts."""
        return sorted(self.records, key=lambda r: -abs(r.recovered))[:k]

    def restoring(self, k: int = 3) -> list[PatchEffect]:
        """The heads whose patch brings back the most of the clean answer."""
        return sorted(self.records, key=lambda r: -r.recovered)[:k]


# ----------------------------------------------------------------------------------- helpers


def log_probs(logits: np.ndarray) -> np.ndarray:
    """log softmax (..., vocab) in float64, as logits - logsumexp (the engine's softmax, then
    a log, costs 1.5 s on 270 rows of 49,152)."""
    z = np.asarray(logits, dtype=np.float64)
    top = z.max(axis=-1, keepdims=True)
    return z - (top + np.log(np.exp(z - top).sum(axis=-1, keepdims=True)))


def answer_id(run, answer: str | None) -> tuple[int, str]:
    """The answer's index in the model's output and its text (None: the run's own answer)."""
    model = run.model
    if answer is None:
        return int(np.argmax(run.logits)), run.answer
    text = answer
    if hasattr(model, "answers"):  # the binding model's fixed answer vocabulary
        if text not in model.answers:
            raise ValueError(f"answer {text!r} is not one of the model's answers {model.answers}")
        return model.answers.index(text), text
    by_bytes = getattr(model, "token_id", None)
    if by_bytes is not None and (i := by_bytes(text)) is not None:
        return i, text
    ids = model.encode(text)
    if len(ids) != 1:
        raise ValueError(f"the answer {text!r} is {len(ids)} tokens; give one token")
    return ids[0], text


def default_token(run, answer: str) -> int:
    """Where to read each head's weight: the last earlier occurrence of the answer in the text
    (the token a copying head would look at), else the position the heads weigh most on
    average, leaving out the first (which many heads use as a resting place)."""
    q = run.query_position
    earlier = [i for i, t in enumerate(run.tokens[: q + 1]) if t == answer]
    if earlier:
        return earlier[-1]
    model = run.model
    total = sum(
        run.head(layer, head).weights.astype(np.float64)
        for layer in range(model.n_layers)
        for head in range(model.n_heads)
    )
    if q == 0:
        return 0
    return 1 + int(np.argmax(total[1 : q + 1]))


def _check_token(run, token) -> int:
    if token is None:
        return None
    if isinstance(token, str):
        hits = [i for i, t in enumerate(run.tokens[: run.query_position + 1]) if t == token]
        if not hits:
            raise ValueError(f"token {token!r} is not in the text up to the query position")
        return hits[-1]
    if isinstance(token, bool) or not isinstance(token, int | np.integer):
        raise ValueError(f"token must be a position or a token's text, got {token!r}")
    if not 0 <= token <= run.query_position:
        raise ValueError(f"token position {token} is out of range 0..{run.query_position}")
    return int(token)


def _heads(model) -> list[tuple[int, int]]:
    return [(layer, head) for layer in range(model.n_layers) for head in range(model.n_heads)]


def map_forwards(model) -> float:
    """How many forwards of the text a map of every head costs: each head's run starts at its
    own layer (the layers below are reused) and goes up to the last, so a head of layer l runs
    n_layers - l layers, and the whole map n_heads * (n_layers + 1) / 2 forwards' worth (139.5
    for SmolLM2, 3 for the binding model). Batching shortens it on a short text."""
    return model.n_heads * (model.n_layers + 1) / 2


def _report(progress, done: int, total: int, what: str) -> None:
    if progress is not None:
        progress(done / total, what)


def every_head_logits(run, values, progress=None, cancel=None) -> np.ndarray:
    """Next-token logits (layers * heads, vocab), one row per head in (layer, head) order, with
    that head's output replaced by ``values(layer, head)`` (None: zeroed, an ablation)."""
    model = run.model
    requests = [
        (layer, head, values(layer, head))
        for layer in range(model.n_layers)
        for head in range(model.n_heads)
    ]
    return replaced_logits(run, requests, progress, cancel)


def replaced_logits(run, requests, progress=None, cancel=None) -> np.ndarray:
    """Next-token logits (len(requests), vocab), one row per (layer, head, value) request: the
    run with that head's output replaced by ``value`` (None: zeroed), batched where the model
    can (the maps measure every head; attribution verifies a few)."""
    model = run.model
    batched = getattr(model, "batched_replacements", None)
    if batched is not None:
        return batched(run, requests, progress=progress, cancel=cancel)
    out = []
    for i, (layer, head, value) in enumerate(requests):
        if cancel is not None and cancel():
            raise Cancelled(f"stopped at layer {layer}")
        edit = AblateHead(layer, head) if value is None else PatchHead(layer, head, value)
        out.append(run.intervene(edit).logits)
        _report(progress, i + 1, len(requests), f"layer {layer + 1} of {model.n_layers}")
    return np.stack(out)


def _top(model, logits: np.ndarray) -> str:
    """The likeliest next token's text."""
    labels = getattr(model, "answers", None)
    i = int(np.argmax(logits))
    return labels[i] if labels is not None else model.label(i)


# ----------------------------------------------------------------------------------- maps


class _Cache:
    def __init__(self):
        self._lock = threading.Lock()
        self._maps: OrderedDict = OrderedDict()
        # How long reading a map's records took once its ablations were in (seconds), by key:
        # the price of the same map again, from the cache.
        self.read_seconds: dict = {}

    def get(self, key):
        with self._lock:
            if key in self._maps:
                self._maps.move_to_end(key)
                return self._maps[key]
        return None

    def put(self, key, value):
        with self._lock:
            self._maps[key] = value
            while len(self._maps) > CACHE_SIZE:
                gone, _ = self._maps.popitem(last=False)
                self.read_seconds.pop(gone, None)


def _map_key(run, answer: str | None):
    index, answer = answer_id(run, answer)
    return (run.text, run.edits, run.query_position, answer, run.backend), index, answer


def cached_map_seconds(run, answer: str | None = None) -> float | None:
    """None when a causal map of ``run`` would run its ablations; else how long the map took
    the last time, once its ablations were in: the time it takes again, from the cache."""
    cache = _cache_of(run.model)
    key, _, _ = _map_key(run, answer)
    if cache.get(key) is None:
        return None
    return cache.read_seconds.get(key, 0.0)


# Keyed by the model object itself, held weakly: a cache dies with its model. Keyed by id(), a
# model made after another was freed could get its id and read the dead model's maps.
_caches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()


def _cache_of(model) -> _Cache:
    with _caches_lock:
        return _caches.setdefault(model, _Cache())


def clear_cache(model) -> None:
    """Forget every map cached for ``model`` (a benchmark times the map, not the cache)."""
    with _caches_lock:
        _caches.pop(model, None)


def causal_map(
    run,
    token: int | str | None = None,
    answer: str | None = None,
    *,
    progress: Callable[[float, str], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> CausalMap:
    """Every head's ablation effect on ``answer`` (default: the run's answer) in ``run``, beside
    its weight on ``token`` (a position or a token's text; default: see `default_token`).
    ``progress(fraction, message)`` is called after each layer; ``cancel()`` returning True stops
    the map with `Cancelled`. The ablations are cached per model, text, edits, query, answer
    and backend: another ``token`` costs no forward."""
    model = run.model
    key, index, answer = _map_key(run, answer)
    token = _check_token(run, token)
    if token is None:
        token = default_token(run, answer)
    cache = _cache_of(model)
    base = log_probs(run.logits)[index]
    measured = cache.get(key)
    if measured is None:
        logits = every_head_logits(run, lambda layer, head: None, progress, cancel)
        lp = log_probs(logits)[:, index]
        tops = tuple(_top(model, row) for row in logits)
        measured = (lp, tops)
        cache.put(key, measured)
    else:
        _report(progress, 1, 1, "from the cache")
    lp, tops = measured
    reading = time.perf_counter()
    records = []
    for row, (layer, head) in enumerate(_heads(model)):
        rec = run.head(layer, head)
        records.append(
            HeadEffect(
                layer=layer,
                head=head,
                weight=float(rec.weights[token]),
                contribution=float(np.linalg.norm(rec.contribution)),
                effect=float(lp[row] - base),
                effect_prob=float(np.exp(lp[row]) - np.exp(base)),
                answer=answer,
                ablated_answer=tops[row],
            )
        )
    cache.read_seconds[key] = time.perf_counter() - reading
    return CausalMap(
        text=run.text,
        answer=answer,
        token=token,
        token_text=run.tokens[token],
        prob=float(np.exp(base)),
        records=tuple(records),
    )


def patching_map(
    clean,
    corrupted,
    *,
    answers: tuple[str | None, str | None] | None = None,
    positions=None,
    progress: Callable[[float, str], None] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> PatchingMap:
    """Every head's output from the ``clean`` run patched, one at a time, into the ``corrupted``
    run (same model, same length). Each record says how much of the logit difference between
    the clean and the corrupted answer the patch restores (1: all of it, 0: none).

    ``answers`` = (clean answer, corrupted answer) chooses the two tokens whose log-probability
    difference is measured (default, or None in either place: that run's own answer);
    ``positions`` the token positions at which the head's output is patched (default: every
    position; elsewhere the head keeps the corrupted run's output). Both are checked, with a
    ValueError that says what is wrong."""
    frame = PatchFrame.of(clean, corrupted, answers)
    at = check_positions(corrupted, positions)
    logits = every_head_logits(
        corrupted,
        lambda layer, head: patched_output(clean, corrupted, layer, head, at),
        progress,
        cancel,
    )
    records = []
    for row, (layer, head) in enumerate(_heads(clean.model)):
        d, lp = frame.difference(logits[row])
        records.append(
            PatchEffect(layer=layer, head=head, effect=lp - frame.lp_bad, recovered=frame.share(d))
        )
    return PatchingMap(
        clean=clean.text,
        corrupted=corrupted.text,
        clean_answer=frame.good_text,
        corrupted_answer=frame.bad_text,
        difference_clean=frame.d_clean,
        difference_corrupted=frame.d_bad,
        records=tuple(records),
        positions=at,
    )


def check_positions(run, positions) -> tuple[int, ...] | None:
    """``positions`` as sorted distinct token positions of ``run`` up to its query position
    (None stays None: every position), or ValueError."""
    if positions is None:
        return None
    if isinstance(positions, str | bytes) or not hasattr(positions, "__iter__"):
        raise ValueError(f"positions must be a list of token positions, got {positions!r}")
    given = list(positions)
    if not given:
        raise ValueError("positions is empty: give at least one position (None patches all)")
    q = run.query_position
    for p in given:
        if isinstance(p, bool) or not isinstance(p, int | np.integer):
            raise ValueError(f"positions must be token positions (integers), got {p!r}")
        if not 0 <= p <= q:
            raise ValueError(
                f"position {p} is out of range 0..{q} (the query position: a later position "
                "cannot change the answer)"
            )
    return tuple(sorted({int(p) for p in given}))


def patched_output(clean, corrupted, layer: int, head: int, positions=None) -> np.ndarray:
    """What a patch puts in the head's place in the corrupted run: the clean run's output at
    ``positions`` (None: at every position) and the corrupted run's own output elsewhere."""
    value = clean.head(layer, head).all_outputs
    if positions is None:
        return value
    mixed = np.array(corrupted.head(layer, head).all_outputs, copy=True)
    mixed[list(positions)] = value[list(positions)]
    return mixed


@dataclass(frozen=True)
class PatchFrame:
    """What a patch is measured against: the clean and the corrupted answer (their indices and
    texts), log P(clean) - log P(corrupted) in both runs, and log P(clean) in the corrupted run."""

    good: int
    bad: int
    good_text: str
    bad_text: str
    d_clean: float
    d_bad: float
    lp_bad: float

    @classmethod
    def of(cls, clean, corrupted, answers=None) -> PatchFrame:
        """The frame of two runs, or ValueError if no patch can go between them. ``answers``
        = (clean answer, corrupted answer): the two tokens compared (None in either place, or
        no pair: that run's own answer)."""
        if clean.model is not corrupted.model:
            raise ValueError("patch between two runs of the same model")
        if len(clean.ids) != len(corrupted.ids):
            raise ValueError(
                f"the clean text is {len(clean.ids)} tokens and the corrupted "
                f"{len(corrupted.ids)}: activation patching needs texts of the same length"
            )
        chosen = _check_answers(answers)
        good, good_text = answer_id(clean, chosen[0])
        bad, bad_text = answer_id(corrupted, chosen[1])
        if good == bad and answers is None:
            raise ValueError(
                f"both texts are answered {good_text!r}: choose a corrupted text that changes "
                "the answer"
            )
        if good == bad:
            raise ValueError(
                f"both answers compared are {good_text!r}: choose two different tokens"
            )
        lp_clean, lp_corrupted = log_probs(clean.logits), log_probs(corrupted.logits)
        d_clean = float(lp_clean[good] - lp_clean[bad])
        d_bad = float(lp_corrupted[good] - lp_corrupted[bad])
        return cls(good, bad, good_text, bad_text, d_clean, d_bad, float(lp_corrupted[good]))

    def difference(self, logits) -> tuple[float, float]:
        """(log P(clean) - log P(corrupted), log P(clean)) for one row of next-token logits."""
        lp = log_probs(logits)
        return float(lp[self.good] - lp[self.bad]), float(lp[self.good])

    def share(self, difference: float) -> float:
        """The share of the clean-vs-corrupted difference that ``difference`` brings back."""
        span = self.d_clean - self.d_bad
        return (difference - self.d_bad) / span if span else 0.0


def _check_answers(answers) -> tuple[str | None, str | None]:
    """(clean answer, corrupted answer) from the ``answers`` option, or ValueError."""
    if answers is None:
        return None, None
    if isinstance(answers, str) or not isinstance(answers, tuple | list) or len(answers) != 2:
        raise ValueError(
            "answers must be a pair (clean answer, corrupted answer), e.g. (' Friday', "
            f"' Monday'), got {answers!r}"
        )
    for a in answers:
        if a is not None and not isinstance(a, str):
            raise ValueError(f"an answer must be a token's text or None, got {a!r}")
    return answers[0], answers[1]
