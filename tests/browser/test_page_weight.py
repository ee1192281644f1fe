"""What one lab page costs the server: no torch import, a bounded number of Bokeh models, views
shared only where that is safe, and one change sending only what changed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from bokeh.document import Document
from bokeh.document.events import ColumnDataChangedEvent, ModelChangedEvent
from bokeh.models import GlyphRenderer
from panel.io.state import set_curdoc

from app import state as state_mod
from app.main import create_app
from app.state import LabState, listed_backends
from app.urlstate import BACKENDS

ROOT = Path(__file__).resolve().parents[2]
# The page had ~670 models before it was slimmed and ~465 after; a new view may add some, but
# a slip back to per-renderer copies (hundreds) must fail.
MODEL_BUDGET = 520


def _served_page():
    doc = Document()
    with set_curdoc(doc):
        page = create_app(LabState())
        page.server_doc(doc)
    return doc, page


def test_building_a_page_does_not_import_torch():
    code = (
        "import sys\n"
        "from bokeh.document import Document\n"
        "from panel.io.state import set_curdoc\n"
        "from app.main import create_app\n"
        "doc = Document()\n"
        "with set_curdoc(doc):\n"
        "    create_app().server_doc(doc)\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_listed_backends_name_every_choice_and_say_which_are_unchecked(monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.setattr(state_mod.importlib.util, "find_spec", lambda name: object())
    choices = {c.name: c for c in listed_backends()}
    assert list(choices) == list(BACKENDS)
    assert choices["numpy"].available and choices["numpy"].checked
    assert not choices["torch-cuda"].checked
    monkeypatch.setattr(state_mod.importlib.util, "find_spec", lambda name: None)
    missing = {c.name: c for c in listed_backends()}
    for name in BACKENDS[1:]:
        assert not missing[name].available and "not installed" in missing[name].reason


def test_unchecked_backend_is_labelled_in_the_picker(monkeypatch):
    monkeypatch.setattr(
        "app.main.listed_backends",
        lambda: [
            state_mod.BackendChoice("numpy", True, ""),
            state_mod.BackendChoice("torch-cpu", True, ""),
            state_mod.BackendChoice("torch-cuda", True, "", checked=False),
        ],
    )
    controls = create_app().lab.controls
    assert "torch-cuda (checked when picked)" in controls.backend.options
    assert "checked when picked" in controls.backend_note.object
    assert controls.backend_note.visible


def test_page_stays_within_its_model_budget_and_keeps_every_named_source():
    doc, _page = _served_page()
    assert len(doc.models) <= MODEL_BUDGET
    for name in ("geometry", "contributions", "logits", "weights", "entropy_sweep"):
        assert doc.get_model_by_name(name) is not None, name
    for name in ("dimension_sweep", "jacobian"):
        assert doc.get_model_by_name(name) is not None, name


def test_renderers_share_a_view_only_with_renderers_of_the_same_source():
    doc, _page = _served_page()
    source_of_view = {}
    for model in doc.models:
        if isinstance(model, GlyphRenderer):
            seen = source_of_view.setdefault(model.view.id, model.data_source.id)
            assert seen == model.data_source.id  # a view stores indices for one source


@pytest.mark.parametrize("value", [-0.3, 0.3])
def test_a_temperature_change_sends_only_models_that_changed(value):
    doc, page = _served_page()
    lab = page.lab
    doc.hold("combine")
    with set_curdoc(doc):
        lab.controls.temperature.value = value
    events = list(doc.callbacks._held_events)
    doc.callbacks._held_events = []
    doc.unhold()
    changed = [e for e in events if isinstance(e, (ModelChangedEvent, ColumnDataChangedEvent))]
    names = [getattr(e.model, "name", None) for e in changed]
    assert "weights" in names and "entropy_now" in names
    # Temperature moves neither the geometry nor the dimension sweep's spread.
    assert "geometry" not in names
    keys = [(e.model.id, getattr(e, "attr", None)) for e in changed]
    assert len(keys) == len(set(keys))  # one event per model and property
