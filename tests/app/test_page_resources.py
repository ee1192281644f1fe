"""A lab page loads no MathJax (app/patches/panel_resources.py): nothing it shows is TeX, so the narrower
check must say no for every page, and yes as soon as a pane holds TeX. And no component's
stylesheet comes from Panel's CDN while the server serves its own resources."""

from __future__ import annotations

import dataclasses

import panel as pn
import pytest
from bokeh.document import Document
from panel.io.state import set_curdoc

from app.i18n.said import shown_value
from app.i18n.translator import Translator
from app.lessons.lab_lessons import LESSONS
from app.lessons.model_lessons import MODEL_LESSONS
from app.page.lab_page import create_app
from app.patches.panel_resources import (
    has_tex,
    html_needs_mathjax,
    load_mathjax_only_for_tex,
    serve_stylesheets_from_this_server,
)
from app.state.lab_state import LabState


@pytest.mark.parametrize(
    "text",
    ["$$x^2$$", r"\(q \cdot k\)", r"\[\sqrt{d_k}\]", "weights $w_i$ sum to one"],
)
def test_tex_is_recognised(text):
    assert has_tex(text)


@pytest.mark.parametrize(
    "text",
    ["w·v / √d_k", "softmax(q·k / (T √d_k))", "costs $5 a month", "a $ sign", "<b>1/sqrt(d_k)</b>"],
)
def test_plain_text_is_not_tex(text):
    assert not has_tex(text)


def _opened_page() -> Document:
    """A page with everything opened: the analysis plots, More settings, every tab."""
    doc = Document()
    with set_curdoc(doc):
        page = create_app(LabState())
        page.server_doc(doc)
        lab = page.lab
        lab.show_analysis()
        lab.show_more_settings()
        for tab in [t.name for t in lab.layout.teaching.objects]:
            lab.open_tab(tab)
    return doc


def test_no_page_text_asks_for_mathjax_and_a_tex_pane_does():
    doc = _opened_page()
    assert not html_needs_mathjax(doc.roots)
    with set_curdoc(doc):
        pane = pn.pane.Markdown("The scale is $$1/\\sqrt{d_k}$$.")
        doc.add_root(pane.get_root(doc))
    assert html_needs_mathjax(doc.roots)


def _strings(step) -> list[str]:
    out = []
    for field in dataclasses.fields(step):
        value = getattr(step, field.name)
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, tuple):
            out.extend(v for v in value if isinstance(v, str))
    return out


def test_no_lesson_text_is_tex():
    """Lesson steps are shown later than the first page: their text must not need MathJax."""
    for step in (*LESSONS, *MODEL_LESSONS):
        for text in _strings(step):
            assert not has_tex(text), (step.title, text)
    for step in LESSONS:  # the measured sentences too, in English and in Spanish
        measured = step.run(LabState())[2]
        for tr in (Translator("en"), Translator("es")):
            assert not has_tex(shown_value(measured, tr)), step.title


def test_the_check_is_installed_in_panel(monkeypatch):
    from panel.io import resources

    from app.patches import replace

    assert load_mathjax_only_for_tex()
    assert resources._panel_use_mathjax is html_needs_mathjax
    assert replace.undo("mathjax_only_for_tex")
    try:
        assert resources._panel_use_mathjax is not html_needs_mathjax  # Panel's own, back
        with monkeypatch.context() as patch:
            patch.delattr(resources, "_panel_use_mathjax")
            assert not load_mathjax_only_for_tex()  # a Panel without the check is left alone
            assert not hasattr(resources, "_panel_use_mathjax")
    finally:
        assert load_mathjax_only_for_tex()


def _stylesheet_urls(model) -> list[str]:
    from bokeh.models import ImportedStyleSheet

    return [str(s.url) for s in model.stylesheets if isinstance(s, ImportedStyleSheet)]


def test_a_component_styled_outside_a_page_takes_no_stylesheet_from_the_cdn(monkeypatch):
    """Panel styles a model it cannot place in a page (a part built before it is shown) with
    CDN stylesheets; served from this server (BOKEH_RESOURCES=server), none may be."""
    from panel.io.resources import CDN_DIST

    monkeypatch.setenv("BOKEH_RESOURCES", "server")
    assert serve_stylesheets_from_this_server()
    urls = _stylesheet_urls(pn.widgets.Button(name="Next").get_root())
    assert urls, "the button has no imported stylesheet to check"
    assert not [u for u in urls if u.startswith(("http:", "https:", "//"))], urls
    # Told to use the CDN, Panel's choice stands.
    monkeypatch.setenv("BOKEH_RESOURCES", "cdn")
    assert any(u.startswith(CDN_DIST) for u in _stylesheet_urls(pn.widgets.Button().get_root()))


def test_the_pages_policy_lets_it_load_nothing_from_another_origin():
    """The CSP (app/server/guard.py) names no host and no scheme that reaches one: with every
    resource served by the lab, a script, stylesheet, font or image from elsewhere is refused."""
    from app.server.guard import CONTENT_SECURITY_POLICY

    allowed = {"'self'", "'none'", "'unsafe-inline'", "'unsafe-eval'", "data:", "blob:"}
    for directive in CONTENT_SECURITY_POLICY.split(";"):
        name, *sources = directive.split()
        assert set(sources) <= allowed, (name, sorted(set(sources) - allowed))
