"""The loss of every token of a language model's run: the numbers of the loss strip, its words
and its table for a screen reader.

No Panel or Bokeh import. A token's loss is minus the log-probability the run gave it before it
came (`Run.token_log_probs`, in nats); the first token has none. The binding model predicts only
its answer: it has no loss per token, and `token_losses` says so with None, not an error.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

import numpy as np

from app.i18n.markers import N_
from app.i18n.translator import ENGLISH, Translator
from app.state.scene_tables import SceneTable, marks_said
from engine.heads import shown_tokens

# Each run's losses, computed once (on the model's worker when a run is made there, see
# ModelState) and kept while the run lives: a run is frozen, so are its losses.
_LOSSES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def token_losses(run) -> np.ndarray | None:
    """The loss (nats) of tokens 1..n-1 of `run`, (n - 1,) read-only: entry i is token i + 1's;
    None for a model with no loss per token."""
    with _LOCK:
        hit = _LOSSES.get(run)
    if hit is not None:
        return hit
    try:
        losses = -run.token_log_probs()
    except ValueError:  # the binding model: it predicts only its answer
        return None
    losses.setflags(write=False)
    with _LOCK:
        _LOSSES[run] = losses
    return losses


@dataclass(frozen=True)
class LossStrip:
    """What the strip draws: each token's loss without the edits (`before`) and with them
    (`after`, None when there are none), and the copies' positions for repeated words."""

    tokens: tuple[str, ...]  # every token of the text, as labels (␣ for a space)
    before: np.ndarray  # (n - 1,): the loss of tokens 1..n-1
    after: np.ndarray | None
    copies: tuple[range, range] | None  # token positions of the first and second copy

    @property
    def positions(self) -> np.ndarray:
        return np.arange(1, len(self.tokens))


def loss_strip(plain, edited, words=None) -> LossStrip | None:
    """The strip of `plain` (the text's run without edits) and `edited` (with them; the same
    run when there are none); `words` a `RepeatedWords` the text is. None without a loss."""
    before = token_losses(plain)
    if before is None:
        return None
    after = None if edited is plain or not edited.edits else token_losses(edited)
    copies = None if words is None else (words.first_copy, words.second_copy)
    return LossStrip(tuple(shown_tokens(plain.tokens)), before, after, copies)


def copy_means(losses: np.ndarray, copies: tuple[range, range]) -> tuple[float, float]:
    """The mean loss of each copy's tokens (token p's loss is entry p - 1)."""
    return tuple(float(np.mean([losses[p - 1] for p in copy])) for copy in copies)


def _nats(x: float, tr: Translator = ENGLISH) -> str:
    """A loss with one decimal, rounded as Python rounds, in `tr`'s language (2,3 in Spanish)."""
    text = f"{x:.1f}"
    return text if tr.code == "en" else tr.format_decimal(float(text), "0.0")


def strip_words(strip: LossStrip, tr: Translator = ENGLISH) -> str:
    """The strip's numbers as a sentence: each copy's mean loss for repeated words, else the
    text's mean loss; the same with the edits when there are some."""
    _ = tr.gettext
    if strip.copies is not None:
        first, second = (_nats(x, tr) for x in copy_means(strip.before, strip.copies))
        if strip.after is None:
            said = _("Mean loss: first copy {first} nats a word, second copy {second}.")
            return said.format(first=first, second=second)
        edited = [_nats(x, tr) for x in copy_means(strip.after, strip.copies)]
        said = _(
            "Mean loss: first copy {first} nats a word, second copy {second}; with your edits "
            "{edited_first} and {edited_second}."
        )
        return said.format(
            first=first, second=second, edited_first=edited[0], edited_second=edited[1]
        )
    mean = _nats(float(np.mean(strip.before)), tr)
    if strip.after is None:
        return _("Mean loss {mean} nats a token.").format(mean=mean)
    edited = _nats(float(np.mean(strip.after)), tr)
    return _("Mean loss {mean} nats a token; with your edits {edited}.").format(
        mean=mean, edited=edited
    )


FIRST_COPY, SECOND_COPY = N_("first copy"), N_("second copy")


def copy_of(strip: LossStrip, position: int, tr: Translator = ENGLISH) -> str:
    """Which copy of the repeated words a token position is in ("" for none)."""
    if strip.copies is None:
        return ""
    first, second = strip.copies
    copy = FIRST_COPY if position in first else SECOND_COPY if position in second else ""
    return tr.gettext(copy) if copy else ""


def strip_table(strip: LossStrip) -> SceneTable:
    """The strip in words: one row per token after the first."""
    columns = ["position", "token", "loss (nats)"]
    if strip.after is not None:
        columns.append("with your edits")
    if strip.copies is not None:
        columns.append("copy")
    rows = []
    for i, p in enumerate(strip.positions):
        row = [str(p), strip.tokens[p], f"{strip.before[i]:.2f}"]
        if strip.after is not None:
            row.append(f"{strip.after[i]:.2f}")
        if strip.copies is not None:
            row.append(copy_of(strip, int(p)) or "heading")
        rows.append(tuple(row))
    return SceneTable(
        name="loss_strip",
        title="Loss of each token",
        description=(
            "How surprised the model was by each token, in nats (minus the log-probability it "
            "gave that token before seeing it; the first token has none). "
            + strip_words(strip)
            + marks_said(strip.tokens)
        ),
        columns=tuple(columns),
        rows=tuple(rows),
    )
