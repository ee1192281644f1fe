"""`N_`: marks a string for the catalogue where it is declared, without translating it.

A module-level string (a setting's label in app/state/settings_schema.py) is declared once for
every session, before any session has a language; `pybabel extract` finds it through this
marker, and the view that shows it translates it with its session's translator.
"""

from __future__ import annotations


def N_(message: str) -> str:  # noqa: N802 - gettext's own name for the marker
    return message
