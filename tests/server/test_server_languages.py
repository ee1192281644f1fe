"""The served lab in each student's language (issue 44): a real server on loopback, read over
HTTP (the page's <html lang dir> and title) and over the websocket (the session's document, as
a browser gets it): `?lang=es`, `?lang=ar`, `Accept-Language: zh-CN`, an unknown language.

The server reuses pages as a served lab does by default: one kept page per path and language
(app/server/cli.py's page key), so the HTML of a Spanish link says Spanish even right after an
Arabic one."""

from __future__ import annotations

import re

import pytest
from labserver import http_get, open_session

from tools.harness import clean_env, serve_lab

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def own_pages(tmp_path_factory):
    server = serve_lab(tmp_path_factory.mktemp("languages") / "server.log", env=clean_env())
    yield server
    server.stop()


def _page(server, query: str = "", headers=None) -> tuple[str, str]:
    status, _, body = http_get(f"{server.base}/app{query}", headers=headers)
    assert status == 200
    page = body.decode()
    html_tag = re.search(r"<html[^>]*>", page).group(0)
    title = re.search(r"<title>([^<]*)</title>", page).group(1)
    return html_tag, title


def _texts(doc) -> dict:
    """The teaching tabs' titles and every string any model of the document holds."""
    tabs = [
        panel.title
        for model in doc.models
        if type(model).__name__ == "Tabs"
        for panel in model.tabs
    ]
    strings = set()
    for model in doc.models:
        for value in model.properties_with_values(include_defaults=False).values():
            if isinstance(value, str) and value:
                strings.add(value)
    return {"tabs": tabs, "strings": strings}


def test_a_spanish_link_serves_a_spanish_page(own_pages):
    html_tag, title = _page(own_pages, "?lang=es")
    assert 'lang="es"' in html_tag and "dir=" not in html_tag
    assert title == "Laboratorio de atención"
    shown = open_session(f"{own_pages.base}/app", {"lang": "es"}, _texts)
    assert shown["connected"]
    assert ["Lecciones", "¿Por qué es tan aguda?", "Auditoría", "Compartir y exportar"] in [
        shown["tabs"][i : i + 4] for i in range(len(shown["tabs"]))
    ]
    assert "Temperatura τ (escala logarítmica)" in shown["strings"]


def test_an_arabic_link_serves_a_right_to_left_page(own_pages):
    html_tag, title = _page(own_pages, "?lang=ar")
    assert 'lang="ar"' in html_tag and 'dir="rtl"' in html_tag and title == "مختبر الانتباه"
    assert 'dir="rtl"' in _page(own_pages, "?lang=x-rtl")[0]


def test_a_chinese_browser_gets_chinese_and_an_english_one_english(own_pages):
    html_tag, title = _page(own_pages, headers={"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"})
    assert 'lang="zh-Hans"' in html_tag and title == "注意力实验室"
    html_tag, title = _page(own_pages, headers={"Accept-Language": "en-GB,en;q=0.9"})
    assert html_tag.startswith('<html lang="en" ') and "dir=" not in html_tag
    assert title == "Attention Lab"


def test_an_unknown_language_gives_english_with_a_notice_in_english(own_pages):
    html_tag, title = _page(own_pages, "?lang=tlh")
    assert html_tag.startswith('<html lang="en" ') and title == "Attention Lab"
    shown = open_session(f"{own_pages.base}/app", {"lang": "tlh"}, _texts)
    assert "Lessons" in shown["tabs"]
    notices = [s for s in shown["strings"] if "is not a language the lab speaks" in s]
    assert notices and "tlh" in notices[0] and "English" in notices[0], notices


def test_a_hostile_language_costs_nothing_and_the_page_still_opens(own_pages):
    status, _, _ = http_get(
        f"{own_pages.base}/app?lang=" + "%3Cb%3E" * 300,
        headers={"Accept-Language": "zz;q=0.5, " * 3000},
    )
    assert status == 200
    assert http_get(f"{own_pages.base}/liveness")[0] == 200
