"""The language menu and the pseudo-locale in Chromium (issue 44): the menu is reached and used
by keyboard alone, the page comes back in the language chosen with the setting the student had
changed, and in `x-long` every translated part of the first screen carries the markers."""

from __future__ import annotations

import pytest

from app.i18n.pseudo_locales import CLOSE, OPEN, lengthen

from .labpage import FOCUSED, LOADED

pytestmark = pytest.mark.browser

FOCUSED_LANGUAGE = """() => {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  return el && el.dataset ? (el.dataset.lang || '') : '';
}"""
ROOT = "() => [document.documentElement.lang, document.documentElement.dir, document.title]"


def test_the_menu_switches_the_language_by_keyboard_and_keeps_a_changed_setting(open_lab):
    lab = open_lab("", more_settings=False)
    page = lab.page
    lab.slider_keys("Query angle (degrees)", "ArrowRight", times=3)
    lab.server_round_trip()
    lab.wait_until(lambda: "angle=3" in lab.search() or None, "the address to carry the angle")
    angle = [part for part in lab.search().lstrip("?").split("&") if part.startswith("angle=")]
    summary = page.locator("summary.lab-lang-toggle")
    summary.focus()
    assert page.evaluate(FOCUSED) == "Language"  # its accessible name
    page.keyboard.press("Enter")
    for _ in range(len(("en", "es"))):
        page.keyboard.press("Tab")  # English, then Español
    assert page.evaluate(FOCUSED_LANGUAGE) == "es"
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_function(LOADED, timeout=30000)
    assert lab.search().lstrip("?").split("&")[0] == "lang=es"
    assert page.evaluate(ROOT) == ["es", "", "Laboratorio de atención"]
    tabs = page.locator(".bk-tab").all_inner_texts()
    assert "Lecciones" in tabs and "Lessons" not in tabs
    lab.wait_until(
        lambda: page.locator("summary.lab-lang-toggle").inner_text().strip() == "Idioma" or None,
        "the menu named in Spanish",
    )
    # The setting came back with the page, and the address still carries it.
    assert angle[0] in lab.search().lstrip("?").split("&")
    title = page.locator(".bk-slider-title").filter(has_text="Ángulo de la consulta")
    assert title.first.inner_text().strip().endswith("3"), title.first.inner_text()


def test_in_x_long_every_translated_part_of_the_first_screen_carries_the_markers(open_lab):
    lab = open_lab("?lang=x-long", more_settings=False)
    page = lab.page
    assert page.evaluate(ROOT)[0] == "en-x-long"
    parts = {
        "tabs": page.locator(".bk-tab").all_inner_texts(),
        "header": page.locator("button.lab-teach, button.lab-keys-toggle").all_inner_texts()
        + page.locator("button.lab-presenter-toggle, summary.lab-lang-toggle").all_inner_texts(),
        "buttons": [
            page.get_by_role("button", name=lengthen(name)).first.inner_text()
            for name in ("Hand-made vectors", "A trained model", "Reset this scenario", "Measure")
        ],
        "sliders": page.locator(".bk-slider-title").all_inner_texts(),
    }
    for where, texts in parts.items():
        shown = [t.strip() for t in texts if t.strip()]
        assert shown, f"nothing found for {where}"
        for text in shown:
            assert OPEN in text and CLOSE in text, f"{where}: {text!r} escaped the catalogue"
    for english in ("Lessons", "Teach a class", "Query angle (degrees)", "Reset this scenario"):
        assert not lab.shows(english), f"{english!r} is shown untranslated"
    assert lab.search().startswith("?lang=x-long")
