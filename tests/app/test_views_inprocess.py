"""The page's views driven in-process (no server, no browser): session isolation, one hold per
update, float32 columns, the drag path, and nothing built at import time."""

from __future__ import annotations

import importlib
import pkgutil

import numpy as np
import panel as pn
import pytest
from bokeh.model import Model

import app
from app.page.lab_page import create_app
from tests.browser.labpage import SOURCE_NAMES


def _equal(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "f" and b.dtype.kind == "f":
        return np.array_equal(a, b, equal_nan=True)
    return np.array_equal(a, b)


def _sources(page) -> dict:
    lab = page.lab
    lab.show_analysis()  # the page builds these when they are first scrolled to
    found = {}
    for view in (
        lab.geometry,
        lab.logits,
        lab.weights,
        lab.parts.built("entropy"),
        lab.parts.built("dimension"),
        lab.parts.built("jacobian"),
    ):
        for value in vars(view).values():
            if getattr(value, "name", None) in SOURCE_NAMES and hasattr(value, "data"):
                found[value.name] = value
    return found


def test_every_named_source_exists_with_float32_columns():
    sources = _sources(create_app())
    assert set(sources) == set(SOURCE_NAMES)
    for name, source in sources.items():
        numeric = [v for v in source.data.values() if isinstance(v, np.ndarray)]
        assert numeric, name
        floats = [v for v in numeric if v.dtype.kind == "f"]
        assert floats and all(v.dtype == np.float32 for v in floats), name


def test_two_pages_share_no_model_and_no_state():
    a, b = create_app(), create_app()
    sa, sb = _sources(a), _sources(b)
    assert not {id(s) for s in sa.values()} & {id(s) for s in sb.values()}
    assert a.lab.state is not b.lab.state
    untouched = {k: dict(v.data) for k, v in sb.items()}
    a.lab.state.swap_values(0, 1)
    a.lab.state.temperature = 0.3
    for name, source in sb.items():
        for column, values in untouched[name].items():
            assert _equal(source.data[column], values), name


def test_each_change_redraws_inside_exactly_one_hold(monkeypatch):
    page = create_app()
    calls = []
    real_hold = pn.io.hold

    def counting_hold(*args, **kwargs):
        calls.append(args)
        return real_hold(*args, **kwargs)

    monkeypatch.setattr(pn.io, "hold", counting_hold)
    page.lab.state.angle = 30.0
    assert len(calls) == 1
    page.lab.state.swap_values(0, 2)
    assert len(calls) == 2


def test_a_refused_change_keeps_the_last_drawing_and_shows_why():
    page = create_app()
    lab, state = page.lab, page.lab.state
    state.toggle_mask(0)
    state.toggle_mask(1)
    drawn = {k: {c: np.array(v) for c, v in s.data.items()} for k, s in _sources(page).items()}
    state.toggle_mask(2)  # every key masked: refused
    assert state.error and lab.status.error.visible
    assert "every key is masked" in lab.status.error.object
    for name, source in _sources(page).items():
        for column, values in drawn[name].items():
            assert _equal(source.data[column], values), (name, column)
    state.toggle_mask(0)
    assert not state.error and not lab.status.error.visible


def test_dragging_a_tip_sets_that_key_and_only_that_key():
    page = create_app()
    geometry, state = page.lab.geometry, page.lab.state
    keys_before = [list(k) for k in state.keys]
    data = dict(geometry.key_tips.data)
    data["x"] = [*data["x"][:2], 0.5]
    data["y"] = [*data["y"][:2], -0.5]
    geometry.key_tips.data = data  # what the browser's PointDrawTool sends back
    assert state.keys[2] == [0.5, -0.5]
    assert [list(k) for k in state.keys[:2]] == keys_before[:2]
    values_before = [list(v) for v in state.values]
    tip = dict(geometry.query_tip.data)
    geometry.query_tip.data = {"x": [0.0], "y": [2.0]}  # drag the query straight up
    assert state.angle == pytest.approx(90.0, abs=0.01)
    assert [list(v) for v in state.values] == values_before
    assert tip != geometry.query_tip.data


def test_many_keys_keep_one_row_per_key_but_draw_the_heaviest():
    page = create_app()
    page.lab.state.distractors = 1000
    weights = page.lab.weights.source.data
    assert len(weights["weight"]) == 1003
    rows = np.asarray(weights["row"])
    drawn = np.flatnonzero(~np.isnan(rows))
    assert len(drawn) == 11
    heaviest = np.argsort(-np.asarray(weights["weight"]), kind="stable")[:11]
    assert set(drawn) == set(heaviest)
    # The rest are one "all others" row holding their summed weight, drawn below the top rows.
    extra = page.lab.weights.extra.data
    assert extra["kind"] == ["others"] and extra["label"] == ["all others (992)"]
    rest = np.delete(np.asarray(weights["weight"], dtype=float), drawn).sum()
    assert extra["weight"][0] == pytest.approx(rest, rel=1e-5)
    assert extra["row"][0] == 11
    page.lab.show_analysis()
    assert len(page.lab.parts.built("jacobian").source.data["value"]) == 12 * 12


def test_served_modules_build_nothing_at_import():
    """Every module of the app but the served script (which builds the page, once per session)."""
    for info in pkgutil.walk_packages(app.__path__, "app."):
        if info.name in ("app.__main__", "app.server.serve"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            assert not isinstance(value, Model | pn.viewable.Viewable), (info.name, name)


def test_dragging_with_normalise_on_leaves_the_other_stored_keys_alone():
    page = create_app()
    geometry, state = page.lab.geometry, page.lab.state
    state.set_key(1, 3.0, 4.0)  # drawn at unit length once normalise is on
    state.normalise = True
    data = dict(geometry.key_tips.data)
    data["x"] = [*data["x"][:2], 0.5]
    data["y"] = [*data["y"][:2], -0.5]
    geometry.key_tips.data = data
    assert state.keys[1] == [3.0, 4.0]
    assert state.keys[2] == [0.5, -0.5]


def test_reset_restores_the_scenario():
    page = create_app()
    state, controls = page.lab.state, page.lab.controls
    fresh = page.lab.weights.source.data["weight"].copy()
    state.angle = 60.0
    state.temperature = 0.2
    assert not np.allclose(page.lab.weights.source.data["weight"], fresh)
    controls.reset.clicks += 1
    assert state.angle == 0.0 and state.temperature == 1.0
    np.testing.assert_allclose(page.lab.weights.source.data["weight"], fresh)


def _lab_widgets(page) -> list:
    from app.patches.panel_events import widgets_of

    lab = page.lab
    lab.show_pair_rows()
    rows = [
        w
        for row in lab.parts.built("pair_rows")._rows
        for w in (row.kx, row.ky, row.vx, row.vy, row.legal)
    ]
    return [*widgets_of(lab.controls), *widgets_of(lab.parts.built("candidates")), *rows]


def test_lab_controls_answer_a_browser_change_without_panels_wait():
    widgets = _lab_widgets(create_app())
    assert len(widgets) > 20
    plain = pn.widgets.FloatSlider()
    assert plain._debounce > 0  # Panel's default wait, which the lab's controls drop
    parts = [part for widget in widgets for part in widget.select(pn.widgets.Widget)]
    assert len(parts) > len(widgets)  # the editable sliders' slider and text box count too
    for part in parts:
        assert part._debounce == 0, part


def test_a_browser_change_to_a_lab_control_skips_the_process_wide_busy_counter(monkeypatch):
    from panel.io.state import state as panel_state

    page = create_app()
    busy = []
    monkeypatch.setattr(panel_state, "_add_busy_event", lambda event_id: busy.append(event_id))
    monkeypatch.setattr(panel_state, "_remove_busy_event", lambda event_id: None)

    pn.widgets.FloatSlider(start=0, end=1)._process_events({"value": 0.5})
    assert len(busy) == 1  # a plain widget counts itself busy for every change

    busy.clear()
    temperature = page.lab.controls.temperature
    temperature._process_events({"value": temperature.value + 0.1})
    assert busy == []
    assert page.lab.state.temperature == pytest.approx(10**temperature.value, rel=1e-3)


def test_a_released_page_leaves_nothing_behind():
    """After release() (run when Bokeh discards the session) the page can be freed whole."""
    import gc
    import weakref

    page = create_app()
    lab = page.lab
    lab.state.distractors = 9  # the page has been used (and opened "More settings")
    assert lab.parts.built("candidates") is not None
    alive = [
        weakref.ref(obj)
        for obj in (lab.state, lab, lab.parts.built("candidates").distractors, page)
    ]
    lab.release()
    del page, lab
    gc.collect()
    assert [ref() is None for ref in alive] == [True] * len(alive)


def test_the_page_releases_itself_when_its_session_is_discarded():
    from types import SimpleNamespace

    from bokeh.document import Document
    from panel.io.state import set_curdoc

    doc = Document()
    with set_curdoc(doc):
        lab = create_app().lab
    ours = [cb for cb in doc.session_destroyed_callbacks if getattr(cb, "__self__", None) is lab]
    assert len(ours) == 1
    released = []
    lab.release = lambda: released.append(True)
    ours[0](SimpleNamespace(id="closed-session"))  # as Bokeh calls it
    assert released == [True]
