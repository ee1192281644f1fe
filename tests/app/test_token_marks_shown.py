"""Where tokens are shown, the page says what their marks mean (issue 40): "␣" for a space was
never explained, and a character split over byte tokens showed as its bytes. The weights chart,
the head grid's caption, the causal map's key and the tables say it, only when a mark is used."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np

from app.state.head_tables import pattern_row_table
from app.state.lab_state import LabState
from app.state.scene_tables import weights_table
from app.views.causal_view import key_words
from app.views.head_grid import short_labels
from app.views.weights import WeightsView
from engine.heads import token_labels

TOKENS = ["The", " bank", "<0xE3><0x82>", "<0xA2>", " was"]


def test_the_weights_chart_explains_the_marks_of_a_models_tokens_only():
    state = LabState()
    view = WeightsView()
    view.update(state.snapshot)
    assert not view.token_note.visible and view.token_note.text == ""  # A, B, C: no marks
    snap = state.snapshot
    labels = token_labels((TOKENS * len(snap.labels))[: len(snap.labels)])
    view.update(dataclasses.replace(snap, labels=labels))
    assert view.token_note.visible
    assert view.token_note.text.splitlines()[0].startswith("␣ = a space")


def test_the_head_grid_and_the_causal_map_say_it_once():
    names = short_labels(TOKENS)
    assert names[2:4] == ["ア @2", "↳ア @3"]
    said = key_words(SimpleNamespace(tokens=TOKENS))
    assert (
        "L13 H8 is layer 13, head 8" in said
        and "␣ = a space" in said
        and "↳ア = rest of ア" in said
    )
    assert key_words(None).count("Tokens") == 0


def test_the_tables_say_it_in_their_description():
    matrix = np.tril(np.ones((5, 5))) / np.arange(1, 6)[:, None]
    table = pattern_row_table(TOKENS, matrix, 4, 13, 8)
    assert "Tokens: ␣ = a space" in table.description
    assert ("↳ア (position 3)", "0.200") in table.rows
    assert "Tokens:" not in weights_table(LabState().snapshot).description
