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
from app.patches.panel_events import clicks_under_the_document_lock
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


def _every_component_kind() -> list:
    """One of each kind of component a lab page holds (and a few it does not)."""
    from app.page.lab_page import create_app

    page = create_app()
    page.lab.show_pair_rows()
    kinds = {type(v): v for v in page.lab.layout.sidebar[0].select()}
    for root in (*page.lab.sidebar(), *page.lab.main_area()):
        for v in pn.panel(root).select():
            kinds.setdefault(type(v), v)
    for extra in (pn.pane.HTML("x"), pn.widgets.TextInput(), pn.Tabs(), pn.Card()):
        kinds.setdefault(type(extra), extra)
    return list(kinds.values())


def test_design_modifiers_from_the_table_are_panels_own_and_fresh_each_call():
    from panel.theme import Bootstrap, Material
    from panel.theme.base import Design

    from app.patches import apply_all
    from app.views.style import LabDesign

    apply_all()
    cached = Design._get_modifiers.__func__
    original = cached.original
    components = _every_component_kind()
    assert len(components) > 20
    for design in (LabDesign(), Bootstrap(), Material(), Bootstrap(theme="dark")):
        cls = type(design)
        for viewable in components:
            for isolated in (True, False):
                want = original(cls, viewable, design.theme, isolated)
                first = cached(cls, viewable, design.theme, isolated)
                again = cached(cls, viewable, design.theme, isolated)
                assert first == again == want, (cls, type(viewable))
                if "stylesheets" in first:
                    # A caller may extend what it gets: the table's copy stays as it was.
                    assert first["stylesheets"] is not again["stylesheets"]
                    first["stylesheets"].append("changed")
                    assert cached(cls, viewable, design.theme, isolated) == want
                assert first is not again


def test_a_theme_with_its_own_stylesheet_goes_to_panel_every_time(tmp_path, monkeypatch):
    from panel.io.state import state
    from panel.theme import Bootstrap

    from app.patches import apply_all

    apply_all()
    css = tmp_path / "mine.css"
    css.write_text(".mine {}")
    theme = Bootstrap().theme
    theme.css = str(css)  # the app's own file: its URL depends on the page's request
    widget = pn.widgets.TextInput()
    first, _ = Bootstrap._get_modifiers(widget, theme, True)
    monkeypatch.setattr(type(state), "rel_path", property(lambda self: "../.."))
    second, _ = Bootstrap._get_modifiers(widget, theme, True)
    mine = [s for s in second["stylesheets"] if s.endswith("mine.css")]
    assert mine and mine[0].startswith("../../") and mine[0] not in first["stylesheets"]


def test_markdown_from_the_table_is_panels_own_for_every_lesson_text():
    from panel.pane.markup import Markdown

    from app.lessons.lab_lessons import LESSONS
    from app.lessons.model_lessons import MODEL_LESSONS
    from app.patches import apply_all, panel_markdown

    apply_all()
    cached = Markdown._transform_object
    original = cached.original
    texts = [t for s in (*LESSONS, *MODEL_LESSONS) for t in (s.title, s.setup, s.action)]
    texts += ["", "**bold** <script>x</script>", "# h\n\n- a\n- b", "line one\nline two"]
    panes = [Markdown(), Markdown(hard_line_break=True), Markdown(renderer="markdown")]
    for pane in panes:
        for text in texts:
            want = original(pane, text)
            first, again = cached(pane, text), cached(pane, text)
            assert first == again == want, text
            assert first is not again  # a caller may change what it gets
    # The options are part of the key: the same text renders differently with them.
    hard, soft = panes[1], panes[0]
    assert cached(hard, "a\nb") != cached(soft, "a\nb")
    assert len(cached.table) <= panel_markdown.MAX_ENTRIES


def test_markdown_table_is_bounded_and_leaves_odd_objects_to_panel(monkeypatch):
    from panel.pane.markup import Markdown

    from app.patches import apply_all, panel_markdown

    apply_all()
    cached = Markdown._transform_object
    monkeypatch.setattr(panel_markdown, "MAX_ENTRIES", 3)  # read at each insertion
    pane = Markdown()
    for i in range(10):
        cached(pane, f"text {i}")
    assert len(cached.table) <= 3
    too_long = "x" * (panel_markdown.MAX_TEXT + 1)
    before = len(cached.table)
    assert cached(pane, too_long) == cached.original(pane, too_long)
    assert len(cached.table) == before


# Addresses Panel reads correctly: the lab's function must read them exactly as Panel does.
ORDINARY_ADDRESSES = [
    ("http", "localhost:5006", "/app"),
    ("http", "localhost:5006", "/app?scenario=contest&temperature=0.5"),
    ("https", "lab.school.example", "/app?class=ABC123"),
    ("http", "127.0.0.1:8080", "/app#results"),
    ("http", "::ffff:10.0.0.7:5006", "/app?lesson=3"),
    ("http", "::1", "/app"),
    ("https", "lab.example", "https,/app?x=1"),
    ("http", "lab.example:80", "http://lab.example/app?x=1#y"),
    (None, None, None),
    ("http", None, "/app?x="),
]
# Addresses that raised in Panel, and what a browser's `new URL(...)` reads from them.
ODD_ADDRESSES = {
    ("http", "localhost:5006", "/app?note=why?&scenario=contest"): {
        "pathname": "/app",
        "search": "?note=why?&scenario=contest",
    },
    ("http", "localhost:5006", "/app#top?x=1"): {"pathname": "/app", "hash": "#top?x=1"},
    ("http", "localhost:5006", "/app?a=1#b#c"): {
        "pathname": "/app",
        "search": "?a=1",
        "hash": "#b#c",
    },
    ("http", "[::1]:5006", "/app?x=1"): {"hostname": "[::1]", "port": "5006", "search": "?x=1"},
    ("http", "[2001:db8::7]", "/app"): {"hostname": "[2001:db8::7]", "pathname": "/app"},
    ("http", "2001:db8::7", "/app"): {"hostname": "2001:db8::7", "pathname": "/app"},
}


def test_addresses_panel_reads_are_read_the_same_and_the_others_as_a_browser_does():
    from panel.io import location

    from app.patches import apply_all, panel_location

    apply_all()
    assert location._get_location_params is panel_location.location_params
    original = panel_location.location_params.original
    for address in ORDINARY_ADDRESSES:
        assert panel_location.location_params(*address) == original(*address), address
    for address, want in ODD_ADDRESSES.items():
        with pytest.raises(ValueError):
            original(*address)
        got = panel_location.location_params(*address)
        assert got.items() >= want.items(), (address, got)
    for host in ("[2001:db8::7]", "2001:db8::7", "lab.example"):
        assert "port" not in panel_location.location_params("http", host, "/app"), host


class _ServedDocument:
    """What `Syncable._server_event` reads of a served document: a session context, and a
    next-tick callback (which Bokeh runs under the session's document lock)."""

    session_context = True

    def __init__(self):
        self.next_tick = []

    def add_next_tick_callback(self, callback):
        self.next_tick.append(callback)


def test_a_click_while_a_change_is_pending_runs_under_the_document_lock(monkeypatch):
    """Panel 1.9.4 ran it through `state.execute`, outside the lock: the click's handler
    raised in Bokeh and the click was lost (tests/browser/test_keyboard.py's "On to step")."""
    from panel.io.state import state
    from panel.reactive import Syncable

    monkeypatch.setattr(Syncable, "_server_event", Syncable._server_event)  # put back after
    assert clicks_under_the_document_lock()
    outside = []
    monkeypatch.setattr(state, "execute", lambda callback, schedule="auto": outside.append(1))
    button, doc = pn.widgets.Button(), _ServedDocument()
    state._change_callbacks[doc] = {"pending": lambda: None}  # a change from the page, pending
    try:
        button._server_event(doc, "click")
    finally:
        del state._change_callbacks[doc]
    assert outside == []
    [scheduled] = doc.next_tick
    assert scheduled.func == button._event_coroutine and scheduled.args == (doc, "click")


def test_a_text_panes_first_update_sends_no_stylesheets():
    # Drawn in a template with the stylesheets its updates compute (panel_design.py): a new
    # text changes the text alone, so Bokeh has no model swap to walk the page for.
    from bokeh.document.events import ModelChangedEvent
    from panel.io.state import set_curdoc

    doc = Document()
    with set_curdoc(doc):
        text = pn.pane.Markdown("first", stylesheets=[":host { color: navy; }"])
        html = pn.pane.HTML("<p>first</p>")
        pn.template.BootstrapTemplate(main=[pn.Column(text, html)]).server_doc(doc)
        events = []
        doc.on_change(lambda event: events.append(event))
        text.object = "second"
        html.object = "<p>second</p>"
    changed = {e.attr for e in events if isinstance(e, ModelChangedEvent)}
    assert "text" in changed and "stylesheets" not in changed


def _served_text_panes(*panes):
    from panel.io.state import set_curdoc

    doc = Document()
    with set_curdoc(doc):
        pn.template.BootstrapTemplate(main=[pn.Column(*panes)]).server_doc(doc)
    return doc


def _model(pane):
    return next(iter(pane._models.values()))[0]


def test_a_text_panes_new_text_alone_is_sent_as_panel_renders_it():
    from panel.io.state import set_curdoc
    from panel.pane.markup import HTMLBasePane

    from app.patches.panel_markdown import update_text_panes_with_their_text

    assert update_text_panes_with_their_text()
    fast = [pn.pane.Markdown("a", css_classes=["x"]), pn.pane.HTML("<b>a</b>")]
    full = [pn.pane.Markdown("a", css_classes=["x"]), pn.pane.HTML("<b>a</b>")]
    doc = _served_text_panes(*fast, *full)
    texts = ["**one** & <two>", "line\n\n- item", "", "plain"]
    with set_curdoc(doc):
        for text in texts:
            for pane in (*fast, *full):
                if pane in full:  # Panel's own full re-render, for comparison
                    pane.__dict__.pop("_lab_render_options", None)
                pane.object = text
            for ours, panels in zip(fast, full, strict=True):
                theirs = _model(panels)
                assert _model(ours).text == theirs.text
                assert _model(ours).css_classes == theirs.css_classes
                assert _model(ours).stylesheets == theirs.stylesheets
    assert HTMLBasePane._update.lab_text_only


def test_a_change_of_a_text_panes_classes_or_alert_type_still_reaches_its_model():
    import html

    from panel.io.state import set_curdoc

    text = pn.pane.Markdown("a", css_classes=["x"])
    alert = pn.pane.Alert("careful", alert_type="warning")
    doc = _served_text_panes(text, alert)
    with set_curdoc(doc):
        text.object = "b"  # the first update: Panel's own, in full
        text.object = "c"  # the text alone
        text.css_classes = ["y"]  # a render option of Markdown: in full again
        alert.object = "still careful"
        alert.alert_type = "danger"
    assert "y" in _model(text).css_classes and "x" not in _model(text).css_classes
    assert "<p>c</p>" in html.unescape(_model(text).text)
    assert "alert-danger" in _model(alert).css_classes


def _set_up_as_compared(params: dict) -> dict:
    """A component's set-up, its data model compared by kind and values (each call makes one)."""
    out = dict(params)
    data = out.pop("data", None)
    if data is not None:
        out["data"] = (type(data).__name__, data.properties_with_values(include_defaults=True))
    return out


def test_components_set_up_with_parameters_read_once_as_panel_sets_them_up():
    from app.page.lab_page import create_app
    from app.patches import apply_all, panel_params

    assert apply_all()["parameters_read_once"]
    page = create_app()
    page.lab.show_pair_rows()
    page.lab.show_analysis()
    compared = {"synced": 0, "reactive_html": 0}
    for root in (*page.lab.sidebar(), *page.lab.main_area(), *page.header):
        for component in pn.panel(root).select():
            method = getattr(type(component), "_init_params", None)
            if method is panel_params.synced_init_params:
                kind = "synced"
            elif method is panel_params.reactive_html_init_params:
                kind = "reactive_html"
            else:
                continue  # the class has its own set-up
            fast = _set_up_as_compared(method(component))
            assert fast == _set_up_as_compared(method.original(component)), type(component)
            compared[kind] += 1
    assert compared["synced"] > 30 and compared["reactive_html"] >= 8, compared


def test_a_reactive_html_set_up_copies_no_parameter_and_reads_an_instances_own():
    from app.page.a11y import ControlPointer
    from app.patches import apply_all

    apply_all()
    pointer = ControlPointer(names=["Temperature"], width=0, height=0, margin=0)
    own = pointer._param__private.params
    before = set(own)
    data = pointer._init_params()["data"]
    assert set(own) == before  # Panel's own copied about two dozen Parameter objects here
    assert "names" in data.properties_with_values(include_defaults=False)
    # A parameter given its own object on this instance is read from it, as Panel reads it.
    pointer.param.names.precedence = -1
    sent = pointer._init_params()["data"].properties_with_values(include_defaults=False)
    assert "names" not in sent
    assert ControlPointer.param.names.precedence is None  # the class's is untouched
