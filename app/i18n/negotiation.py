"""Which language a session speaks: the link's `?lang=` first, then the browser's
`Accept-Language`, then English.

Both arrive from outside, so each is cut to a bound before it is read (a 100 KB header costs
what its first kilobyte costs) and nothing in either can raise: a tag Babel cannot parse is
skipped. An unknown `?lang=` gives English and one line, in English, that says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from babel.core import Locale, UnknownLocaleError

from app.i18n.languages import LANGUAGES, SOURCE

MAX_QUERY_CHARS = 35  # the longest tag BCP 47 advises keeping is 35 characters
MAX_HEADER_CHARS = 1024  # browsers send well under 200 characters
MAX_HEADER_ENTRIES = 16  # what a real Accept-Language lists; the rest is not read
# Traditional Chinese is not Simplified: such a reader gets their next language, not zh-Hans.
TRADITIONAL_REGIONS = frozenset({"TW", "HK", "MO"})
_BY_LOWER = {code.lower(): code for code in LANGUAGES}


@dataclass(frozen=True)
class Choice:
    code: str  # a key of LANGUAGES
    from_link: bool = False  # `?lang=` chose it: the address keeps it
    notice: str = ""  # one line for the page, in English, when the link's language is unknown


def choose(query: str | None, accept_language: str | None) -> Choice:
    """The session's language from the link's `lang` value and the request's header."""
    if query is not None and query.strip():
        wanted = query.strip()[:MAX_QUERY_CHARS]
        code = _match(wanted)
        if code is not None:
            return Choice(code, from_link=True)
        shown = ascii(wanted) if len(query.strip()) <= MAX_QUERY_CHARS else ascii(wanted + "...")
        return Choice(
            SOURCE, notice=f"lang={shown} is not a language the lab speaks; showing English."
        )
    for tag in preferred_tags(accept_language or ""):
        code = _match(tag)
        if code is not None:
            return Choice(code)
    return Choice(SOURCE)


def preferred_tags(header: str) -> list[str]:
    """The header's language tags, most preferred first (q=0 and malformed entries dropped)."""
    ranked = []
    for position, entry in enumerate(header[:MAX_HEADER_CHARS].split(",")[:MAX_HEADER_ENTRIES]):
        tag, _, params = entry.strip().partition(";")
        quality = _quality(params)
        if tag and tag != "*" and quality > 0:
            ranked.append((-quality, position, tag.strip()))
    return [tag for _, _, tag in sorted(ranked)]


def _quality(params: str) -> float:
    name, _, value = params.strip().partition("=")
    if not name:
        return 1.0
    if name.strip().lower() != "q":
        return 0.0
    try:
        quality = float(value.strip()[:8])
    except ValueError:
        return 0.0
    return quality if 0.0 <= quality <= 1.0 else 0.0


def _match(tag: str) -> str | None:
    """The language the lab speaks for a tag: exact (`zh-Hans`, `x-long`), else by its language
    (es-MX -> es, ar-EG -> ar, zh-CN, zh-SG and zh -> zh-Hans), else None."""
    exact = _BY_LOWER.get(tag.lower().replace("_", "-"))
    if exact is not None:
        return exact
    try:
        locale = Locale.parse(tag.replace("-", "_"))
    except (UnknownLocaleError, ValueError, TypeError):
        return None
    if locale.language == "zh":
        traditional = locale.script == "Hant" or (
            locale.script is None and locale.territory in TRADITIONAL_REGIONS
        )
        return None if traditional else "zh-Hans"
    return _BY_LOWER.get(locale.language) if locale.language != "x" else None
