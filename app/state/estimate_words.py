"""The attribution map's notes in words a student understands. Panel-free.

The engine's note names each reason with its measurement ("saturated: P(answer) = 1.000, where
log P is nearly flat; large step: 0.45 of the residual stream it changes; ..."); the tab and
the lesson say what it means for trusting the estimate.
"""

from __future__ import annotations

import math
import re

from app.i18n.markers import N_
from app.i18n.translator import ENGLISH, Translator
from engine.trained.attribution import SATURATED_P

from .scene_tables import Words

_NUMBER = r"(-?\d+(?:\.\d+)?)"
_SPEC = re.compile(r"(\+?)\.(\d)([f%])")


def written(x: float, spec: str, tr: Translator = ENGLISH) -> str:
    """`format(x, spec)` ("+.2f", ".1%", ".0%") in `tr`'s language: rounded by Python first, as
    the English is (Babel would round half to even), then written the language's way (a
    decimal comma in Spanish). English is Python's text, byte for byte."""
    text = format(x, spec)
    found = _SPEC.fullmatch(spec)
    if tr.code == "en" or found is None or not math.isfinite(x):
        return text
    sign, digits, kind = found.groups()
    places = "0." + "0" * int(digits) if int(digits) else "0"
    pattern = places + ("%" if kind == "%" else "")
    pattern = f"+{pattern};-{pattern}" if sign else pattern
    if kind == "%":
        return tr.format_percent(float(text.rstrip("%")) / 100, pattern)
    return tr.format_decimal(float(text), pattern)


def percent(p: float, tr: Translator = ENGLISH) -> str:
    """A probability with the digits that tell 0.9999 from 1 (a saturated answer's are all)."""
    if p < 0.99:
        return written(p, ".1%", tr)
    return written(p, ".2%", tr) if p < 0.999 else written(p, ".4%", tr)


def _saturated(p: str, tr: Translator = ENGLISH) -> str:
    _ = tr.gettext
    return _(
        "the model is already sure of its answer (P = {p}), where the probability curve is "
        "flat: a small nudge barely moves it, so the gradient cannot see what removing a whole "
        "head does"
    ).format(p=percent(float(p), tr))


def _large_step(size: str, tr: Translator = ENGLISH) -> str:
    _ = tr.gettext
    return _(
        "removing this head changes the layer's input by {share} of its size: too big a change "
        "for a straight-line estimate, and later heads may repair or amplify it"
    ).format(share=written(float(size), ".0%", tr))


def _cancelling(share: str, tr: Translator = ENGLISH) -> str:
    left, _ = float(share), tr.gettext
    # Rounded to 0% it read as if nothing were left: say "under 1%" instead.
    amount = _("under 1%") if left < 0.005 else written(left, ".0%", tr)
    return _(
        "its effects at different positions pull in opposite directions and mostly cancel "
        "(what is left is {amount} of their total), so a small error in each can flip the sum"
    ).format(amount=amount)


# A reason's own text may hold "; " (the large step's does): split only where a reason starts.
_SPLIT = re.compile(r"; (?=saturated:|large step:|cancelling:)")
_RULES = (
    (re.compile(r"saturated: P\(answer\) = " + _NUMBER), _saturated),
    (re.compile(r"large step: " + _NUMBER), _large_step),
    (re.compile(r"cancelling: the positions' terms sum to " + _NUMBER), _cancelling),
)


def reasons(
    note: str | None, leave_out: tuple[str, ...] = (), tr: Translator = ENGLISH
) -> list[str]:
    """Each reason the engine's note gives, in plain words (an unknown one is kept as it is),
    less those named in ``leave_out`` ("saturated": the page says it once per sentence)."""
    out = []
    for part in _parts(note):
        if part.startswith(leave_out):
            continue
        for pattern, words in _RULES:
            found = pattern.match(part)
            if found:
                out.append(words(found.group(1), tr))
                break
        else:
            out.append(part)
    return out


def sentence_warning(p: float, tr: Translator = ENGLISH) -> str:
    """The reason that holds for every head of a sentence whose answer has probability ``p``
    ("" when the answer is not saturated)."""
    return _saturated(str(p), tr) if p >= SATURATED_P else ""


def short(note: str | None) -> str:
    """The reasons' names alone, for a hover ("saturated, large step"; "" for none)."""
    return ", ".join(part.split(":", 1)[0] for part in _parts(note))


# The names of the engine's reasons to doubt an estimate (`short`), as the receipt's hover and
# its table list them: translated one by one, joined as the English joins them.
REASON_NAMES = {
    # TRANSLATORS: the receipt's hover: why a head's estimate may be off, in two words.
    "saturated": N_("saturated"),
    "large step": N_("large step"),
    "cancelling": N_("cancelling"),
}


def reason_names(note: str | None, tr: Translator = ENGLISH) -> str:
    """A head's reasons to doubt its estimate, named for the hover ("none" for none)."""
    _ = tr.gettext
    names = [name for name in short(note).split(", ") if name]
    return ", ".join(_(REASON_NAMES.get(name, name)) for name in names) or _("none")


class ReasonNames(Words):
    """`reason_names` as a table cell: the English names ("saturated, large step"), written in
    the reader's language where the table is shown (a list, so no one template says it)."""

    def __new__(cls, note: str | None):
        made = super().__new__(cls, None, reason_names(note))
        made.note = note
        return made

    def text(self, tr: Translator = ENGLISH) -> str:
        return reason_names(self.note, tr)


def _parts(note: str | None) -> list[str]:
    return [part for part in _SPLIT.split(note or "") if part]


# How alike two orders of the same heads are, by their rank correlation, in words a student
# can say aloud (1: the same order, 0: no relation, -1: the reverse).
_ORDERS = (
    (0.8, N_("almost the same order")),
    (0.5, N_("much the same order")),
    (0.2, N_("only loosely the same order")),
    (-0.2, N_("no clear order at all")),
)
REVERSE = N_("roughly the reverse order")


def order_words(rho: float, tr: Translator = ENGLISH) -> str:
    """The estimate's order of the heads against the real one, in words with the number."""
    _ = tr.gettext
    if math.isnan(rho):
        return _("an order that cannot be compared (every value is the same)")
    said = next((words for floor, words in _ORDERS if rho >= floor), REVERSE)
    return _("{order} (rank correlation {rho}: 1 is the same order, 0 no relation)").format(
        order=_(said), rho=written(rho, ".2f", tr)
    )


def probability_factor(change: float, tr: Translator = ENGLISH) -> str:
    """A change of log P as what it does to the probability: -0.69 -> "× 0.50"."""
    factor = math.exp(change)
    if factor >= 100:
        return f"× {factor:.0f}"
    if factor >= 0.01:
        return f"× {written(factor, '.2f', tr)}"
    return f"× {factor:.0e}".replace("e-0", "e-")


LOG_P_WORDS = N_(
    "log P is the logarithm of the answer's probability: a change of −0.7 halves the "
    "probability, −2.3 leaves a tenth of it, +0.7 doubles it"
)
