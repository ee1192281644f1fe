"""The gettext catalogues: each language's `.po`, read and compiled in memory once per process.

No binary `.mo` is committed or built: Babel reads the `.po` and writes the `.mo` into memory
(a few milliseconds per language, once per process), so a checkout, a wheel and the image run
the catalogue a translator last saved, and there is no second file to forget to rebuild. The
compiled catalogue is read-only and shared by every session of that language.

The pseudo-locales have no `.po`: they are made from the template (`lab.pot`) the same way.
"""

from __future__ import annotations

import functools
import gettext
import io
import threading
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from app.i18n import pseudo_locales
from app.i18n.languages import LONG, MIRRORED, Language

LOCALES = Path(__file__).resolve().parent / "locales"
TEMPLATE = LOCALES / "lab.pot"
DOMAIN = "lab"
_lock = threading.Lock()  # two sessions opening the first Spanish page compile it once


def po_path(language: Language) -> Path:
    return LOCALES / language.catalogue / "LC_MESSAGES" / f"{DOMAIN}.po"


def read_catalogue(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as f:
        return read_po(f, locale=locale)


def translations(language: Language) -> gettext.NullTranslations:
    """The compiled catalogue of `language` (English: none, its ids are its text)."""
    with _lock:
        return _compiled(language)


@functools.cache
def _compiled(language: Language) -> gettext.NullTranslations:
    if language.catalogue:
        catalogue = read_catalogue(po_path(language), locale=language.catalogue)
    elif language.code in (LONG, MIRRORED):
        catalogue = pseudo_catalogue(language.code)
    else:
        return gettext.NullTranslations()
    return compile_catalogue(catalogue)


def compile_catalogue(catalogue: Catalog) -> gettext.GNUTranslations:
    # Fuzzy entries are never used (Babel's default): a guess never reaches a student.
    buffer = io.BytesIO()
    write_mo(buffer, catalogue)
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)


def pseudo_catalogue(code: str) -> Catalog:
    """A catalogue whose every entry is the template's English, lengthened or mirrored."""
    change = pseudo_locales.lengthen if code == LONG else pseudo_locales.mirror
    template = read_catalogue(TEMPLATE)
    made = Catalog(locale="en", domain=DOMAIN)
    for message in template:
        if not message.id:
            continue
        if isinstance(message.id, tuple):
            made.add(
                message.id, tuple(change(part) for part in message.id), context=message.context
            )
        else:
            made.add(message.id, change(message.id), context=message.context)
    return made
