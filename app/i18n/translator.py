"""`Translator`: one session's language, made once per page and passed to the views that show
text (never `gettext.install`, never a process-wide current language: every student's session
shares one process, each in its own language).

View code writes `_ = tr.gettext` and `_("...")`, so `pybabel extract` finds the strings; a
label declared elsewhere with `N_` is translated where it is shown, `_(field.label)`.
"""

from __future__ import annotations

from functools import lru_cache

from babel import Locale
from babel.numbers import NumberPattern, parse_pattern

from app.i18n import catalogues
from app.i18n.languages import SOURCE, Language, language

# Unicode isolates: a formula or a number inside right-to-left text keeps its own order.
LRI, PDI = "\u2066", "\u2069"
# Numbers formatted and kept, process-wide: Babel parses a pattern anew on every call (most of
# what a translated page cost more than an English one), and a class opening the same lab
# formats the same numbers page after page. Bounded: a student's drag makes new numbers.
FORMATTED_KEPT = 16384


@lru_cache(maxsize=64)
def _locale(code: str) -> Locale:
    return Locale.parse(code)


@lru_cache(maxsize=256)
def _pattern(kind: str, pattern: str | None, code: str) -> NumberPattern:
    if pattern is None:  # the language's own pattern for this kind of number
        formats = {
            "decimal": _locale(code).decimal_formats,
            "percent": _locale(code).percent_formats,
            "scientific": _locale(code).scientific_formats,
        }[kind]
        return formats[None]
    return parse_pattern(pattern)


@lru_cache(maxsize=FORMATTED_KEPT)
def formatted(kind: str, number, pattern: str | None, code: str) -> str:
    """`number` as Babel's format_decimal, format_percent or format_scientific (`kind`) writes
    it with `pattern` in the language `code`, from the cache when written before."""
    return _pattern(kind, pattern, code).apply(number, _locale(code))


class Translator:
    """The text and numbers of one session's language; `lang` and `dir` for `<html>`."""

    def __init__(self, code: str = SOURCE, catalogue=None):
        """`catalogue`: a compiled catalogue to use instead of the language's (tests)."""
        self.language: Language = language(code)
        self._catalogue = catalogue or catalogues.translations(self.language)

    @property
    def code(self) -> str:
        return self.language.code

    @property
    def lang(self) -> str:
        """The BCP 47 tag for `<html lang>`."""
        return self.language.tag

    @property
    def dir(self) -> str:
        return self.language.direction

    @property
    def right_to_left(self) -> bool:
        return self.language.direction == "rtl"

    def gettext(self, message: str) -> str:
        return self._catalogue.gettext(message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return self._catalogue.ngettext(singular, plural, n)

    def pgettext(self, context: str, message: str) -> str:
        return self._catalogue.pgettext(context, message)

    def format_decimal(self, number, format: str | None = None) -> str:  # noqa: A002 - Babel's name
        """`number` as this language writes it (0,25 in Spanish), in Latin digits: the plots'
        ticks and the formulas use them, so the text matches what the plots show."""
        return formatted("decimal", number, format, self.language.numbers)

    def format_percent(self, number, format: str | None = None) -> str:  # noqa: A002
        return formatted("percent", number, format, self.language.numbers)

    def format_scientific(self, number, format: str | None = None) -> str:  # noqa: A002
        return formatted("scientific", number, format, self.language.numbers)

    def isolated(self, text: str) -> str:
        """`text` (a formula, a number) kept left to right inside this language's text."""
        return f"{LRI}{text}{PDI}" if self.right_to_left else text


ENGLISH = Translator()  # what a page built without a request speaks (tests, the benchmark)
