"""The languages the lab speaks: each one's code (as `?lang=` names it), its name in itself
for the menu, the tag `<html lang>` carries, its direction and the Babel locale its numbers use.

English is the source: its strings are the catalogue's ids. The two pseudo-locales are made from
the template at load (app/i18n/pseudo_locales.py) to catch clipped, untranslated or mirrored
text before a translator sees the page; they are English underneath, so their numbers are too.
"""

from __future__ import annotations

from dataclasses import dataclass

SOURCE = "en"
LONG, MIRRORED = "x-long", "x-rtl"


@dataclass(frozen=True)
class Language:
    code: str  # as ?lang= names it and the address keeps it
    name: str  # in itself, for the language menu
    tag: str  # BCP 47, for <html lang>: a pseudo-locale is English in private use
    direction: str  # "ltr" or "rtl", for <html dir>
    numbers: str  # the Babel locale that formats its numbers
    catalogue: str = ""  # its folder under locales/ ("" for English and the pseudo-locales)

    @property
    def pseudo(self) -> bool:
        return self.code in (LONG, MIRRORED)


LANGUAGES: dict[str, Language] = {
    language.code: language
    for language in (
        Language("en", "English", "en", "ltr", "en"),
        Language("es", "Español", "es", "ltr", "es", catalogue="es"),
        Language("zh-Hans", "简体中文", "zh-Hans", "ltr", "zh_Hans_CN", catalogue="zh_Hans"),
        Language("ar", "العربية", "ar", "rtl", "ar", catalogue="ar"),
        Language(LONG, "Ëñğļîšĥ (long)", "en-x-long", "ltr", "en"),
        Language(MIRRORED, "English (mirrored)", "en-x-rtl", "rtl", "en"),
    )
}
# The languages of the catalogues translators keep (the pseudo-locales have none of their own).
TRANSLATED = tuple(code for code, language in LANGUAGES.items() if language.catalogue)


def language(code: str) -> Language:
    """The language `code` names exactly (see negotiation.py for a browser's or a link's tag)."""
    return LANGUAGES[code]
