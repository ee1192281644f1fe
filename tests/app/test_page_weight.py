"""What one lab page costs the server: no torch import, a bounded number of Bokeh models, views
shared only where that is safe, and one change sending only what changed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import panel as pn
import pytest
from bokeh.document import Document
from bokeh.document.events import ColumnDataChangedEvent, ModelChangedEvent
from bokeh.models import GlyphRenderer
from panel.io.state import set_curdoc

import app.page.lab_page as main
from app.lessons.lab_lessons import LESSONS, control_names
from app.page.lab_page import create_app
from app.state import pipeline as state_mod
from app.state.lab_state import LabState, listed_backends
from app.state.settings_schema import BACKENDS
from app.views import page_figures

ROOT = Path(__file__).resolve().parents[2]
# The page had ~670 models before it was slimmed, ~510 after, and 286 once the analysis plots
# and More settings waited to be shown and stateless models were shared; a new view may add
# some, but a slip back to building everything at once (or to per-renderer copies) must fail.
# Issue 30 added six: the plots in words, the keyboard tips, the w·v casing and the toolbar
# sheet (328 to 334 in this test), then two for the casing in the payload legend's swatch.
MODEL_BUDGET = 338
ANALYSIS_SOURCES = ("entropy_sweep", "dimension_sweep", "jacobian")


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
        "from app.page.lab_page import create_app\n"
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
        "app.page.later_parts.listed_backends",
        lambda: [
            state_mod.BackendChoice("numpy", True, ""),
            state_mod.BackendChoice("torch-cpu", True, ""),
            state_mod.BackendChoice("torch-cuda", True, "", checked=False),
        ],
    )
    lab = create_app().lab
    lab.show_more_settings()
    controls = lab.parts.built("candidates")
    assert "torch-cuda (checked when picked)" in controls.backend.options
    assert "checked when picked" in controls.backend_note.object
    assert controls.backend_note.visible


def test_page_stays_within_its_model_budget_and_keeps_every_named_source():
    doc, _page = _served_page()
    assert len(doc.models) <= MODEL_BUDGET
    for name in ("geometry", "contributions", "logits", "weights"):
        assert doc.get_model_by_name(name) is not None, name


def test_analysis_plots_are_built_when_first_shown_and_then_follow_every_change():
    doc, page = _served_page()
    lab = page.lab
    first_screen = len(doc.models)
    for name in ANALYSIS_SOURCES:
        assert doc.get_model_by_name(name) is None, name  # not built yet
    lab.state.temperature = 0.5  # a change before they exist reaches them when shown
    with set_curdoc(doc):
        lab.analysis.signal.seen = True  # what the browser sends once the placeholder is seen
    assert lab.analysis.built and len(doc.models) > first_screen + 100
    for name in ANALYSIS_SOURCES:
        assert doc.get_model_by_name(name) is not None, name
    snap = lab.sources.snapshot
    now = doc.get_model_by_name("entropy_now").data
    assert now["temperature"][0] == pytest.approx(0.5)
    assert now["entropy"][0] == pytest.approx(snap.entropy, rel=1e-5)
    # The live drag previews the entropy point now that it exists.
    preview = doc.get_model_by_name("lab_preview")
    assert preview.args["entropy_now"] is lab.parts.built("entropy").current
    lab.state.temperature = 2.0
    assert doc.get_model_by_name("entropy_now").data["temperature"][0] == pytest.approx(2.0)
    built = len(doc.models)
    with set_curdoc(doc):
        lab.show_analysis()  # a second look builds nothing more
    assert len(doc.models) == built


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
    with set_curdoc(doc):
        lab.show_analysis()
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


def test_the_short_walk_for_plot_text_finds_every_font_size_a_full_walk_finds():
    doc, page = _served_page()
    with set_curdoc(doc):
        page.lab.show_analysis()
    figures = page.lab.figures()
    short = {(model.id, name) for model, name, _size in page_figures.font_sizes(figures)}
    full = set()
    for fig in figures:
        for model in fig.references():
            for name in model.properties():
                value = getattr(model, name) if name.endswith("font_size") else None
                value = value.get("value") if isinstance(value, dict) else value
                if isinstance(value, str) and value.endswith("px"):
                    full.add((model.id, name))
    assert len(full) > 40 and short == full


def _labels(root) -> set[str]:
    labels = set()
    for widget in root.select(pn.widgets.Widget):
        for attr in ("label", "name"):
            text = getattr(widget, attr, None)
            if isinstance(text, str) and text.strip():
                labels.add(text.strip().split(" (")[0])
    return labels


def test_more_settings_wait_behind_their_button_until_opened():
    doc, page = _served_page()
    lab = page.lab
    assert lab.parts.built("candidates") is None and lab.parts.built("pairs") is None
    assert doc.get_model_by_name("weights") is not None
    before = len(doc.models)
    with set_curdoc(doc):
        lab.more_settings.button.open = True  # what the browser sends when it is pressed
    assert lab.parts.built("candidates") is not None and len(doc.models) > before + 40
    # Its labels are the ones the lab opens it for (a lesson naming one of them opens it).
    assert main.MORE_SETTINGS_NAMES <= _labels(lab.more_settings.__panel__())
    with set_curdoc(doc):
        lab.more_settings.button.open = False  # closed again: hidden, not rebuilt
        lab.more_settings.button.open = True
    assert lab.more_settings._content.visible
    # Each pair's inputs (five widgets a pair) wait behind their own button inside it.
    assert lab.parts.built("pair_rows") is None
    before = len(doc.models)
    with set_curdoc(doc):
        lab.parts.built("pair_rows_section").button.open = True
    assert len(lab.parts.built("pair_rows")._rows) == len(lab.state.keys)
    assert len(doc.models) >= before + 5 * len(lab.state.keys)


def test_following_every_lab_step_builds_no_pair_inputs():
    """No step names a pair's own inputs, so a class moving through the lab's steps never builds
    them (they were most of the CPU of the step that first opened "More settings")."""
    lab = create_app().lab
    for number in range(1, len(LESSONS) + 1):
        lab.lessons.open(number)
    assert lab.parts.built("candidates") is not None  # the steps that name its controls opened it
    assert lab.parts.built("pair_rows") is None
    lab.state.load_scenario("bank")  # five pairs: the section still builds them when opened
    lab.show_pair_rows()
    assert len(lab.parts.built("pair_rows")._rows) == 5


def test_every_control_a_lesson_names_is_on_the_first_screen_or_opens_more_settings():
    """So that "Load this step" always leaves the controls it names in sight (a teaching tab's
    own controls appear with its tab, which the student opens by name)."""
    lab = create_app().lab
    first = _labels(pn.Column(*lab.sidebar(), *lab.main_area()))
    first |= {tab.name for tab in lab.layout.teaching.objects}
    for tab in ("Why is it sharp?", "Audit", "Share & export"):
        lab.open_tab(tab)
    in_tabs = set().union(
        *(
            _labels(pn.panel(v))
            for v in (
                lab.parts.built("audit"),
                lab.parts.built("diagnosis"),
                lab.parts.built("export"),
            )
        )
    )
    for step in LESSONS:
        for name in control_names(step):
            assert name in first | in_tabs | main.MORE_SETTINGS_NAMES, (step.slug, name)
    assert "Distractor keys" not in first  # behind "More settings": the check can fail


@pytest.mark.parametrize(
    "open_it",
    [
        lambda lab: lab.lessons.open(1),  # step 1 swaps values: its controls are in there
        lambda lab: setattr(lab.state, "distractors", 64),  # a link or an import set it
        lambda lab: lab.state.load_scenario("null_route"),  # a scenario that uses the null route
    ],
    ids=["lesson", "setting", "scenario"],
)
def test_whatever_uses_a_hidden_setting_opens_more_settings(open_it):
    lab = create_app().lab
    open_it(lab)
    assert lab.parts.built("candidates") is not None and lab.more_settings._content.visible


def test_a_plain_change_keeps_more_settings_closed():
    lab = create_app().lab
    lab.state.temperature = 0.4
    lab.state.swap_values(0, 1)
    lab.lessons.show(3)  # shown, not loaded
    assert lab.parts.built("candidates") is None


def test_teaching_tabs_build_their_view_when_first_opened():
    doc, page = _served_page()
    lab = page.lab
    assert (
        lab.parts.built("audit") is None
        and lab.parts.built("diagnosis") is None
        and lab.parts.built("export") is None
    )
    with set_curdoc(doc):
        lab.open_tab("Audit")
    assert lab.parts.built("audit") is not None and lab.parts.built("diagnosis") is None
    audit = lab.parts.built("audit")
    with set_curdoc(doc):
        lab.open_tab("Lessons")
        lab.open_tab("Audit")
    assert lab.parts.built("audit") is audit  # built once
