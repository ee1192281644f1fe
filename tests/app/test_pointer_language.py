"""The step pointer says where a step's controls are in the page's language (its live region
and its cue on a folded sidebar), and in English as its own script always said it."""

from __future__ import annotations

from app.i18n.translator import Translator
from app.page.lab_page import Lab
from app.page.step_follower import POINTER_WORDS
from app.state.lab_state import LabState


def test_the_pointer_speaks_the_page_language():
    spanish = Lab(LabState(), Translator("es")).pointer.words
    english = Lab(LabState(), Translator("en")).pointer.words
    assert english == POINTER_WORDS
    assert set(spanish) == set(POINTER_WORDS) and "barra lateral" in spanish["cue"]
    assert all("{names}" in text for text in spanish.values())


def test_a_trained_heads_plane_axes_are_in_the_page_language():
    from app.page.lab_page import PROJECTION_CAPTIONS, captions_in

    assert captions_in(Translator("en")) == PROJECTION_CAPTIONS
    spanish = captions_in(Translator("es"))
    assert spanish["payload"][0][0] == "a lo largo de la salida de la cabeza"
    long = captions_in(Translator("x-long"))
    assert all(v.startswith("⟦") for axes in long.values() for a in axes for v in a)
