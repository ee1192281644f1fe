"""The page's own toasts in its language (app/page/lab_page.py): the reconnect notice is a
per-session Panel setting, so two students' pages in two languages each keep their own, and the
"That action failed" toast, raised without the page at hand, finds its page's language by the
session's document."""

from __future__ import annotations

import panel as pn
from bokeh.document import Document
from panel.io.state import set_curdoc

from app.page import lab_page
from app.state.lab_state import LabState


def _page(language: str) -> Document:
    doc = Document()
    with set_curdoc(doc):
        lab_page.create_app(LabState(), language=language)
    return doc


def test_two_pages_in_two_languages_keep_their_own_notices(monkeypatch):
    spanish, arabic = _page("es"), _page("ar")
    english = _page("en")
    shown = []
    monkeypatch.setattr(lab_page, "notify", lambda kind, text: shown.append((kind, text)))
    with set_curdoc(spanish):
        assert pn.config.disconnect_notification.startswith("Se perdió la conexión")
        pn.config.exception_handler(KeyError("x"))
    with set_curdoc(arabic):
        assert pn.config.disconnect_notification.startswith("انقطع الاتصال")
        pn.config.exception_handler(ValueError("x"))
    with set_curdoc(english):
        assert pn.config.disconnect_notification == (
            "Connection to the lab server lost; trying to reconnect..."
        )
        pn.config.exception_handler(ValueError("x"))
    assert shown == [
        ("error", "Esa acción falló (KeyError); el laboratorio conservó su último estado válido."),
        ("error", "فشل هذا الإجراء (\u2066ValueError\u2069)؛ احتفظ المختبر بآخر حالة صالحة."),
        ("error", "That action failed (ValueError); the lab kept its last valid state."),
    ]
