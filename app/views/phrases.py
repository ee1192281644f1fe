"""The engine's and the state's sentences (`Phrase`, engine/wording.py) in a session's language.

A `Phrase` is English text that keeps its template and values; `phrase_text` translates the
template and writes each number the language's way (a decimal comma in Spanish). Anything else
(plain text, a sentence that lost its template on the way) is shown as it is, in English.
"""

from __future__ import annotations

from app.i18n.said import Number, Said
from app.i18n.translator import Translator
from engine.wording import Amount, Fixed, Phrase, Scientific, Share, Significant


def phrase_text(text: str, tr: Translator) -> str:
    """`text` in `tr`'s language when it is a `Phrase`; English is the text itself, exactly."""
    if not isinstance(text, Phrase) or tr.code == "en":
        return str(text)
    return said(text).text(tr)


def said(phrase: Phrase) -> Said:
    return Said(phrase.template, **{name: _value(v) for name, v in phrase.values.items()})


def _value(value):
    if isinstance(value, Phrase):
        return said(value)
    if isinstance(value, Share):
        return Number(
            value.value, "percent", "0." + "0" * value.digits + "%" if value.digits else "0%"
        )
    if isinstance(value, Fixed):
        pattern = "0." + "0" * value.digits if value.digits else "0"
        return Number(value.value, "decimal", pattern)
    if isinstance(value, Amount):
        return Number(value.value, "decimal", "0.######")
    if isinstance(value, Significant):
        # At most `digits` significant digits, no trailing zeros: Python's "g" (0.25, 1).
        return Number(value.value, "decimal", "@" + "#" * (value.digits - 1))
    if isinstance(value, Scientific):
        return Number(value.value, "scientific", "0." + "0" * value.digits + "E00")
    return value
