"""The catalogues' chores, with pybabel's own commands (docs/translating.md):

    python -m tools.translations extract   # app/ -> app/i18n/locales/lab.pot
    python -m tools.translations update    # lab.pot -> every language's lab.po (new, changed)
    python -m tools.translations init LOCALE   # a new language's lab.po (e.g. fr, pt_BR)

tests/app/test_catalogues.py extracts with the same arguments and fails when the committed
template or a catalogue is behind the code.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from babel.messages.frontend import CommandLineInterface

from app.i18n.catalogues import LOCALES, TEMPLATE

ROOT = Path(__file__).resolve().parents[1]
MAPPING = ROOT / "app" / "i18n" / "babel.cfg"
KEYWORDS = ("_", "N_", "ngettext:1,2", "pgettext:1c,2")


def extract_args(output: Path) -> list[str]:
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
        "app",
    ]


def run(args: list[str]) -> None:
    # From the checkout's root: the template names files as app/..., wherever this is run.
    with contextlib.chdir(ROOT):
        CommandLineInterface().run(args)


def main(argv: list[str]) -> None:
    command = argv[0] if argv else "extract"
    if command == "extract":
        run(extract_args(TEMPLATE))
    elif command == "update":
        run(
            [
                "pybabel",
                "-q",
                "update",
                "-i",
                str(TEMPLATE),
                "-d",
                str(LOCALES),
                "-D",
                "lab",
                "--no-wrap",
                "--ignore-obsolete",
            ]
        )
    elif command == "init" and len(argv) == 2:
        run(
            [
                "pybabel",
                "-q",
                "init",
                "-i",
                str(TEMPLATE),
                "-d",
                str(LOCALES),
                "-D",
                "lab",
                "-l",
                argv[1],
                "--no-wrap",
            ]
        )
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
