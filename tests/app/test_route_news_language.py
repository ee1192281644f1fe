"""The route news in a student's language (app/state/route_news.py, app/views/announcer.py):
the sentence is made in English and said in the session's language, numbers written its way."""

from __future__ import annotations

from app.i18n.translator import Translator
from app.state.lab_state import LabState
from app.state.route_news import route_change, share, vote_counted
from app.views.announcer import Announcer
from app.views.phrases import phrase_text
from app.views.status import LiveSummary


def snap_at(**settings):
    state = LabState()
    assert state.try_update(**settings)
    return state.snapshot


def test_a_spanish_page_hears_the_route_move_in_spanish():
    region = LiveSummary()
    news = Announcer(region, tr=Translator("es"))
    before, after = snap_at(angle=0.0), snap_at(angle=90.0)
    news.route(before)
    news.route(after)
    english = route_change(before, after)
    assert english.startswith("The route moved from key A to key C: C ")
    assert region.news.startswith("La ruta pasó de la clave A a la clave C: C ")
    assert region.news.endswith(".") and english.split(": ")[1] in region.news  # C 45%, B 34%


def test_the_output_point_takes_a_decimal_comma_and_a_semicolon_in_spanish():
    state = LabState()
    before = state.snapshot
    state.swap_values(0, 2)
    said = phrase_text(route_change(before, state.snapshot), Translator("es"))
    assert said.startswith("Los pesos no cambiaron; la salida pasó de (")
    assert "; " in said.split("(", 1)[1] and "," in said and "." not in said[:-1]


def test_the_rare_shares_and_a_counted_vote_are_translated_too():
    spanish, chinese = Translator("es"), Translator("zh-Hans")
    assert phrase_text(share(0.001), spanish) == "menos del 1%"
    assert phrase_text(share(0.999), chinese) == "超过 99%"
    assert phrase_text(share(0.999), spanish) == "más del 99%" and str(share(0.42)) == "42%"
    counted = vote_counted("B")
    assert phrase_text(counted, chinese) == "你的预测已计入课堂：B。"
    assert phrase_text(counted, Translator("en")) == str(counted)
