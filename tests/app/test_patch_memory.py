"""The three patches that shrink what an open page holds (docs/patches.md): a pane's own layout
built on demand (app/patches/panel_panes.py), a Bokeh container's owners in a tuple
(app/patches/bokeh_owners.py) and an instance's watchers in slots (app/patches/param_watchers.py).
Each behaves as the code it replaces wherever Param, Panel and Bokeh read it."""

from __future__ import annotations

import copy
import logging
import pickle

import panel as pn
import param
import pytest
from bokeh.document import Document
from bokeh.models import ColumnDataSource, Div
from hypothesis import given
from hypothesis import strategies as st
from panel.io.state import set_curdoc

from app.page.lab_page import create_app
from app.patches import apply_all, bokeh_owners, panel_panes, param_watchers, replace
from app.patches.param_watchers import ValueWatchers
from app.state.lab_state import LabState


def setup_module():
    assert all(apply_all().values())


def _refused_on_another_source(caplog, name, install, module, key=None) -> None:
    """The patch, undone, then installed again with another source recorded as read: it must
    refuse, change nothing and log why; afterwards it is installed as before."""
    assert replace.undo(name)
    try:
        with pytest.MonkeyPatch.context() as patch:
            if key is None:
                patch.setattr(module, "CHECKED_SOURCE", "another source")
            else:
                patch.setitem(module.CHECKED_SOURCE, key, "another source")
            with caplog.at_level(logging.WARNING, logger="attention_lab.patches"):
                assert install() is False
            assert not replace.is_in(name)
            assert f"patch {name} skipped" in caplog.text
    finally:
        assert install()


# -- panes ------------------------------------------------------------------------------------


def test_a_panes_layout_is_built_when_read_and_follows_the_pane_as_panels_did():
    pane = pn.pane.HTML("<p>x</p>", width=100, margin=(5, 10))
    assert "_lab_pane_layout" not in vars(pane)  # nothing built yet
    layout = pane.layout
    assert isinstance(layout, pn.Row) and list(layout.objects) == [pane]
    assert pane.layout is layout  # built once
    assert layout.width == 100 + 10 + 10  # the pane's width and its side margins, as Panel's
    pane.width = 200
    assert layout.width == 220  # and kept in step afterwards
    pane.visible = False
    assert layout.visible is False


def test_panes_used_through_their_layout_still_work():
    assert isinstance(pn.panel("some *text*"), pn.pane.Markdown)  # unpacked from its layout
    pane = pn.pane.Markdown("a")
    assert pane[0] is pane  # `pane[i]` reads the layout
    form = pn.Param(param.Parameterized(name="p"))  # Panel's Param pane sets its own layout
    assert isinstance(form.layout, pn.Column)


def test_a_lab_page_builds_no_pane_layout():
    doc = Document()
    with set_curdoc(doc):
        page = create_app(LabState())
        page.server_doc(doc)
    panes = page.lab.layout.stage.select(pn.pane.PaneBase)
    assert panes and not [p for p in panes if "_lab_pane_layout" in vars(p)]


def test_an_unread_panel_keeps_its_eager_layouts(caplog):
    from panel.pane.base import PaneBase

    panels_own = PaneBase.__init__.original
    install = panel_panes.pane_layouts_on_demand
    _refused_on_another_source(caplog, "pane_layouts_on_demand", install, panel_panes)
    assert PaneBase.__init__ is not panels_own  # installed again afterwards
    replace.undo("pane_layouts_on_demand")
    try:
        assert PaneBase.__init__ is panels_own and "layout" not in vars(PaneBase)  # undone
        assert isinstance(pn.pane.HTML("x").layout, pn.Row)  # Panel's own, eager
    finally:
        assert install()


# -- Bokeh container owners -------------------------------------------------------------------


def test_a_container_keeps_each_owner_once_and_tells_every_owner_of_a_change():
    doc = Document()
    a, b = Div(), Div()
    doc.add_root(a)
    doc.add_root(b)
    a.tags = [1]
    b.tags = a.tags  # one list, two owners
    owners = a.tags._owners
    assert isinstance(owners, tuple) and {o for o, _ in owners} == {a, b} and len(owners) == 2
    a.tags._register_owner(a, owners[0][1])  # again: kept once
    assert len(a.tags._owners) == 2
    changed = []
    doc.on_change(lambda event: changed.append(event.model))
    a.tags.append(2)
    assert set(changed) == {a, b}
    b.tags = [3]  # b lets go of the shared list
    assert [o for o, _ in a.tags._owners] == [a]
    a.tags._unregister_owner(b, owners[0][1])  # not an owner: nothing happens
    assert len(a.tags._owners) == 1


def test_an_unowned_container_makes_no_owner_collection():
    from bokeh.core.property.wrappers import PropertyValueList

    loose = PropertyValueList([1, 2])
    assert loose._owners == () and "_owners" not in vars(loose)


def test_column_data_streams_and_patches_reach_the_source():
    doc = Document()
    source = ColumnDataSource({"x": [1, 2]})
    doc.add_root(source)
    events = []
    doc.on_change(lambda event: events.append(type(event).__name__))
    source.stream({"x": [3]})
    source.patch({"x": [(0, 9)]})
    source.data.update(x=[5])
    assert events == ["ColumnsStreamedEvent", "ColumnsPatchedEvent", "ColumnDataChangedEvent"]
    assert list(source.data["x"]) == [5]


def test_an_unread_bokeh_keeps_its_sets(caplog):
    from bokeh.core.property.wrappers import PropertyValueContainer

    install = bokeh_owners.owners_in_tuples
    for key in bokeh_owners.CHECKED_SOURCE:
        _refused_on_another_source(caplog, "owners_in_tuples", install, bokeh_owners, key)
    assert PropertyValueContainer._register_owner is bokeh_owners._register_owner  # in again


# -- Param instance watchers ------------------------------------------------------------------


class _Thing(param.Parameterized):
    a = param.Number(1)
    b = param.Number(2)


def test_watchers_fire_unwatch_and_read_as_the_dict_did():
    thing, seen = _Thing(), []
    first = thing.param.watch(lambda e: seen.append(("first", e.name)), ["a", "b"])
    second = thing.param.watch(lambda e: seen.append(("second", e.name)), "a")
    kept = thing.param.watchers
    assert isinstance(kept["a"], ValueWatchers) and kept["a"]["value"] == [first, second]
    assert dict(kept["b"]) == {"value": [first]} and list(kept["b"].items()) == [("value", [first])]
    assert kept.get("b", {}).get("value", []) == [first] and "value" in kept["a"]
    thing.a = 5
    assert seen == [("first", "a"), ("second", "a")]
    thing.param.unwatch(first)
    thing.param.unwatch(first)  # idempotent, as in Param
    seen.clear()
    thing.param.update(a=6, b=7)
    assert seen == [("second", "a")]
    kept["a"]["value"].reverse()  # Panel's NamedListLike reorders the list in place
    assert kept["a"]["value"] == [second]


def test_a_copied_or_pickled_instance_keeps_its_watchers():
    thing = _Thing()
    thing.param.watch(_record, "a")
    for twin in (copy.deepcopy(thing), pickle.loads(pickle.dumps(thing))):  # noqa: S301 - our own bytes
        _record.seen = []
        twin.a = 3
        assert _record.seen == [3]


def _record(event):
    _record.seen.append(event.new)


def test_panel_layouts_still_order_their_own_watchers_first():
    # Panel's NamedListLike reverses its watcher list so that its names update first.
    tabs = pn.Tabs(("one", pn.pane.HTML("1")))
    first = tabs.param.watchers["objects"]["value"][0]
    assert first.fn == tabs._update_names
    tabs.objects = [pn.pane.HTML("2")]
    assert len(tabs) == 1


@given(
    st.lists(
        st.tuples(st.sampled_from(["set", "del", "get"]), st.sampled_from(["value", "other"])),
        max_size=12,
    )
)
def test_value_watchers_answer_as_a_dict_would(operations):
    compact, plain = ValueWatchers(), {}
    for i, (op, key) in enumerate(operations):
        if op == "set":
            compact[key] = plain[key] = [i]
        elif op == "del":
            assert (key in compact) == (key in plain)
            if key in plain:
                del compact[key], plain[key]
        assert compact.get(key) == plain.get(key)
        assert dict(compact) == plain and len(compact) == len(plain)
        assert sorted(compact) == sorted(plain)


def test_an_unread_param_keeps_its_dicts(caplog):
    from param.parameterized import Parameters

    install = param_watchers.compact_instance_watchers
    _refused_on_another_source(caplog, "compact_instance_watchers", install, param_watchers)
    assert Parameters.__dict__["_register_watcher"] is param_watchers._register_watcher
