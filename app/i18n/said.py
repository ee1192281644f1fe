"""`Said`: a sentence translated where it is shown, not where it is made.

A lesson's verdict, a notice or an error is often written far from any session (a function of a
snapshot, the engine): it returns `Said(template, values)`, the English template being the
catalogue's id and the values what its `{placeholders}` take. The view that shows it calls
`text(tr)` with its session's translator, which translates the template and each value that is
itself `Said`, and writes each number as the language writes it (`Number`).

    said = Said("{name} gets {share} of the weight", name="A", share=Number(0.42, "percent"))
    said.text(Translator("es"))  # "A recibe el 42 % del peso"
    str(said)                    # the English: "A gets 42% of the weight"

`pybabel extract` finds the template through the keyword `Said` (tools/translations.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.i18n.head_words import in_line
from app.i18n.translator import ENGLISH, Translator


@dataclass(frozen=True)
class Number:
    """A number written the way the session's language writes it: `style` "decimal" with a
    Babel `pattern` ("0.00", "#,##0", "@@@" for three significant digits), "percent" (0.42 ->
    42%; pattern "0.0%" for one decimal) or "scientific" ("0.00E00": 1.23E-05)."""

    value: float
    style: str = "decimal"
    pattern: str | None = None

    def text(self, tr: Translator) -> str:
        if self.style == "percent":
            return tr.format_percent(self.value, self.pattern)
        if self.style == "scientific":
            return tr.format_scientific(self.value, self.pattern)
        return tr.format_decimal(self.value, self.pattern)


@dataclass(frozen=True)
class Said:
    """An English template and the values of its placeholders, translated when shown."""

    template: str
    values: Mapping[str, Any] = field(default_factory=dict)

    def __init__(self, template: str, /, **values: Any):
        object.__setattr__(self, "template", template)
        object.__setattr__(self, "values", dict(values))

    def text(self, tr: Translator = ENGLISH) -> str:
        shown = {name: _placed(value, tr) for name, value in self.values.items()}
        return tr.gettext(self.template).format(**shown)

    def __str__(self) -> str:
        return self.text(ENGLISH)


def _placed(value: Any, tr: Translator) -> str:
    """A placeholder's value as set into its sentence: a translated phrase keeps its own
    direction inside the left-to-right isolate an Arabic sentence gives each placeholder."""
    text = shown_value(value, tr)
    return in_line(text, tr) if isinstance(value, Said) else text


def shown_value(value: Any, tr: Translator) -> str:
    """A placeholder's value in `tr`'s language: a `Said` or `Number` rendered, text as is."""
    if isinstance(value, (Said, Number)):
        return value.text(tr)
    return str(value)


def joined(parts: Iterable[Said | str], tr: Translator = ENGLISH, sep: str = " ") -> str:
    """Several sentences, each in `tr`'s language, one after the other."""
    return sep.join(shown_value(part, tr) for part in parts)
