"""The catalogues' chores, with pybabel's own commands (docs/translating.md):

    python -m tools.translations extract   # the code -> app/i18n/locales/DOMAIN.pot, each domain
    python -m tools.translations update    # each DOMAIN.pot -> every language's DOMAIN.po
    python -m tools.translations init LOCALE   # a new language's .po files (e.g. fr, pt_BR)

A string belongs to the domain of the file it is written in (app/i18n/catalogues.py's DOMAINS).
tests/app/test_catalogues.py extracts with the same arguments and fails when a committed
template or a catalogue is behind the code.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from babel.messages.frontend import CommandLineInterface

from app.i18n.catalogues import DOMAINS, LOCALES, domain_of, template_path

ROOT = Path(__file__).resolve().parents[1]
MAPPING = ROOT / "app" / "i18n" / "babel.cfg"
# `Said` (app/i18n/said.py) and `Problem` (engine/messages.py) carry a template translated where
# it is shown: their first argument is a catalogue entry too.
KEYWORDS = ("_", "N_", "gettext", "ngettext:1,2", "pgettext:1c,2", "Said:1", "Problem:1")


def domain_files(domain: str) -> list[str]:
    """The Python files whose strings go in `domain`, as paths under the checkout's root."""
    found = set()
    for place in DOMAINS[domain]:
        path = ROOT / place
        files = [path] if path.is_file() else path.rglob("*.py")
        for file in files:
            name = file.relative_to(ROOT).as_posix()
            if domain_of(name) == domain:
                found.add(name)
    return sorted(found)


def extract_args(output: Path, domain: str = "lab") -> list[str]:
    """pybabel extract's arguments: file names without line numbers (an edit elsewhere in a
    file does not change the template), sorted, translator comments kept."""
    keywords = [arg for keyword in KEYWORDS for arg in ("-k", keyword)]
    return [
        "pybabel",
        "-q",
        "extract",
        "-F",
        str(MAPPING),
        "--no-default-keywords",
        *keywords,
        "--add-comments=TRANSLATORS:",
        "--add-location=file",
        "--sort-output",
        "--project=Attention Lab",
        "--version=1",
        "--no-wrap",
        "-o",
        str(output),
        *domain_files(domain),
    ]


def run(args: list[str]) -> None:
    # From the checkout's root: the template names files as app/..., wherever this is run.
    with contextlib.chdir(ROOT):
        CommandLineInterface().run(args)


def update_args(domain: str) -> list[str]:
    return [
        "pybabel",
        "-q",
        "update",
        "-i",
        str(template_path(domain)),
        "-d",
        str(LOCALES),
        "-D",
        domain,
        "--no-wrap",
        "--ignore-obsolete",
        # A guessed translation (a near msgid's) is worse than none: the tests fail on both.
        "--no-fuzzy-matching",
    ]


def main(argv: list[str]) -> None:
    command = argv[0] if argv else "extract"
    domains = argv[1:] if command in ("extract", "update") and len(argv) > 1 else list(DOMAINS)
    if command == "extract":
        for domain in domains:
            run(extract_args(template_path(domain), domain))
    elif command == "update":
        for domain in domains:
            run(update_args(domain))
    elif command == "init" and len(argv) == 2:
        for domain in DOMAINS:
            init = ["pybabel", "-q", "init", "-i", str(template_path(domain)), "-d", str(LOCALES)]
            run([*init, "-D", domain, "-l", argv[1], "--no-wrap"])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
