"""A trained model's plots in words: the open head's pattern row and the maps' top heads
(no Panel, no Bokeh).

The same `SceneTable` as the hand-made plots (app/state/scene_tables.py), made from what the
head grid and the causal tab draw: the open head's matrix (`ModelState.pattern`), the causal
map and the patching map (`engine.trained.causal`).
"""

from __future__ import annotations

import numpy as np

from engine.head_names import head_name
from engine.heads import shown_token, shown_tokens

from .scene_tables import MAX_ROWS, SceneTable, marks_said, number, percent

TOP_HEADS = 5


def token_name(shown: str, position: int) -> str:
    """A token as a table names it: its label (`engine.heads.shown_tokens`) and position."""
    return f"{shown} (position {position})"


def pattern_row_table(tokens, matrix, query: int, layer: int, head: int) -> SceneTable:
    """The open head's row at the query position: its weight on each key, heaviest first."""
    shown = shown_tokens(tokens)
    row = np.nan_to_num(np.asarray(matrix, dtype=np.float64)[query, : query + 1], nan=0.0)
    order = [int(i) for i in np.argsort(-row, kind="stable")[:MAX_ROWS]]
    left = (
        ""
        if len(order) == len(row)
        else f" The table lists the {len(order)} heaviest of {len(row)} keys."
    )
    description = (
        f"{head_name(layer, head).capitalize()}, its row for the query "
        f"{token_name(shown[query], query)}: the weight it puts on each earlier token, heaviest "
        f"first.{left}{marks_said(shown[i] for i in [query, *order])}"
    )
    body = tuple((token_name(shown[i], i), number(row[i])) for i in order)
    return SceneTable(
        "pattern_row",
        "The open head's pattern, the query's row",
        description,
        ("key", "weight"),
        body,
    )


def causal_top_table(cmap, k: int = TOP_HEADS) -> SceneTable:
    """The causal map's heads that move the answer most (largest |effect| first)."""
    token, answer = shown_token(cmap.token_text), shown_token(cmap.answer)
    description = (
        f"Every head ablated in turn. P({answer}) is {percent(cmap.prob)} with every head in "
        f"place; these are the {k} heads whose ablation moves log P({answer}) the most, with "
        f"their weight on {token}."
    )
    body = tuple(
        (
            head_name(r.layer, r.head),
            number(r.weight),
            number(r.effect),
            percent(r.effect_prob),
        )
        for r in cmap.decisive(k)
    )
    columns = ("head", f"weight on {token}", f"change of log P({answer})", "change of P")
    return SceneTable("causal_top", "Causal map: the top heads", description, columns, body)


def patching_top_table(pmap, k: int = TOP_HEADS) -> SceneTable:
    """The patching map's heads whose patch moves the answer most (largest |recovered|)."""
    clean, bad = shown_token(pmap.clean_answer), shown_token(pmap.corrupted_answer)
    where = (
        "at every position"
        if pmap.positions is None
        else "only at token positions " + ", ".join(str(p) for p in pmap.positions)
    )
    description = (
        f"Each head's output from the open sentence put into the changed one ({where}), which "
        f"answers {bad} instead of {clean}. These are the {k} heads whose patch moves the answer "
        "the most; 1 brings all of the open sentence's answer back."
    )
    body = tuple(
        (head_name(r.layer, r.head), number(r.recovered), number(r.effect))
        for r in pmap.strongest(k)
    )
    columns = ("head", "share brought back", f"change of log P({clean})")
    return SceneTable("patching_top", "Patching map: the top heads", description, columns, body)
