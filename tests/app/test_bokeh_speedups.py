"""The page build's Bokeh shortcuts (app/bokeh_speedups.py) return exactly what Bokeh's own
functions return, over every model of real lab pages, and stay out of an unchecked Bokeh."""

from __future__ import annotations

import pytest
from bokeh.core.has_props import HasProps
from bokeh.document import Document
from bokeh.models import GroupFilter
from panel.io.state import set_curdoc

from app import bokeh_speedups
from app.main import create_app
from app.state import LabState


def _page(source: str = "scenarios") -> Document:
    doc = Document()
    with set_curdoc(doc):
        page = create_app(LabState())
        page.server_doc(doc)
        page.lab.show_analysis()
        if source == "model":
            page.lab.sources.source = "model"  # the trained head's views too
    return doc


def _every_query(doc: Document) -> dict:
    out = {}
    for model in doc.models:
        for defaults in (False, True):
            for undefined in (False, True):
                out[model.id, defaults, undefined] = model.query_properties_with_values(
                    lambda prop: prop.serialized,
                    include_defaults=defaults,
                    include_undefined=undefined,
                )
        out[model.id, "overrides"] = dict(type(model)._overridden_defaults())
        # Every property as read (a default nobody set included), twice: the kept default
        # must be what Bokeh prepares each time.
        for name in model.properties():
            for read in (1, 2):
                try:
                    value = getattr(model, name)
                except (AttributeError, ValueError):  # unset and required, or write-only
                    value = "<unset>"
                out[model.id, name, read] = repr(value)
    return out


@pytest.fixture
def restore_speedups():
    yield
    bokeh_speedups.apply()


@pytest.mark.parametrize("source", ["scenarios", "model"])
def test_shortcuts_return_what_bokeh_returns_for_every_model_of_a_page(source, restore_speedups):
    assert bokeh_speedups.apply(), "this Bokeh is the checked one: the shortcuts must be in"
    doc = _page(source)
    fast, fast_json = _every_query(doc), doc.to_json(deferred=False)
    bokeh_speedups.remove()
    assert HasProps.query_properties_with_values is not bokeh_speedups.query_properties_with_values
    slow, slow_json = _every_query(doc), doc.to_json(deferred=False)
    assert fast.keys() == slow.keys()
    for key in slow:
        assert fast[key] == slow[key], key
    assert fast_json == slow_json


def test_a_required_value_never_set_still_raises_as_bokeh_does():
    unset = GroupFilter()  # column_name and group are required
    with pytest.raises(ValueError, match="column_name"):
        unset.properties_with_values(include_defaults=False)
    assert unset.query_properties_with_values(
        lambda prop: prop.serialized, include_defaults=False, include_undefined=True
    ) == {"column_name": bokeh_speedups.Undefined, "group": bokeh_speedups.Undefined}


def test_a_bokeh_with_other_source_is_left_alone(monkeypatch, restore_speedups):
    bokeh_speedups.remove()
    monkeypatch.setitem(bokeh_speedups.CHECKED_SOURCE, "_overridden_defaults", "0" * 16)
    assert not bokeh_speedups.apply()
    assert HasProps.query_properties_with_values is not bokeh_speedups.query_properties_with_values
