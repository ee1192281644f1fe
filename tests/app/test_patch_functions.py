"""Each small patch in app/patches/ does what its docstring says (the Bokeh speedups, MathJax and
the served routes have their own tests: docs/patches.md names them)."""

from __future__ import annotations

import gc
import weakref

import panel as pn
import param
import pytest
from bokeh.document import Document
from bokeh.models.glyphs import HBar, Scatter

from app.patches.bokeh_glyphs import positional_args
from app.patches.documents import serve_stylesheets_locally
from app.patches.panel_links import forget_js_callbacks
from app.patches.param_values import CheckedParameter, check_value


def test_positional_args_are_the_glyph_methods_own():
    assert positional_args(Scatter)[:2] == ("x", "y")
    assert positional_args(HBar)[0] == "y"


def _served_document() -> Document:
    doc = Document()
    context = object()  # what Bokeh keeps for a served session; only its presence matters here
    doc._session_context = lambda: context
    return doc


def test_a_served_session_gets_this_servers_stylesheets(monkeypatch):
    from panel.io.resources import get_dist_path

    monkeypatch.delenv("BOKEH_RESOURCES", raising=False)
    doc = _served_document()
    serve_stylesheets_locally(doc)
    assert doc.template_variables["dist_url"] == get_dist_path()
    assert not get_dist_path().startswith("http")
    doc.template_variables["dist_url"] = "kept/"
    serve_stylesheets_locally(doc)
    assert doc.template_variables["dist_url"] == "kept/", "a dist_url Panel set stays"


def test_a_document_outside_a_server_is_left_alone(monkeypatch):
    monkeypatch.delenv("BOKEH_RESOURCES", raising=False)
    doc = Document()
    serve_stylesheets_locally(doc)
    serve_stylesheets_locally(None)
    assert "dist_url" not in doc.template_variables


def test_forgetting_an_editable_sliders_js_callbacks_lets_it_go():
    from panel.links import Callback

    slider = pn.widgets.EditableFloatSlider(start=0, end=1, value=0.5)
    assert any(part in Callback.registry for part in slider.select()), (
        "Panel no longer registers the slider's callback: the patch may be unnecessary"
    )
    forget_js_callbacks(slider)
    assert not any(part in Callback.registry for part in slider.select())
    ref = weakref.ref(slider)
    del slider
    gc.collect()
    assert ref() is None


class _Even(CheckedParameter):
    __slots__ = []

    def check(self, val) -> None:
        if val % 2:
            raise ValueError(f"{val} is odd")


class _Settings(param.Parameterized):
    x = param.Number(1.0, bounds=(0, 2))
    even = _Even(default=2)


def test_check_value_refuses_as_a_set_would_and_sets_nothing():
    settings = _Settings()
    check_value(settings, "x", 1.5)
    with pytest.raises(ValueError, match="at most 2"):
        check_value(settings, "x", 3.0)
    assert settings.x == 1.0


def test_a_checked_parameter_adds_its_rule_to_params_own():
    settings = _Settings()
    with pytest.raises(ValueError, match="odd"):
        settings.even = 3
    with pytest.raises(ValueError, match="odd"):
        check_value(settings, "even", 5)
    settings.even = 4
    assert settings.even == 4
