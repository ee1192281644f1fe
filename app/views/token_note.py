"""A line under a chart that shows tokens, saying what their marks mean ("␣ is a space ...",
the continuation of a character split over byte tokens): `engine.heads.token_marks`, drawn
only when the tokens on screen use a mark (a toy's keys A, B, C need none)."""

from __future__ import annotations

from bokeh.models import Title

from app.i18n.translator import ENGLISH, Translator
from engine.heads import token_marks

from .style import FONT


def add_token_note(fig) -> Title:
    """An empty line below ``fig``'s plot, for `show_token_note`."""
    note = Title(
        text="",
        visible=False,
        text_font=FONT,
        text_font_size="13px",
        text_font_style="normal",
        text_color="#333333",
        align="left",
        tags=["note"],  # a line of text under the chart, not its title
    )
    fig.add_layout(note, "below")
    return note


def show_token_note(note: Title, labels, tr: Translator = ENGLISH) -> None:
    """Say what the marks in ``labels`` mean (hidden when none is used), each phrase in `tr`'s
    language where the catalogue has it (the phrases are engine/heads.py's)."""
    phrases = [tr.gettext(phrase) for phrase in token_marks(labels, sep="\n").split("\n") if phrase]
    text = "\n".join(phrases)
    if note.text != text:
        note.text = text
    if note.visible != bool(text):
        note.visible = bool(text)
