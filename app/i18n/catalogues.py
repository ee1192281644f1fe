"""The gettext catalogues: each language's `.po`, read and compiled in memory once per process.

No binary `.mo` is committed or built: Babel reads the `.po` and writes the `.mo` into memory
(a few milliseconds per language, once per process), so a checkout, a wheel and the image run
the catalogue a translator last saved, and there is no second file to forget to rebuild. The
compiled catalogue is read-only and shared by every session of that language.

The strings are split into domains by the file they are written in (`DOMAINS`): one template
and one `.po` per language for each, so the lessons, the model pages, the class and the plots can
be translated (and reviewed) apart. A session's translator reads every domain of its language.

The pseudo-locales have no `.po`: they are made from the templates the same way.
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
# Each domain's files, as paths under the checkout's root (a folder takes every file in it);
# "lab" takes every file of app/ and engine/ no other domain names: the page, its controls, its
# notices and the engine's errors about them.
DOMAINS: dict[str, tuple[str, ...]] = {
    "lab": ("app", "engine"),
    "plots": (
        "app/views/analysis.py",
        "app/views/bars.py",
        "app/views/dimension_sweep.py",
        "app/views/entropy.py",
        "app/views/geometry.py",
        "app/views/jacobian.py",
        "app/views/label_layout.py",
        "app/views/logits.py",
        "app/views/page_figures.py",
        "app/views/plane_fit.py",
        "app/views/planes.py",
        "app/views/plot_text.py",
        "app/views/prediction.py",
        "app/views/style.py",
        "app/views/text_fit.py",
        "app/views/token_note.py",
        "app/views/weights.py",
        "app/state/chart_tables.py",
        "app/state/scene_tables.py",
    ),
    "lessons": (
        "app/lessons/lab_lessons.py",
        "app/lessons/reveals.py",
        "app/views/lesson_panel.py",
        "app/views/lesson_exploring.py",
        "app/page/held.py",
        "app/page/step_follower.py",
    ),
    "model_lessons": ("app/lessons/model_lessons.py", "app/lessons/copy_lessons.py"),
    "models": (
        "app/views/model_panel.py",
        "app/views/causal_view.py",
        "app/views/receipt_view.py",
        "app/views/receipt_labels.py",
        "app/views/find_heads.py",
        "app/views/loss_strip.py",
        "app/views/head_grid.py",
        "app/views/head_image.py",
        "app/views/head_tap.py",
        "app/views/head_axes.py",
        "app/state/model_state.py",
        "app/state/causal_state.py",
        "app/state/receipt_state.py",
        "app/state/copy_tables.py",
        "app/state/loss_tables.py",
        "app/state/head_tables.py",
        "app/state/head_patterns.py",
        "app/state/estimate_words.py",
        "app/state/estimated_map.py",
        "app/state/map_cost.py",
        "app/state/model_runs.py",
        "app/state/attribution_runs.py",
        "app/state/route_news.py",
        "engine/trained",
        "engine/heads.py",
        "engine/head_names.py",
    ),
    "class": (
        "app/classroom",
        "app/views/class_panel.py",
        "app/views/class_parts.py",
        "app/page/class_link.py",
        "app/server/class_routes.py",
    ),
}
_lock = threading.Lock()  # two sessions opening the first Spanish page compile it once


def template_path(domain: str) -> Path:
    return LOCALES / f"{domain}.pot"


def po_path(language: Language, domain: str) -> Path:
    return LOCALES / language.catalogue / "LC_MESSAGES" / f"{domain}.po"


def domain_of(path: str) -> str:
    """The domain of a file (a path under the checkout's root, as app/views/weights.py): the
    domain that names it or its folder most closely."""
    best, length = "lab", 0
    for domain, places in DOMAINS.items():
        for place in places:
            if (path == place or path.startswith(place + "/")) and len(place) > length:
                best, length = domain, len(place)
    return best


def read_catalogue(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as f:
        return read_po(f, locale=locale)


def translations(language: Language) -> gettext.NullTranslations:
    """The compiled catalogue of `language` (English: none, its ids are its text)."""
    with _lock:
        return _compiled(language)


@functools.cache
def _compiled(language: Language) -> gettext.NullTranslations:
    """Every domain's catalogue of `language`, each consulted in turn (a string two domains
    share is translated the same way in both; the first found is used)."""
    if not (language.catalogue or language.code in (LONG, MIRRORED)):
        return gettext.NullTranslations()
    chain = None
    for domain in DOMAINS:
        if language.catalogue:
            catalogue = read_catalogue(po_path(language, domain), locale=language.catalogue)
        else:
            catalogue = pseudo_catalogue(language.code, domain)
        compiled = compile_catalogue(catalogue)
        if chain is None:
            chain = compiled
        else:
            chain.add_fallback(compiled)
    return chain


def compile_catalogue(catalogue: Catalog) -> gettext.GNUTranslations:
    # Fuzzy entries are never used (Babel's default): a guess never reaches a student.
    buffer = io.BytesIO()
    write_mo(buffer, catalogue)
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)


def pseudo_catalogue(code: str, domain: str = "lab") -> Catalog:
    """A catalogue whose every entry is the domain's template's English, lengthened or
    mirrored."""
    change = pseudo_locales.lengthen if code == LONG else pseudo_locales.mirror
    template = read_catalogue(template_path(domain))
    made = Catalog(locale="en", domain=domain)
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
