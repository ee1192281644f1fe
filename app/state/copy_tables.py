"""Find heads: every head's copying score for the head grid, and the grid's ranking in words
(no Panel, no Bokeh).

The scores are `engine.trained.copying.head_scores` of the run on screen: they read the
attention the run already holds (about 15 ms on SmolLM2), once per run for the whole process
(`SCORES`, keyed like the run itself, so a class on one text shares one computation).
"""

from __future__ import annotations

import numpy as np

from app.i18n.head_words import head_words
from app.i18n.markers import N_
from app.i18n.said import Said
from app.i18n.translator import ENGLISH, Translator
from app.state.model_runs import edit_key
from app.state.pipeline import BoundedCache, MiB
from engine.trained.copying import head_scores

from .chart_tables import HeadName
from .scene_tables import SceneTable, number

MARKED = 5  # the heads ranked first, outlined and numbered on the grid
LISTED = 20  # the heads the table in words lists, highest first
# What each choice colours the cells by, as a student reads it (the control's options).
FIND_TITLES = {
    "patterns": N_("Each head's pattern"),
    "previous_token": N_("Previous token"),
    "duplicate_token": N_("Earlier copy of the same token"),
    "induction": N_("Token after an earlier copy (induction)"),
    "first_token": N_("First token (attention sink)"),
}
# What a score measures, for the legend and the table: "the share of attention on ...".
TARGETS = {
    "previous_token": N_("the token just before"),
    "duplicate_token": N_("an earlier copy of the same token"),
    "induction": N_("the token that followed an earlier copy of the same token"),
    "first_token": N_("the first token"),
}
# Why a text scores no head (the grid's notice and the table's description).
REPEATS_NO_TOKEN = N_(
    "This text repeats no token, so no head can be scored for copying. Try the text "
    "Repeated random words, or a text that says something twice."
)
SINGLE_TOKEN = N_("This text has a single token, so no head can be scored: try a longer text.")
# About 100 bytes a head: SmolLM2's 270 heads are tens of KB.
SCORES = BoundedCache(
    "copying scores", max_entries=64, max_bytes=8 * MiB, size=lambda s: 4096 + 128 * len(s)
)


def run_key(run) -> tuple:
    """What a run's attention depends on: its model, text, backend and edits (and, with an
    edit, the query row: a rotated query acts on that row only)."""
    edits = tuple(edit_key(e) for e in run.edits)
    where = run.query_position if edits else None
    return (run.model.name, run.text, run.backend, edits, where)


def copy_scores(run) -> list:
    """Every head's `HeadScores` for `run`, layer-major (the head grid's order), cached."""
    return SCORES.get_or_compute(run_key(run), lambda: head_scores(run))


def score_column(scores, kind: str) -> np.ndarray:
    """Each head's `kind` score in the grid's order, float32; NaN where it is not measured."""
    values = [s.score(kind) for s in scores]
    return np.array([np.nan if v is None else v for v in values], dtype=np.float32)


def ranked_heads(scores, kind: str, top: int) -> list:
    """The `top` heads with the highest `kind` score (none when the text cannot score it)."""
    measured = [s for s in scores if s.score(kind) is not None]
    measured.sort(key=lambda s: (-s.score(kind), s.layer, s.head))
    return measured[:top]


def unmeasured(kind: str, tr: Translator = ENGLISH) -> str:
    """Why a text scores no head for `kind` (the grid says it in its place)."""
    return tr.gettext(_unmeasured(kind))


def _unmeasured(kind: str) -> str:
    if kind in ("duplicate_token", "induction"):
        return REPEATS_NO_TOKEN
    return SINGLE_TOKEN


def ranked_table(scores, kind: str, open_head: tuple[int, int]) -> SceneTable:
    """The heads from the highest `kind` score down (LISTED of them), or why there are none."""
    # TRANSLATORS: the Find heads table in words, for a screen reader; {choice} is what the
    # cells are coloured by ("Find heads: Previous token").
    title = Said("Find heads: {choice}", choice=Said(FIND_TITLES[kind]))
    columns = (Said("rank"), Said("head"), Said("score"))
    top = ranked_heads(scores, kind, LISTED)
    if not top:
        return SceneTable("head_scores", title, Said(_unmeasured(kind)), columns, ())
    # TRANSLATORS: the Find heads table in words; {target} is what a score measures ("the
    # token just before").
    description = Said(
        "Every head scored by the share of its attention on {target}, averaged over the "
        "positions where there is one (0 to 1). The {listed} highest of {total} heads, highest "
        "first; the first {marked} are outlined and numbered on the grid.",
        target=Said(TARGETS[kind]),
        listed=len(top),
        total=len(scores),
        marked=min(MARKED, len(top)),
    )
    body = tuple(
        (str(rank), _head_cell(s, open_head), number(s.score(kind)))
        for rank, s in enumerate(top, start=1)
    )
    return SceneTable("head_scores", title, description, columns, body)


def _head_cell(scores, open_head: tuple[int, int]) -> HeadName | Said:
    name = HeadName(scores.layer, scores.head)
    # TRANSLATORS: the tables in words: the head open in the page ("layer 2 head 1 (open)").
    return Said("{head} (open)", head=name) if (scores.layer, scores.head) == open_head else name


def ranked_words(scores, kind: str, tr: Translator = ENGLISH) -> str:
    """The marked heads in one line, for the grid's caption ("" when none is scored)."""
    top = ranked_heads(scores, kind, MARKED)
    if not top:
        return ""
    _ = tr.gettext
    # TRANSLATORS: one ranked head in the grid's caption, "1. layer 4 head 2, 0.91".
    ranked = _("{rank}. {head}, {score}")
    heads = "; ".join(
        ranked.format(
            rank=i,
            head=head_words(s.layer, s.head, tr),
            score=tr.format_decimal(float(f"{s.score(kind):.3f}"), "0.000"),  # as Python rounds
        )
        for i, s in enumerate(top, start=1)
    )
    return _("Outlined in black and numbered, highest first: {heads}.").format(heads=heads)
