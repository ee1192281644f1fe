"""The two pseudo-locales, made from the English of the template (PhET's `stringTest`, Android's
en-XA and ar-XB): a string that escaped the catalogue shows up as plain English among them.

- `lengthen`: accented, about 40% longer (German and Finnish run that much past English) and
  wrapped in ⟦ ⟧, so clipped text loses a visible bracket.
- `mirror`: each run of text forced right to left (RLO ... PDF, inside RLM marks), so the words
  read reversed and a layout that does not mirror stands out.

Placeholders (`{n}`, `%(name)s`), HTML tags and entities pass through untouched: the page
must still fill and render them.
"""

from __future__ import annotations

import re

OPEN, CLOSE = "⟦", "⟧"
GROWTH = 0.4
# What a translation keeps as it is: placeholders, tags, entities.
_KEPT = re.compile(r"(\{[^{}]*\}|%\([A-Za-z_]\w*\)[sdifr]|%[sdifr]|<[^<>]*>|&#?\w+;)")
_ACCENTED = str.maketrans("AaCcEeGgIiKkLlNnOoRrSsUuYyZz", "ÅåÇçÉéĞğÎîĶķĻļÑñÖöŘřŠšÛûÝýŽž")
# Padding that no markup reads as its own: "~~" was Markdown's strikethrough, which struck out
# a translated sentence that a Markdown pane showed.
PAD = "·"
RLM, RLO, PDF = "\u200f", "\u202e", "\u202c"


def pieces(text: str) -> list[tuple[str, bool]]:
    """`text` split into (piece, kept): kept pieces are placeholders, tags or entities."""
    return [(piece, bool(_KEPT.fullmatch(piece))) for piece in _KEPT.split(text) if piece]


def placeholders(text: str) -> list[str]:
    """The placeholders in `text`, in order (`{n}`, `%(name)s`, `%s`): a translation keeps them."""
    return [piece for piece, kept in pieces(text) if kept and not piece.startswith(("<", "&"))]


def lengthen(text: str) -> str:
    """The x-long form of `text`: accented, padded by about 40%, between ⟦ and ⟧."""
    if not text:
        return text
    words = sum(len(piece) for piece, kept in pieces(text) if not kept)
    dots = max(1, round(words * GROWTH) - 2)
    # In words of six, as a translation's extra words would wrap: one unbroken run pushed a
    # long string past a narrow column where real text wraps.
    pad = " ".join(PAD * min(6, dots - at) for at in range(0, dots, 6))
    body = "".join(piece if kept else piece.translate(_ACCENTED) for piece, kept in pieces(text))
    return f"{OPEN}{body}{pad}{CLOSE}"


def mirror(text: str) -> str:
    """The x-rtl form of `text`: each run of words forced right to left, placeholders kept."""
    return "".join(
        piece if kept or not piece.strip() else f"{RLM}{RLO}{piece}{PDF}{RLM}"
        for piece, kept in pieces(text)
    )
