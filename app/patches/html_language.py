"""A page served in its session's language: `<html lang>` and `dir` (`speak`).

Panel's page template hard-codes `<html lang="en" ...>` (panel/_templates/base.html), and its
`html_attrs` variable cannot override it: a browser keeps the first `lang` of a tag. So a
page in another language is rendered from the same templates, read through a Jinja overlay of
Panel's own environment (public Jinja API) whose `base.html` is Panel's with that one tag
written from two template variables. The overlay is made once per process and template; the
tag is checked first, and if Panel's base.html no longer has it the page keeps Panel's own
(English) tag and the log says so. An English page is left exactly as Panel serves it.
"""

from __future__ import annotations

import functools
import logging

from jinja2 import ChoiceLoader, DictLoader, Template, TemplateNotFound

HARD_CODED = '<html lang="en" '
SPOKEN = (
    "<html lang=\"{{ html_lang | default('en') | e }}\""
    '{% if html_dir %} dir="{{ html_dir | e }}"{% endif %} '
)
_log = logging.getLogger("attention_lab.patches")


@functools.cache
def speaking(template: Template) -> Template | None:
    """`template` (a Panel page template) with its `<html>` tag read from `html_lang` and
    `html_dir`, or None when Panel's base.html is not the one read."""
    env = template.environment
    try:
        source = env.loader.get_source(env, "base.html")[0]
    except TemplateNotFound:
        source = ""
    if source.count(HARD_CODED) != 1:
        _log.warning("page_language: Panel's base.html has changed; pages say lang=en")
        return None
    base = source.replace(HARD_CODED, SPOKEN)
    overlay = env.overlay(loader=ChoiceLoader([DictLoader({"base.html": base}), env.loader]))
    return overlay.get_template(template.name)


def speak(page, lang: str, direction: str) -> bool:
    """Serve `page` (a Panel template) as `<html lang=lang dir=direction>`; False where Panel's
    template could not be read (the page then says lang="en")."""
    if lang == "en" and direction == "ltr":
        return True  # what Panel's page already says
    spoken = speaking(page.template)
    if spoken is None:
        return False
    page.template = spoken
    # BasicTemplate has no public add_variable (only the custom Template has); these two are
    # copied into the document's template variables with the others when it is served.
    page._render_variables["html_lang"] = lang
    page._render_variables["html_dir"] = direction if direction == "rtl" else ""
    return True
