"""`Translator`: one session's language, made once per page and passed to the views that show
text (never `gettext.install`, never a process-wide current language: every student's session
shares one process, each in its own language).

View code writes `_ = tr.gettext` and `_("...")`, so `pybabel extract` finds the strings; a
label declared elsewhere with `N_` is translated where it is shown, `_(field.label)`.
"""

from __future__ import annotations

from babel.numbers import format_decimal, format_percent, format_scientific

from app.i18n import catalogues
from app.i18n.languages import SOURCE, Language, language

# Unicode isolates: a formula or a number inside right-to-left text keeps its own order.
LRI, PDI = "\u2066", "\u2069"


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
        return format_decimal(number, format=format, locale=self.language.numbers)

    def format_percent(self, number, format: str | None = None) -> str:  # noqa: A002
        return format_percent(number, format=format, locale=self.language.numbers)

    def format_scientific(self, number, format: str | None = None) -> str:  # noqa: A002
        return format_scientific(number, format=format, locale=self.language.numbers)

    def isolated(self, text: str) -> str:
        """`text` (a formula, a number) kept left to right inside this language's text."""
        return f"{LRI}{text}{PDI}" if self.right_to_left else text


ENGLISH = Translator()  # what a page built without a request speaks (tests, the benchmark)
