"""How the lab names a head in words in a session's language ("layer 13 head 8"), the one
translated twin of `engine.head_names.head_name`, and how a translated phrase sits inside a
sentence of a right-to-left language. No Panel here: the state's tables use it too."""

from __future__ import annotations

from app.i18n.translator import ENGLISH, Translator


def head_words(layer: int, head: int, tr: Translator = ENGLISH) -> str:
    """`engine.head_names.head_name` in the session's language: "layer 13 head 8"."""
    _ = tr.gettext
    # TRANSLATORS: the one way the lab names a head in words (counted from 0).
    return in_line(_("layer {layer} head {head}").format(layer=layer, head=head), tr)


def in_line(phrase: str, tr: Translator = ENGLISH) -> str:
    """A translated phrase set into a sentence's placeholder: in a right-to-left language it
    sits in a first-strong isolate (FSI ... PDI), so the left-to-right isolate that the
    placeholder has in an Arabic sentence does not reorder its Arabic words."""
    return f"\u2068{phrase}\u2069" if tr.dir == "rtl" and phrase else phrase
