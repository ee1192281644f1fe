"""One way of naming a head, in words and where a plot has no room for them. Its own module: the
engine's edits name the head they change, and engine.heads (which reads runs made of edits)
would otherwise be imported by them."""

from __future__ import annotations

from .wording import N_


def head_name(layer: int, head: int) -> str:
    """The one way the lab names a head in words: "layer 13 head 8" (read aloud as it is
    written; counted from 0 as the code counts)."""
    return f"layer {layer} head {head}"


def head_tag(layer: int, head: int) -> str:
    """A head's name where a plot has no room for words: "L13 H8". A view that draws it says
    once what it means (`HEAD_TAG_KEY`)."""
    return f"L{layer} H{head}"


HEAD_TAG_KEY = N_("L13 H8 is layer 13, head 8")  # marked: a page shows it translated
