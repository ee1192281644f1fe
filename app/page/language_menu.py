"""The header's language menu: each language named in itself, a link to this same address with
`lang=` changed (app/js/language_menu.js writes it when followed).

The address carries the whole lab (app/page/urlsync.py), so the page that opens in the other
language has the same settings, step and class. A disclosure of links, not a `<select>`: a
select's arrow keys change its value, and so would reload the page, at every press.
"""

from __future__ import annotations

import html

import param
from panel.reactive import ReactiveHTML

import attention_lab_assets
from app import js
from app.i18n.languages import LANGUAGES

# A globe drawn in the text's colour (an emoji globe needs a font the page may not have).
GLOBE = (
    '<svg class="lab-lang-globe" aria-hidden="true" viewBox="0 0 16 16" width="1em" height="1em" '
    'fill="none" stroke="currentColor" stroke-width="1.3"><circle cx="8" cy="8" r="6.5"/>'
    '<ellipse cx="8" cy="8" rx="2.8" ry="6.5"/><path d="M1.5 8h13M2.6 4.5h10.8M2.6 11.5h10.8"/>'
    "</svg>"
)


def _choice(code: str) -> str:
    language = LANGUAGES[code]
    return (
        f'<li><a href="?lang={html.escape(code)}" data-lang="{html.escape(code)}" '
        f'lang="{language.tag}" hreflang="{language.tag}" dir="{language.direction}">'
        f"{html.escape(language.name)}</a></li>"
    )


class LanguageMenu(ReactiveHTML):
    """A `<details>` whose summary is the word "Language" in the session's language; it also
    makes sure the page's `<html lang dir>` and title are the session's."""

    label = param.String(default="Language", doc="the menu's name, in the session's language")
    current = param.String(default="en", doc="the session's language (a key of LANGUAGES)")
    # What the page's <html> and <title> say. The served page already does (app/patches/
    # html_language.py), unless it was rendered from a reused session of another language:
    # the script then corrects them.
    tag = param.String(default="en", doc="<html lang>")
    direction = param.String(default="ltr", doc="<html dir>")
    title = param.String(default="", doc="<title>, in the session's language")

    _template = (
        '<details id="menu" class="lab-lang">'
        '<summary id="toggle" class="lab-lang-toggle">'
        f"{GLOBE} "
        '<span id="name">{{label}}</span></summary>'
        '<ul id="choices" class="lab-lang-list">'
        + "".join(_choice(code) for code in LANGUAGES)
        + "</ul></details>"
    )
    _scripts = js.sections("language_menu.js")  # noqa: RUF012 - Panel reads this class attribute
    _stylesheets = [attention_lab_assets.read_text("components", "language-menu.css")]  # noqa: RUF012
