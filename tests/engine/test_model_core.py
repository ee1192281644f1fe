"""One model core: every trained model answers with the same `Run` and `HeadRecord`, the
next-token distribution is the engine's softmax, and every temperature bound is one constant."""

from __future__ import annotations

import numpy as np
import pytest

from engine import softmax, trained
from engine.snapshot import SWEEP_TEMPERATURES, TEMPERATURE_RANGE
from engine.trained.runs import HeadRecord, Run


@pytest.fixture(scope="module")
def binding():
    return trained.load("binding")


def test_the_binding_model_answers_with_the_shared_run(binding):
    run = binding.run("a=5; b=7; a=3; ?a")
    assert type(run) is Run and run.model is binding
    assert isinstance(run.head(1, 0), HeadRecord)
    assert run.expected == "3" and run.query_position == len(run.tokens) - 1
    # The listed probabilities are the engine's softmax of the run's logits, in float64.
    p = softmax(run.logits.astype(np.float64))
    assert [run.probs[a] for a in binding.answers] == pytest.approx(p.tolist(), abs=0, rel=0)
    assert run.answer == binding.answers[int(np.argmax(p))]


def test_an_intervention_reuses_the_layers_below_it(binding):
    run = binding.run("a=5; b=7; a=3; ?a")
    edited = run.intervene(trained.AblateHead(1, 0))
    assert type(edited) is Run and edited.edits == (trained.AblateHead(1, 0),)
    for head in range(binding.n_heads):  # layer 0's arrays are reused, not recomputed
        assert np.shares_memory(edited.head(0, head).weights, run.head(0, head).weights)
    assert not np.shares_memory(edited.head(1, 0).weights, run.head(1, 0).weights)
    assert edited.head(1, 0).ablated and not run.head(1, 0).ablated
    assert np.all(edited.head(1, 0).output == 0)


def test_a_record_is_read_only(binding):
    record = binding.run("a=5; b=7; ?b").head(1, 0)
    with pytest.raises(ValueError, match="read-only"):
        record.weights[0] = 1.0


def test_every_temperature_bound_is_the_engine_constant():
    from app.state.lab_state import FIELDS, LabState
    from app.state.model_state import ModelState

    assert LabState.param.temperature.bounds == TEMPERATURE_RANGE
    assert ModelState.param.head_temperature.bounds == TEMPERATURE_RANGE
    field = FIELDS["temperature"]
    assert (field.low, field.high) == TEMPERATURE_RANGE
    assert (SWEEP_TEMPERATURES[0], SWEEP_TEMPERATURES[-1]) == pytest.approx(TEMPERATURE_RANGE)
