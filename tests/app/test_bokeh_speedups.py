"""The page build's Bokeh shortcuts (app/patches/bokeh_speedups.py) return exactly what Bokeh's own
functions return, over every model of real lab pages, and stay out of an unchecked Bokeh."""

from __future__ import annotations

import pytest
from bokeh.core.has_props import HasProps
from bokeh.document import Document
from bokeh.model.util import collect_models
from bokeh.models import GroupFilter
from panel.io.state import set_curdoc

from app.page.lab_page import create_app
from app.patches import bokeh_speedups
from app.state.lab_state import LabState


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


def _json_with_ids_in_order(doc: Document):
    """The document as the browser receives it, with each model id replaced by the order of
    its first appearance, and Panel's numbered object names without their number (two builds
    of a page number their models and objects differently)."""
    import json
    import re

    text = json.dumps(doc.to_json(deferred=False), sort_keys=True)
    ids = set()

    def collect(node):
        if isinstance(node, dict):
            if isinstance(node.get("id"), str):
                ids.add(node["id"])
            for v in node.values():
                collect(v)
        elif isinstance(node, list):
            for v in node:
                collect(v)

    collect(json.loads(text))
    order: dict[str, str] = {}

    def rename(node):
        if isinstance(node, dict):
            return {k: rename(v) for k, v in node.items()}
        if isinstance(node, list):
            return [rename(v) for v in node]
        if isinstance(node, str) and node.removeprefix("__ref:") in ids:
            prefix, _, model_id = node.rpartition(":")
            return prefix + order.setdefault(model_id, f"model-{len(order)}")
        if isinstance(node, str):
            # "Column00192", and a template's "main-140303282089104" (a Python object id)
            return re.sub(r"^([A-Za-z]+\d?)\d{5}$|^([a-z]+-)\d{9,}$", r"\1\2#", node)
        if isinstance(node, int) and not isinstance(node, bool) and node > 10**12:
            return "#"  # a Python object id (Panel tags a js_on_click's CustomJS with its widget's)
        return node

    return rename(json.loads(text))


@pytest.mark.parametrize("source", ["scenarios", "model"])
def test_a_page_built_with_lazy_empty_defaults_is_the_page_bokeh_builds(
    source, restore_speedups, monkeypatch
):
    from app.classroom import codes

    # Each page draws a random class id for its browser; the two pages compared share one.
    monkeypatch.setattr(codes, "new_student_id", lambda: "the-same-student-id-00")
    assert bokeh_speedups.apply()
    fast_doc = _page(source)
    # Nothing read the empty containers: most were never built (that is the memory saved).
    never_built = sum(
        len(bokeh_speedups._empty_by_default(type(m)) - m._unstable_default_values.keys())
        for m in fast_doc.models
    )
    assert never_built > 5 * len(fast_doc.models)
    # Each model's references in the order Bokeh's walk finds them, and the whole page's.
    fast_refs = {m.id: [r.id for r in m.references()] for m in fast_doc.models}
    fast_walk = [m.id for m in collect_models(*fast_doc.roots)]
    fast = _json_with_ids_in_order(fast_doc)
    bokeh_speedups.remove()
    # The same document walked by Bokeh's own function (which builds every container) ...
    assert {m.id: [r.id for r in m.references()] for m in fast_doc.models} == fast_refs
    assert [m.id for m in collect_models(*fast_doc.roots)] == fast_walk
    # ... and a page built by Bokeh's own constructor serialise the same.
    slow = _json_with_ids_in_order(_page(source))
    assert fast == slow


def test_an_empty_default_built_late_is_owned_like_bokehs(restore_speedups):
    from bokeh.models import Div

    def exercise():
        div, seen = Div(), []
        div.on_change("tags", lambda attr, old, new: seen.append(list(new)))
        div.tags.append("moved")  # an in-place change of a default nobody had read
        div.styles["color"] = "red"
        return seen, div.properties_with_values(include_defaults=False), div.references()

    assert bokeh_speedups.apply()
    fast = exercise()
    bokeh_speedups.remove()
    slow = exercise()
    assert fast[0] == slow[0] == [["moved"]]
    assert fast[1] == slow[1]
    assert {"tags", "styles"} <= fast[1].keys()
    assert len(fast[2]) == len(slow[2]) == 1


def test_which_defaults_are_made_per_instance_is_read_once_per_class_as_bokeh_answers(
    restore_speedups,
):
    # Bokeh asks each property's descriptor for every new model; the shortcut asks once per
    # class. The answers must be the same for every model of a page.
    doc = _page("model")
    for model in doc.models:
        per_model = tuple(
            name
            for name in model.properties(_with_props=True)
            if model.lookup(name).has_unstable_default(model)
        )
        assert bokeh_speedups._unstable_by_default(type(model)) == per_model, type(model)


def test_a_themed_model_reads_its_themes_values_as_bokeh_does(restore_speedups):
    from bokeh.models import Div, Range1d

    def exercise():
        div, plain = Div(), Range1d()
        div.apply_theme({"text": "themed", "visible": False})
        seen = (div.themed_values(), plain.themed_values(), div.text, div.visible)
        div.apply_theme({})  # unthemed again: Bokeh removes the values
        return (*seen, div.themed_values(), div.text)

    assert bokeh_speedups.apply()
    fast = exercise()
    bokeh_speedups.remove()
    assert (
        exercise()
        == fast
        == ({"text": "themed", "visible": False}, None, "themed", False, None, "")
    )
