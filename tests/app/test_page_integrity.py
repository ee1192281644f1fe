"""Bokeh's integrity checks on the lab's pages, every part built.

The server leaves these checks off for each session (app/server/cli.py: they were 29 ms of a
page's server CPU to open), so they run here, on the pages a session can reach: the first
screen, then every part a visit can build (analysis plots, "More settings", each pair's inputs,
every teaching tab), a trained model's views and tabs, and the class's votes chart.
"""

from __future__ import annotations

import panel as pn
import pytest
from bokeh.core.validation.check import check_integrity
from bokeh.core.validation.warnings import EMPTY_LAYOUT
from bokeh.document import Document
from panel.io.state import set_curdoc

from app.page.lab_page import create_app
from app.page.layout import TAB_PARTS
from app.state.lab_state import LabState
from app.views.class_panel import VotesChart

# A holder the page fills later (the model's tabs, the analysis plots before they are shown)
# is an empty Column until then: BokehJS draws it as nothing, which is what it is for.
EXPECTED_WARNINGS = {EMPTY_LAYOUT.code}


def _issues(doc: Document):
    return check_integrity(list(doc.models))


def _assert_sound(doc: Document) -> None:
    issues = _issues(doc)
    assert issues.error == [], [f"{i.name}: {i.text} ({i.extra})" for i in issues.error]
    unexpected = [i for i in issues.warning if i.code not in EXPECTED_WARNINGS]
    assert unexpected == [], [f"{i.name}: {i.text} ({i.extra})" for i in unexpected]


def _page(doc: Document):
    page = create_app(LabState())
    page.server_doc(doc)
    return page


def test_the_first_screen_and_every_part_a_visit_builds_pass_bokehs_checks():
    doc = Document()
    with set_curdoc(doc):
        page = _page(doc)
        _assert_sound(doc)
        lab = page.lab
        lab.show_analysis()
        lab.show_pair_rows()  # "More settings" and, inside it, each pair's inputs
        for name in TAB_PARTS:
            lab.open_tab(name)
        lab.open_tab("Lessons")
        assert lab.parts.built("candidates") is not None and lab.parts.built("entropy") is not None
        _assert_sound(doc)


def test_a_trained_models_views_and_tabs_pass_bokehs_checks():
    doc = Document()
    with set_curdoc(doc):
        lab = _page(doc).lab
        lab.sources.source = "model"
        lab.show_head_grid()
        for name in ("Experiments", "Causal map", "Lessons"):
            lab.open_tab(name)
        assert (
            lab.parts.built("model_main") is not None and lab.parts.built("causal_view") is not None
        )
        _assert_sound(doc)


def test_the_classs_votes_chart_passes_bokehs_checks():
    doc = Document()
    doc.add_root(VotesChart().figure)
    _assert_sound(doc)


def test_the_check_finds_a_broken_page():
    """The check above can fail: a figure whose glyph names a column its source lacks."""
    from bokeh.models import ColumnDataSource
    from bokeh.plotting import figure

    doc = Document()
    with set_curdoc(doc):
        _page(doc)
        fig = figure()
        fig.scatter("x", "nowhere", source=ColumnDataSource({"x": [1.0], "y": [2.0]}))
        doc.add_root(fig)
    with pytest.raises(AssertionError, match="BAD_COLUMN_NAME"):
        _assert_sound(doc)


def test_the_stages_figures_fill_the_boxes_its_stylesheet_gives_them():
    # The stage's stylesheet sizes each plot's box; a figure with a width or height of its own
    # would keep it (a 410 px plane on any screen), and one without its class would sit
    # outside the grid.
    doc = Document()
    with set_curdoc(doc):
        page = _page(doc)
        lab = page.lab
        lab.sources.source = "model"  # the trained model's answer takes the logits' cell
        wanted = {
            "lab-plane": [lab.geometry.address_fig, lab.geometry.payload_fig],
            "lab-weights": [lab.weights.figure],
            "lab-logits": [lab.logits.figure, lab.parts.built("model_main").prediction.figure],
        }
        panes = {id(pane.object): pane for pane in page.select(pn.pane.Bokeh)}
        for css_class, figures in wanted.items():
            for fig in figures:
                assert fig.css_classes == [css_class]
                assert fig.sizing_mode == "stretch_both"
                assert (fig.width, fig.height, fig.frame_width, fig.frame_height) == (None,) * 4
                pane = panes[id(fig)]  # the page shows it
                assert pane.sizing_mode == "stretch_both" and pane.css_classes == [css_class]
