"""Sentences the engine writes and the lab shows in a student's language.

The engine never imports the app (nor its translator), so a sentence it makes for the page is a
`Phrase`: its English template and the values of its placeholders. `str(phrase)` is the English,
as a notebook prints it; the app translates the template where it shows the sentence
(app/views/status.py); a `Problem`'s template goes the same way (`worded`). `N_` marks a module-level template for `pybabel extract` (tools/
translations.py), as app/i18n/markers.py does in the app.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def N_(message: str) -> str:  # noqa: N802 - gettext's own name for the marker
    return message


@dataclass(frozen=True)
class Share:
    """A share written as a percent: a value in [0, 1]; `digits` after the point."""

    value: float
    digits: int = 0

    def __str__(self) -> str:
        return f"{100 * self.value:.{self.digits}f}%"


@dataclass(frozen=True)
class Fixed:
    """A number with a fixed count of decimals (entropy 1.23 nats)."""

    value: float
    digits: int = 2

    def __str__(self) -> str:
        return f"{self.value:.{self.digits}f}"


@dataclass(frozen=True)
class Amount:
    """A number as Python's general format writes it in English (0.05, 20, 1e-06)."""

    value: float

    def __str__(self) -> str:
        return format(self.value, "g")


@dataclass(frozen=True)
class Significant:
    """A number with `digits` significant digits, as Python's "g" writes it (0.325, 1.2e-05)."""

    value: float
    digits: int = 3

    def __str__(self) -> str:
        return f"{self.value:.{self.digits}g}"


@dataclass(frozen=True)
class Scientific:
    """A number in scientific notation with `digits` decimals (an error: 1.23e-05)."""

    value: float
    digits: int = 2

    def __str__(self) -> str:
        return f"{self.value:.{self.digits}e}"


class Phrase(str):
    """An English sentence (a `str`: compared, logged and printed as the English) that keeps
    its template (marked with `N_`) and the values of its `{placeholders}` (text, a `Share`, a
    `Fixed`, an `Amount`, a `Significant`, a `Scientific` or another `Phrase`), so the lab can say it in a student's language. Anything done
    to it as text (`+`, `.strip()`) gives plain English text."""

    template: str
    values: dict[str, Any]

    def __new__(cls, template: str, values: dict[str, Any] | None = None) -> Phrase:
        values = dict(values or {})
        made = super().__new__(cls, template.format(**{k: str(v) for k, v in values.items()}))
        made.template, made.values = template, values
        return made


def listed(parts, sep: str = " ") -> Phrase:
    """Several phrases one after the other (sentences, with ``sep`` a space), each translated
    on its own: the joining template is no catalogue entry, so it reads the same in every
    language."""
    parts = list(parts)
    template = sep.join(f"{{part{i}}}" for i in range(len(parts)))
    return Phrase(template, {f"part{i}": part for i, part in enumerate(parts)})


def worded(error: Exception) -> str:
    """An error's message, as a `Phrase` when it is a `Problem` (engine/messages.py)."""
    template = getattr(error, "template", None)
    if isinstance(template, str):
        return Phrase(template, getattr(error, "values", {}))
    return str(error)
