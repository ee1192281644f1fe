"""Parts 5-8 of the lessons (app/lessons/model_lessons.py, copy_lessons.py) in every language:
each step's words come from the catalogue, and a measurement is written in the page's language
with its numbers as that language writes them, while its English stays what the tests compare."""

from __future__ import annotations

import re

import pytest

from app.i18n.said import shown_value
from app.i18n.translator import LRI, PDI, Translator
from app.lessons import copy_lessons
from app.lessons.model_lessons import CHANGED, MODEL_LESSONS, MOVED, STORE
from app.state.model_state import ModelState

_BOLD = re.compile(r"\*\*(.+?)\*\*")


def _words(step) -> list[str]:
    return [step.part, step.title, step.setup, step.question, *step.choices, step.action]


@pytest.mark.parametrize("step", MODEL_LESSONS, ids=lambda s: s.title)
def test_every_word_of_a_step_is_in_the_catalogue(step):
    # x-long wraps every catalogue entry in brackets: a word without them escaped it.
    long = Translator("x-long")
    for text in [*_words(step), step.takeaway]:
        shown = long.gettext(text)
        assert shown.startswith("⟦") and shown.endswith("⟧"), text
    spanish, chinese = Translator("es"), Translator("zh-Hans")
    assert all(spanish.gettext(t) != t and chinese.gettext(t) != t for t in _words(step)[1:4])


def test_the_sentences_written_out_for_the_catalogue_are_the_steps_own():
    setups = " ".join(step.setup for step in MODEL_LESSONS)
    assert f"“{MOVED}”" in setups and f"“{CHANGED}”" in setups and f"“{STORE}”" in setups


def test_a_measurement_is_written_in_the_pages_language_with_its_numbers():
    step = next(s for s in MODEL_LESSONS if s.title == "Swap the payloads inside the model")
    _, _, said = step.run(ModelState())
    english = str(said)
    moved = re.search(r"its output moved by (\d+)\.(\d\d)", english)
    assert moved, english
    spanish = shown_value(said, Translator("es"))
    assert f"su salida se movió {moved[1]},{moved[2]}" in spanish, spanish
    assert "el modelo responde 7000 (respondía 5000)" in spanish, spanish
    chinese = shown_value(said, Translator("zh-Hans"))
    assert f"它的输出移动了 {moved[1]}.{moved[2]}" in chinese and "；" in chinese, chinese
    # Arabic keeps each number and token left to right, inside an isolate.
    arabic = shown_value(said, Translator("ar"))
    assert f"{LRI}{moved[1]}.{moved[2]}{PDI}" in arabic and "يجيب النموذج" in arabic, arabic
    assert shown_value(said, Translator("en")) == english


def test_a_list_is_joined_the_way_the_language_joins_one():
    heads = copy_lessons.names([(18, 6), (17, 4), (18, 7)])
    assert str(heads) == "layer 18 head 6, layer 17 head 4, layer 18 head 7"
    assert shown_value(heads, Translator("zh-Hans")).count("、") == 2
    layers = copy_lessons.listed(["17", "18"], " and ")
    assert shown_value(layers, Translator("es")) == "17 y 18"
