"""The catalogues (app/i18n/locales/, docs/translating.md): the template is what `pybabel
extract` finds in the app today, every language's catalogue translates every entry of it and
keeps its placeholders, Arabic keeps formulas left to right, and the pseudo-locales are made
from the template with their placeholders and tags intact."""

from __future__ import annotations

import re

import pytest
from babel.messages.catalog import Catalog

from app.i18n import catalogues, pseudo_locales
from app.i18n.catalogues import DOMAINS
from app.i18n.languages import LANGUAGES, LONG, MIRRORED, TRANSLATED
from app.i18n.translator import LRI, PDI, Translator
from tools import translations


def _forms(text) -> tuple:
    """A message's id or string as a tuple of its forms (a plural entry has several)."""
    return text if isinstance(text, tuple) else (text,)


def _entries(catalogue) -> dict:
    return {
        (message.context, message.id): (sorted(message.locations), message.auto_comments)
        for message in catalogue
        if message.id
    }


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_template_is_exactly_what_pybabel_extracts_from_the_code(tmp_path, domain):
    fresh = tmp_path / f"{domain}.pot"
    translations.run(translations.extract_args(fresh, domain))
    extracted = _entries(catalogues.read_catalogue(fresh))
    committed = _entries(catalogues.read_catalogue(catalogues.template_path(domain)))
    new = sorted(str(key) for key in extracted.keys() - committed.keys())
    gone = sorted(str(key) for key in committed.keys() - extracted.keys())
    assert (new, gone) == ([], []), "run: python -m tools.translations extract && ... update"
    assert extracted == committed  # the same places and translator comments too


def test_every_file_belongs_to_one_domain_and_the_first_screen_is_in_the_lab():
    files = {domain: translations.domain_files(domain) for domain in DOMAINS}
    every = [name for names in files.values() for name in names]
    assert len(every) == len(set(every)), "a file in two domains"
    assert "app/views/controls.py" in files["lab"] and "app/views/weights.py" in files["plots"]
    assert "app/lessons/model_lessons.py" in files["model_lessons"]
    assert catalogues.domain_of("app/classroom/store.py") == "class"
    assert len(catalogues.read_catalogue(catalogues.template_path("lab"))) > 30


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("code", TRANSLATED)
def test_a_catalogue_translates_every_entry_of_the_template_and_keeps_its_placeholders(
    code, domain
):
    language = LANGUAGES[code]
    path = catalogues.po_path(language, domain)
    catalogue = catalogues.read_catalogue(path, locale=language.catalogue)
    template = catalogues.read_catalogue(catalogues.template_path(domain))
    assert not catalogue.fuzzy, f"{path}: its header is marked fuzzy (its plural rule unused)"
    assert {(m.context, m.id) for m in catalogue if m.id} == {
        (m.context, m.id) for m in template if m.id
    }, "python -m tools.translations update, then translate what is new"
    assert not catalogue.obsolete, f"obsolete entries: {list(catalogue.obsolete)}"
    for message in catalogue:
        if not message.id:
            continue
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        assert all(strings), f"{code}: {message.id!r} is not translated"
        assert not message.fuzzy, f"{code}: {message.id!r} is fuzzy"
        wanted = sorted(pseudo_locales.placeholders(ids[0]))
        for text in strings:
            assert sorted(pseudo_locales.placeholders(text)) == wanted, (code, message.id, text)
        assert not message.check(catalogue), (code, message.id)


@pytest.mark.parametrize("domain", DOMAINS)
def test_arabic_keeps_formulas_names_and_numbers_left_to_right(domain):
    """Every Latin letter, digit, formula sign or placeholder inside an Arabic string sits in a
    left-to-right isolate (LRI ... PDI), as an Arabic textbook prints q·k and √d_k."""
    language = LANGUAGES["ar"]
    catalogue = catalogues.read_catalogue(catalogues.po_path(language, domain), locale="ar")
    isolated = re.compile(f"{LRI}[^{LRI}{PDI}]*{PDI}")
    for message in catalogue:
        if message.id:
            for text in _forms(message.string):  # every plural form of a plural entry
                outside = isolated.sub("", text)
                assert not re.search(r"[A-Za-z0-9√·τ{}]", outside), (message.id, text)


def test_the_catalogues_translate_at_run_time_per_language():
    spanish, chinese, arabic = Translator("es"), Translator("zh-Hans"), Translator("ar")
    assert spanish.gettext("Lessons") == "Lecciones"
    assert chinese.gettext("Language") == "语言"
    assert arabic.gettext("Lessons") == "الدروس" and arabic.dir == "rtl"
    assert Translator("en").gettext("Lessons") == "Lessons"
    assert spanish.gettext("not in the catalogue") == "not in the catalogue"
    assert (spanish.lang, chinese.lang, arabic.lang) == ("es", "zh-Hans", "ar")


def test_numbers_follow_the_language():
    assert Translator("es").format_decimal(0.25) == "0,25"
    assert Translator("en").format_decimal(0.25) == "0.25"
    assert Translator("es").format_decimal(12345.5) == "12.345,5"
    assert Translator("es").format_percent(0.42) == "42\xa0%"
    assert Translator("ar").format_decimal(0.25) == "0.25"  # Latin digits, as the plots
    assert Translator("zh-Hans").format_percent(0.42) == "42%"


def test_plurals_and_contexts_come_from_the_catalogue():
    made = Catalog(locale="ar", domain="lab")
    forms = ("صفر", "واحد", "اثنان", "قليل", "كثير", "آخر")
    made.add(("{n} key", "{n} keys"), forms)
    made.add("Keys", "لوحة المفاتيح", context="header")
    tr = Translator("ar", catalogue=catalogues.compile_catalogue(made))
    said = [tr.ngettext("{n} key", "{n} keys", n) for n in (0, 1, 2, 5, 11, 100)]
    assert said == list(forms)
    assert tr.pgettext("header", "Keys") == "لوحة المفاتيح"
    assert tr.pgettext("elsewhere", "Keys") == "Keys"


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("code", [LONG, MIRRORED])
def test_the_pseudo_locales_change_every_entry_and_keep_placeholders_and_tags(code, domain):
    catalogue = catalogues.pseudo_catalogue(code, domain)
    template = catalogues.read_catalogue(catalogues.template_path(domain))
    assert {m.id for m in catalogue if m.id} == {m.id for m in template if m.id}
    for message in catalogue:
        if not message.id:
            continue
        assert message.string != message.id
        for text, source in zip(_forms(message.string), _forms(message.id), strict=True):
            assert pseudo_locales.placeholders(text) == pseudo_locales.placeholders(source)
    assert Translator(code).gettext("Lessons") != "Lessons"


def test_x_long_is_about_forty_percent_longer_marked_and_accented():
    text = "Step {number} of <b>{total}</b> &amp; more"
    long = pseudo_locales.lengthen(text)
    assert long.startswith(pseudo_locales.OPEN) and long.endswith(pseudo_locales.CLOSE)
    assert "{number}" in long and "<b>{total}</b>" in long and "&amp;" in long
    assert "Šţéþ" not in long and "Št" in long  # accented, placeholders untouched
    for source in ("Lessons", "Temperature τ (log scale)", "Measure"):
        assert 1.3 <= len(pseudo_locales.lengthen(source)) / len(source) <= 1.6, source


def test_x_rtl_forces_each_run_right_to_left_around_what_it_keeps():
    mirrored = pseudo_locales.mirror("Step {number} of <i>{total}</i>")
    runs = [p for p, kept in pseudo_locales.pieces(mirrored) if not kept and p.strip()]
    assert runs and all(r.startswith(pseudo_locales.RLM + pseudo_locales.RLO) for r in runs)
    assert "{number}" in mirrored and "<i>{total}</i>" in mirrored
