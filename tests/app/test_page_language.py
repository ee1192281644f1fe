"""A page in its session's language, in-process: the choice of language (the link's `lang=`,
the browser's Accept-Language, English), its hostile forms, the first screen's words in each
language, the address keeping `lang=`, and an English page left as it was."""

from __future__ import annotations

import panel as pn
import param
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.i18n.languages import LANGUAGES
from app.i18n.negotiation import MAX_HEADER_CHARS, choose, preferred_tags
from app.page.lab_page import create_app
from app.page.session_language import page_key, requested_language
from app.page.urlsync import UrlSync
from app.state.lab_state import INPUTS, LabState


class FakeLocation(param.Parameterized):
    search = param.String(default="")


class FakeRequest:
    def __init__(self, arguments=None, headers=None):
        self.arguments, self.headers = arguments or {}, headers or {}


class FakeDoc:
    def __init__(self, request):
        self.session_context = type("Context", (), {"request": request})()


@pytest.mark.parametrize(
    ("query", "header", "code"),
    [
        ("es", None, "es"),
        ("ES", "zh-CN", "es"),  # the link first
        ("zh-Hans", None, "zh-Hans"),
        ("zh_CN", None, "zh-Hans"),
        ("x-long", None, "x-long"),
        ("x-rtl", "es", "x-rtl"),
        (None, "zh-CN,zh;q=0.9,en;q=0.8", "zh-Hans"),
        (None, "zh-SG", "zh-Hans"),
        (None, "zh", "zh-Hans"),
        (None, "zh-TW, es;q=0.5", "es"),  # Traditional is not Simplified: the next one
        (None, "es-MX,es;q=0.9", "es"),
        (None, "ar-EG", "ar"),
        (None, "fr-FR, de;q=0.9, ar;q=0.1", "ar"),
        (None, "en;q=0.1, es;q=0.9", "es"),  # by quality, not by order
        (None, "es;q=0, ar", "ar"),  # q=0 means "not this one"
        (None, "fr, de", "en"),
        (None, None, "en"),
        ("", "es", "es"),  # an empty lang= is no choice
    ],
)
def test_the_language_comes_from_the_link_then_the_browser_then_english(query, header, code):
    choice = choose(query, header)
    assert choice.code == code
    assert choice.from_link == bool(query) and not choice.notice


def test_an_unknown_language_in_the_link_gives_english_and_says_so_once_in_english():
    choice = choose("klingon", "es")
    assert choice.code == "en" and not choice.from_link
    assert choice.notice == "lang='klingon' is not a language the lab speaks; showing English."
    hostile = choose("<script>alert(1)</script>" * 4000, None)
    assert hostile.code == "en" and len(hostile.notice) < 120 and "..." in hostile.notice


def test_a_huge_header_is_read_no_further_than_its_bound():
    tail = ", de" * 100_000 + ", es"  # a preference after the bound is never read
    assert choose(None, "fr" + tail).code == "en"
    assert choose(None, "es" + tail).code == "es"
    assert len(preferred_tags("a," * 100_000)) <= 16
    big = "x" * MAX_HEADER_CHARS + ", es"
    assert choose(None, big).code == "en"


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.none(), st.text(max_size=300)), st.one_of(st.none(), st.text(max_size=300)))
def test_no_link_or_header_raises_and_every_choice_is_a_language_the_lab_speaks(query, header):
    choice = choose(query, header)
    assert choice.code in LANGUAGES
    assert "\n" not in choice.notice


def test_the_request_is_read_bounded_from_its_arguments_and_headers():
    request = FakeRequest({"lang": [b"es"]}, {"Accept-Language": "ar"})
    assert requested_language(FakeDoc(request)).code == "es"
    assert page_key(request) == "es"
    assert page_key(FakeRequest({}, {"accept-language": "zh-CN"})) == "zh-Hans"
    assert page_key(FakeRequest({"lang": [b"\xff\xfe" * 50_000]}, {})) == "en"
    assert requested_language(None).code == "en"


def _words(lab) -> set[str]:
    words = {tab.name for tab in lab.layout.teaching.objects}
    for widget in pn.Column(*lab.sidebar()).select(pn.widgets.Widget):
        words.add(str(getattr(widget, "label", "") or widget.name))
    return words | set(lab.layout.source_picker.options)


@pytest.mark.parametrize(
    ("code", "shown"),
    [
        ("es", {"Lecciones", "Auditoría", "Escenario", "Temperatura τ (escala logarítmica)"}),
        ("zh-Hans", {"课程", "场景", "训练好的模型"}),
        ("ar", {"الدروس", "السيناريو", "نموذج مُدرَّب"}),
    ],
)
def test_the_first_screen_speaks_the_sessions_language(code, shown):
    page = create_app(language=code)
    lab = page.lab
    assert shown <= _words(lab)
    assert not {"Lessons", "Scenario", "Hand-made vectors"} & _words(lab)
    assert lab.language_menu.current == code and lab.tools.skip_text != "Skip to the lesson"
    assert lab.lessons.measure.label != "Measure"
    assert page.title != "Attention Lab"


def test_a_tab_is_still_opened_by_its_english_name_in_any_language():
    lab = create_app(language="ar").lab
    lab.open_tab("Audit")
    assert lab.parts.built("audit") is not None
    assert lab.layout.teaching.objects[lab.layout.teaching.active].name == "تدقيق"


def test_an_english_page_says_what_it_said_before():
    lab = create_app().lab
    assert [tab.name for tab in lab.layout.teaching.objects] == [
        "Lessons",
        "Why is it sharp?",
        "Audit",
        "Share & export",
    ]
    assert lab.controls.temperature.name == "Temperature τ (log scale)"
    assert lab.lessons.previous.label == "◀ Previous" and lab.class_link.teach_text == (
        "Teach a class"
    )


def test_the_address_keeps_the_links_language_and_names_a_wrong_one():
    said = []
    location = FakeLocation(search="?lang=es&temperature=0.5")
    UrlSync(LabState(), location, INPUTS, notify=said.append, language="es")
    assert location.search.startswith("?lang=es&") and "temperature=0.5" in location.search
    assert said == []
    said, location = [], FakeLocation(search="?lang=xx")
    notice = choose("xx", None).notice
    UrlSync(LabState(), location, INPUTS, notify=said.append, notices=[notice])
    assert said == [f"Link: {notice}"] and "lang" not in location.search
