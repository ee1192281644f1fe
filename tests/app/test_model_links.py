"""A trained model's link and positions, as the page names them (issue 18): a layer or head
that the model lacks is named, and the default head kept, also when the link waited for its
model to load; the positions' picker shows tokens such as "<bos>" literally."""

from __future__ import annotations

import pytest

from app.state.model_state import ModelState
from app.views import model_panel
from app.views.model_panel import ModelPanel
from engine import trained


def test_a_layer_or_head_the_model_lacks_is_named_and_the_default_head_kept():
    m = ModelState()
    model = trained.load("binding")
    warnings = m.apply_query_params({"model": "binding", "layer": "99", "head": "-3"})
    assert warnings == [
        f"layer: 99 is not a layer of this model (0..{model.n_layers - 1}); "
        f"using layer {model.retrieval_head[0]}",
        f"head: -3 is not a head of this model (0..{model.n_heads - 1}); "
        f"using head {model.retrieval_head[1]}",
    ]
    assert (m.layer, m.head) == model.retrieval_head and m.error == ""
    # One bad value does not cost the good one.
    assert len(m.apply_query_params({"model": "binding", "layer": "0", "head": "7"})) == 1
    assert (m.layer, m.head) == (0, model.retrieval_head[1])
    # A change from the page names the same problem, and keeps the head on screen.
    assert not m.try_update(head=-3)
    assert m.error == f"head: -3 is not a head of this model (0..{model.n_heads - 1})"
    assert m.head == model.retrieval_head[1]


@pytest.fixture
def loads_later(monkeypatch):
    """The binding model, as though it were still loading in the background until `ready`."""
    state = {"ready": False}
    monkeypatch.setattr(ModelState, "_ready", staticmethod(lambda name: state["ready"]))
    monkeypatch.setattr(trained, "start_loading", lambda name: None)
    monkeypatch.setattr(trained, "loading_status", lambda name: (1.0, "ready", state["ready"], ""))
    return state


def test_a_link_that_waits_for_its_model_is_named_once_it_applies(loads_later):
    m = ModelState()
    assert m.apply_query_params({"model": "binding", "layer": "99", "head": "-3"}) == []
    assert m.loading == "binding" and m.take_link_warnings() == []
    loads_later["ready"] = True
    assert m.poll() == (1.0, "ready")
    warnings = m.take_link_warnings()
    assert [w.split(";")[0] for w in warnings] == [
        "layer: 99 is not a layer of this model (0..1)",
        "head: -3 is not a head of this model (0..1)",
    ]
    assert m.take_link_warnings() == []  # each named once


def test_the_panel_notifies_a_waiting_links_problems(loads_later, monkeypatch):
    shown = []
    monkeypatch.setattr(model_panel, "notify", lambda kind, text: shown.append((kind, text)))
    m = ModelState()
    m.apply_query_params({"model": "binding", "layer": "99"})
    panel = ModelPanel(m)
    loads_later["ready"] = True
    panel._poll()
    assert shown == [
        ("warning", "Link: layer: 99 is not a layer of this model (0..1); using layer 1")
    ]


def test_the_positions_picker_shows_markup_like_tokens_literally():
    panel = ModelPanel(ModelState())
    labels = list(panel.masked.options)
    # Choices.js draws labels as HTML: an escaped label is drawn as the text itself.
    assert labels[0] == "&lt;bos&gt; @0"
    assert panel.masked.options[labels[0]] == 0
    panel.masked.value = [0]
    assert panel.mstate.masked == [0]


def test_a_model_link_names_a_bad_hand_made_value_and_a_bad_model_both():
    # `?temperature=-1&model=nope` once said only "unknown model setting 'temperature'".
    from app.state.lab_state import LabState
    from app.state.sources import SourceSwitch

    switch = SourceSwitch(LabState())
    warnings = switch.apply_query_params({"temperature": "-1", "model": "nope"})
    assert any(w.startswith("model: 'nope' is not one of binding") for w in warnings), warnings
    assert any(
        w.startswith("temperature: -1 is out of range; expected a number from 0.05 to 20")
        and "a model link ignores" in w
        for w in warnings
    ), warnings
    assert not any("unknown" in w for w in warnings) and len(warnings) == 2
    # A valid hand-made value is still named as unused; an unknown key as unknown.
    warnings = switch.apply_query_params({"temperature": "0.5", "model": "binding", "zzz": "1"})
    assert sorted(warnings) == [
        "temperature is a hand-made-vectors setting; a model link ignores it",
        "unknown model setting 'zzz' ignored",
    ]


def test_a_models_address_speaks_the_scenarios_grammar():
    """One settings schema: a model's values are written and read by the scenarios' functions,
    and `backend` is one vocabulary for both sources."""
    from app.state import settings_schema as schema
    from app.state.lab_state import LabState
    from app.state.model_state import ENGINE_BACKENDS

    fields = schema.make_model_fields(["binding"])
    samples = {
        "text": " a=5; ?a ",  # spaces kept: they are tokens
        "layer": 1,
        "head": 0,
        "query": 3,
        "head_temperature": 0.25,
        "rotate": -45.5,
        "masked": [0, 2],
        "ablated": ["0.1", "1.0"],
        "backend": "torch-cpu",
    }
    for key, value in samples.items():
        assert schema.parse_text(fields[key], schema.format_text(fields[key], value)) == value
    assert tuple(ENGINE_BACKENDS) == schema.BACKENDS == tuple(LabState.param.backend.objects)
    for key, bad, said in (
        ("masked", "1,x", "masked: '1,x' is not token positions"),
        ("ablated", "1.0,top", "ablated: 'top' is not a head written layer.head"),
        ("rotate", "400", "rotate: 400 is out of range"),
        ("backend", "tpu", "backend: 'tpu' is not one of numpy, torch-cpu, torch-cuda"),
    ):
        warnings = ModelState().apply_query_params({"model": "binding", key: bad})
        assert len(warnings) == 1 and warnings[0].startswith(said), warnings
    # What a state writes, another reads back to the same settings.
    m = ModelState()
    assert m.try_update(text="a=5; b=7; a=3; ?a", layer=0, head=1, masked=[1], rotate=45.0)
    assert m.try_update(head_temperature=0.5, ablated=["1.0"], query=4)
    again = ModelState()
    assert again.apply_query_params(m.query_params()) == []
    assert again.query_params() == m.query_params()


def test_an_unknown_model_in_a_link_is_named_and_the_page_stays_where_it_was():
    # `?model=nosuch` once said so, then opened the default model and jumped to step 12.
    import param

    from app.page.lab_page import create_app
    from app.page.urlsync import UrlSync
    from app.state.sources import SCENARIOS

    class Location(param.Parameterized):
        search = param.String(default="")

    lab = create_app().lab
    told: list[str] = []
    location = Location()
    lab.url = UrlSync(lab.sources, location, ["source"], lessons=lab.lessons, notify=told.append)
    first = lab.lessons.position.object  # a fresh page: step 1 shown, none loaded
    location.search = "?model=nosuch"
    assert len(told) == 1 and told[0].startswith("Link: model: 'nosuch' is not one of binding")
    assert "the page stays as it was" in told[0]
    assert lab.sources.source == SCENARIOS and not lab.sources.model_ready
    assert lab.lessons.lesson == 0 and lab.lessons.position.object == first
    # On a step, the same.
    lab.lessons.open(5)
    shown = lab.lessons.position.object
    location.search = "?model=nosuch&text=hello"
    assert len(told) == 2 and lab.sources.source == SCENARIOS
    assert lab.lessons.lesson == 5 and lab.lessons.position.object == shown
    # A model the lab knows still opens it.
    location.search = "?model=binding"
    assert lab.sources.source == "model"
