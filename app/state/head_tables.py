"""A trained model's plots in words: the open head's pattern row and the maps' top heads
(no Panel, no Bokeh).

The same `SceneTable` as the hand-made plots (app/state/scene_tables.py), made from what the
head grid and the causal tab draw: the open head's matrix (`ModelState.pattern`), the causal
map and the patching map (`engine.trained.causal`). Their words are `Said` sentences: English
as text, written in the reader's language by the page (app/views/plot_text.py).
"""

from __future__ import annotations

import numpy as np

from app.i18n.said import Said
from engine.head_names import head_name
from engine.heads import shown_token, shown_tokens
from engine.trained.edits import HEAD_NAME

from .scene_tables import MAX_ROWS, SceneTable, Words, marks_sentence, number, percent, sentences

TOP_HEADS = 5


def token_name(shown: str, position: int) -> Words:
    """A token as a table names it: its label (`engine.heads.shown_tokens`) and position."""
    # TRANSLATORS: a token in the plots in words; {token} is the model's token (never translated).
    return Words(Said("{token} (position {position})", token=shown, position=position))


def head_said(layer: int, head: int) -> Words:
    """`engine.head_names.head_name` as a table cell, in the reader's language."""
    return Words(Said(HEAD_NAME, layer=layer, head=head))


def pattern_row_table(tokens, matrix, query: int, layer: int, head: int) -> SceneTable:
    """The open head's row at the query position: its weight on each key, heaviest first."""
    shown = shown_tokens(tokens)
    row = np.nan_to_num(np.asarray(matrix, dtype=np.float64)[query, : query + 1], nan=0.0)
    order = [int(i) for i in np.argsort(-row, kind="stable")[:MAX_ROWS]]
    # TRANSLATORS: the hidden table of the head grid's open head, for a screen reader.
    # English opens with the head's name capitalised ("Layer 13 head 8, its row ...").
    named = Words(Said(HEAD_NAME, layer=layer, head=head), head_name(layer, head).capitalize())
    row_said = Said(
        "{head}, its row for the query {query}: the weight it puts on each earlier token, "
        "heaviest first.",
        head=named,
        query=token_name(shown[query], query),
    )
    left = (
        ""
        if len(order) == len(row)
        else Said(
            "The table lists the {listed} heaviest of {total} keys.",
            listed=len(order),
            total=len(row),
        )
    )
    description = sentences(row_said, left, marks_sentence(shown[i] for i in [query, *order]))
    body = tuple((token_name(shown[i], i), number(row[i])) for i in order)
    return SceneTable(
        "pattern_row",
        Said("The open head's pattern, the query's row"),
        description,
        (Said("key"), Said("weight")),
        body,
    )


def causal_top_table(cmap, k: int = TOP_HEADS) -> SceneTable:
    """The causal map's heads that move the answer most (largest |effect| first)."""
    token, answer = shown_token(cmap.token_text), shown_token(cmap.answer)
    # TRANSLATORS: the Causal map's hidden table, for a screen reader; {answer} and {token} are
    # the model's tokens.
    description = Said(
        "Every head ablated in turn. P({answer}) is {probability} with every head in place; "
        "these are the {count} heads whose ablation moves log P({answer}) the most, with their "
        "weight on {token}.",
        answer=answer,
        probability=percent(cmap.prob),
        count=k,
        token=token,
    )
    body = tuple(
        (
            head_said(r.layer, r.head),
            number(r.weight),
            number(r.effect),
            percent(r.effect_prob),
        )
        for r in cmap.decisive(k)
    )
    columns = (
        Said("head"),
        Said("weight on {token}", token=token),
        Said("change of log P({answer})", answer=answer),
        Said("change of P"),
    )
    title = Said("Causal map: the top heads")
    return SceneTable("causal_top", title, description, columns, body)


def patching_top_table(pmap, k: int = TOP_HEADS) -> SceneTable:
    """The patching map's heads whose patch moves the answer most (largest |recovered|)."""
    clean, bad = shown_token(pmap.clean_answer), shown_token(pmap.corrupted_answer)
    where = (
        Said("at every position")
        if pmap.positions is None
        else Said(
            "only at token positions {positions}",
            positions=", ".join(str(p) for p in pmap.positions),
        )
    )
    # TRANSLATORS: the patching map's hidden table, for a screen reader; {bad} and {clean} are
    # the model's answers (tokens).
    description = Said(
        "Each head's output from the open sentence put into the changed one ({where}), which "
        "answers {bad} instead of {clean}. These are the {count} heads whose patch moves the "
        "answer the most; 1 brings all of the open sentence's answer back.",
        where=where,
        bad=bad,
        clean=clean,
        count=k,
    )
    body = tuple(
        (head_said(r.layer, r.head), number(r.recovered), number(r.effect))
        for r in pmap.strongest(k)
    )
    columns = (
        Said("head"),
        Said("share brought back"),
        Said("change of log P({answer})", answer=clean),
    )
    title = Said("Patching map: the top heads")
    return SceneTable("patching_top", title, description, columns, body)
