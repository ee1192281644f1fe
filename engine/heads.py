"""A trained model's head as a lab snapshot: the second source of the views' one `LabSnapshot`.

No web imports. `engine.trained.runs.HeadModel` is the small interface the lab needs from "a
model whose heads it can open" (the shipped binding model and SmolLM2 in `engine.trained`,
whose runs are the one `engine.trained.runs.Run`): tokens, a next-token distribution, and for
each (layer, head) the question position's query, the keys, values, scores, weights and output,
and the forward a `Run` calls (``forward_one``, ``check_edits``, ``next_tokens``).
`head_snapshot` turns one head of one run into the snapshot the hand-made scenarios also
produce, so every view, caption and check reads a trained head exactly as it reads a toy.

The head lives in d_head dimensions and the planes are 2-D. Both planes are exact where it
matters:

- Address plane: spanned by the query and the part of the top-weight key orthogonal to it. The
  query lies on the x axis, so every key's x coordinate times |q| is its true score q.k: the
  plane keeps every dot product with the query (and the winning key's full length).
- Payload plane: spanned by the head's output and the part of the largest contribution
  orthogonal to it. Projection is linear, so the drawn contributions w_i v_i still add up to the
  drawn output, and the output's length is its true length. An ablated head's output is zero:
  its plane is spanned by the sum of its contributions instead, and the snapshot says
  `ablated`.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from .snapshot import (
    SWEEP_TEMPERATURES,
    LabSnapshot,
    TemperatureSweep,
    build_snapshot,
    entropy_curve,
    entropy_of,
)
from .wording import N_, Phrase, Share

if TYPE_CHECKING:  # the one run every model returns (engine/trained/runs.py)
    from .trained.runs import Run as HeadRun


def token_probability(run: HeadRun, token: str) -> float:
    """P(token) for the next position: from the run's listed answers, else asked of the run
    (a language model lists only its likeliest tokens and answers `prob` for any other)."""
    if token in run.probs:
        return float(run.probs[token])
    lookup = getattr(run, "prob", None)
    return float(lookup(token)) if lookup is not None else 0.0


def shown_token(token: str) -> str:
    """A token as a label: spaces and line breaks made visible (" loan" -> "␣loan"), since a
    language model's tokens usually start with one and a plot would hide it."""
    return token.replace(" ", "␣").replace("\n", "⏎").replace("\t", "⇥") or "∅"


# A byte of a character split over tokens, as `engine.trained.tokenizer.readable` writes it.
_BYTE = re.compile(r"<0x([0-9A-F]{2})>")
CONTINUED = "↳"  # marks a token that holds the rest of a character begun in an earlier token


def _token_bytes(token: str) -> bytes:
    out, start = bytearray(), 0
    for found in _BYTE.finditer(token):
        out += token[start : found.start()].encode("utf-8")
        out.append(int(found.group(1), 16))
        start = found.end()
    return bytes(out + token[start:].encode("utf-8"))


def _utf8_length(lead: int) -> int:
    """Bytes in the character a lead byte starts (0: not a lead byte)."""
    if lead < 0x80:
        return 1
    for length, (low, high) in ((2, (0xC2, 0xDF)), (3, (0xE0, 0xEF)), (4, (0xF0, 0xF4))):
        if low <= lead <= high:
            return length
    return 0


def shown_tokens(tokens: Sequence[str]) -> list[str]:
    """Each token of a sequence as a label (`shown_token`), with a character whose bytes the
    tokenizer split over several tokens shown whole: the token where it begins shows the
    character, each token holding the rest of it shows `CONTINUED` and the character
    (["<0xE3><0x82>", "<0xA2>"] -> ["ア", "↳ア"]). Bytes that make no whole character stay
    as <0xNN>."""
    pieces = [_token_bytes(t) for t in tokens]
    owner = [i for i, piece in enumerate(pieces) for _ in piece]  # the token of each byte
    raw = b"".join(pieces)
    parts: list[list[str]] = [[] for _ in tokens]
    at = 0
    while at < len(raw):
        size = _utf8_length(raw[at])
        char = raw[at : at + size] if size else b""
        try:
            text = char.decode("utf-8") if size and len(char) == size else None
        except UnicodeDecodeError:
            text = None
        if text is None:  # a stray byte: as the tokenizer wrote it
            parts[owner[at]].append(f"<0x{raw[at]:02X}>")
            at += 1
            continue
        first = owner[at]
        parts[first].append(text)
        for later in sorted({owner[j] for j in range(at + 1, at + size)} - {first}):
            parts[later].append(CONTINUED + text)
        at += size
    return [shown_token("".join(p)) if p else shown_token("") for p in parts]


# What each mark in a token label means: English templates, which a page translates
# (app/views/head_axes.py `token_marks_words`).
MARK_WORDS = {
    "␣": N_("␣ = a space before the word"),
    "⏎": N_("⏎ = a line break"),
    "⇥": N_("⇥ = a tab"),
    CONTINUED: N_("{mark}{char} = rest of {char} (its bytes split)"),
    "<0x": N_("<0x..> = a byte of a cut-off character"),
}


def token_mark_phrases(labels: Iterable[str]) -> list[tuple[str, dict[str, str]]]:
    """The marks used in these token labels, each as (`MARK_WORDS` template, its values)."""
    text = "".join(labels)
    said = []
    for mark, template in MARK_WORDS.items():
        if mark not in text:
            continue
        values = {}
        if mark == CONTINUED:
            at = text.index(CONTINUED) + 1
            values = {"mark": CONTINUED, "char": text[at : at + 1]}
        said.append((template, values))
    return said


def token_marks(labels: Iterable[str], sep: str = "; ") -> str:
    """What the marks in these token labels mean, one short phrase each joined by ``sep``
    ("" when none is used): a page prints it beside the tokens it shows."""
    return sep.join(t.format(**values) for t, values in token_mark_phrases(labels))


def bidi_isolated(label: str) -> str:
    """A token holding right-to-left letters (Arabic, Hebrew) in a first-strong isolate
    (U+2068 ... U+2069): it reads in its own order inside the left-to-right label and plot
    ("␣ال @3" showed its space mark on the wrong side); any other token as it is."""
    if any(unicodedata.bidirectional(char) in ("R", "AL") for char in label):
        return f"\u2068{label}\u2069"
    return label


def token_labels(tokens: Sequence[str]) -> tuple[str, ...]:
    """One label per position, unique: the token and its position ("= @3")."""
    return tuple(f"{bidi_isolated(label)} @{i}" for i, label in enumerate(shown_tokens(tokens)))


def plane(first: np.ndarray, rest: np.ndarray, prefer: int | None) -> tuple[np.ndarray, np.ndarray]:
    """An orthonormal pair (e1, e2): e1 along `first`, e2 along the part of row `prefer` of `rest`
    orthogonal to e1 (else the largest such part among the rows, else any orthogonal axis)."""
    d = first.shape[-1]
    norm = float(np.linalg.norm(first))
    e1 = first / norm if norm > 0 else np.eye(d)[0]
    ortho = rest - np.outer(rest @ e1, e1)
    lengths = np.linalg.norm(ortho, axis=-1)
    scale = max(1.0, float(np.max(np.abs(rest)))) if rest.size else 1.0
    tiny = 1e-9 * scale
    if prefer is not None and lengths[prefer] > tiny:
        e2 = ortho[prefer] / lengths[prefer]
    elif lengths.size and float(np.max(lengths)) > tiny:
        j = int(np.argmax(lengths))
        e2 = ortho[j] / lengths[j]
    else:  # every row lies along e1: any axis orthogonal to it
        axis = np.eye(d)[int(np.argmin(np.abs(e1)))]
        e2 = axis - (axis @ e1) * e1
        e2 /= np.linalg.norm(e2)
    return e1, e2


def temperature_sweep(base_logits: np.ndarray, temperature: float, entropy: float):
    """Entropy of `base_logits` (logits at temperature 1) across temperatures."""
    return TemperatureSweep(SWEEP_TEMPERATURES, entropy_curve(base_logits), temperature, entropy)


def head_snapshot(
    run: HeadRun,
    layer: int,
    head: int,
    *,
    dimension_sweep: object = None,
    notice: str = "",
    patched: str = "",
) -> LabSnapshot:
    """One head of one run, at its question position, as the lab's snapshot. ``patched``: the
    sentence the head's output was patched in from, when it was (the page marks the head)."""
    rec = run.head(layer, head)
    q = np.asarray(rec.q, dtype=float)
    k = np.asarray(rec.k, dtype=float)
    v = np.asarray(rec.v, dtype=float)
    weights = np.asarray(rec.weights, dtype=float)
    legal = np.asarray(rec.legal, dtype=bool)
    top = int(np.argmax(weights))

    a1, a2 = plane(q, k, top)
    contributions = weights[:, None] * v
    output = np.asarray(rec.output, dtype=float)
    biggest = int(np.argmax(np.linalg.norm(contributions, axis=-1)))
    # An ablated head's output is zero: its plane is the one the route would have written, so
    # the contributions it computes (and no longer passes on) are drawn where they were.
    ablated = bool(getattr(rec, "ablated", False))
    routed = contributions.sum(axis=0) if ablated else output
    p1, p2 = plane(routed, contributions, biggest)
    values_xy = np.stack([v @ p1, v @ p2], axis=-1)

    temperature = float(rec.temperature)
    logits = np.asarray(rec.logits, dtype=float)
    entropy = max(0.0, float(entropy_of(weights)))
    base = np.where(legal, logits * temperature, -np.inf)
    p_answer = float(run.probs.get(run.answer, 0.0))
    return build_snapshot(
        labels=token_labels(run.tokens),
        n_pairs=len(weights),
        query=np.array([q @ a1, q @ a2]),
        keys=np.stack([k @ a1, k @ a2], axis=-1),
        values=values_xy,
        legal=legal,
        scores=np.asarray(rec.scores, dtype=float),
        logits=logits,
        weights=weights,
        contributions=weights[:, None] * values_xy,
        # Lengths in the head's own space, not the plane's: the shares stay true.
        contribution_norms=np.linalg.norm(contributions, axis=-1),
        output=np.array([output @ p1, output @ p2]),
        entropy=entropy,
        effective_keys=math.exp(entropy),
        null_weight=None,
        null_logit=None,
        d_k=int(q.shape[-1]),
        temperature=temperature,
        scale_factor=float(rec.scale_factor),
        temperature_sweep=temperature_sweep(base, temperature, entropy),
        dimension_sweep=dimension_sweep,
        backend_used="numpy",
        notice=notice,
        ablated=ablated,
        patched=patched,
        # TRANSLATORS: ends a trained head's headline: {token} the model's answer, {share} its
        # probability ("; the model answers ␣Paris (83%).").
        summary_suffix=Phrase(
            N_("; the model answers {token} ({share})."),
            {"token": shown_token(run.answer), "share": Share(p_answer, 0)},
        ),
    )


HEAD_FINDERS = {
    "on_token": N_("most weight on a chosen token"),
    "sharpest": N_("the sharpest routes (lowest entropy)"),
    "sink": N_("most weight parked on the first token"),
}


def find_heads(
    run: HeadRun,
    n_layers: int,
    n_heads: int,
    *,
    criterion: str,
    position: int | None = None,
    top: int = 5,
) -> list[tuple[int, int, float]]:
    """The heads that best fit `criterion` at the question position: (layer, head, measure).

    "on_token": weight on `position`, highest first; "sharpest": entropy in nats, lowest first;
    "sink": weight on the first token, highest first.
    """
    if criterion not in HEAD_FINDERS:
        raise ValueError(f"criterion: {criterion!r} is not one of {', '.join(HEAD_FINDERS)}")
    n = len(run.tokens)
    if criterion == "on_token" and (position is None or not 0 <= position < n):
        raise ValueError(f"position: {position!r} is not a token position (0..{n - 1})")
    rows = []
    for layer in range(n_layers):
        for head in range(n_heads):
            w = np.asarray(run.head(layer, head).weights, dtype=float)
            if criterion == "sharpest":
                rows.append((layer, head, max(0.0, float(entropy_of(w)))))
            else:
                rows.append((layer, head, float(w[0 if criterion == "sink" else position])))
    lowest_first = criterion == "sharpest"
    rows.sort(key=lambda r: (r[2] if lowest_first else -r[2], r[0], r[1]))
    return rows[:top]
