"""The charts' "top k of n" titles agree with their count (app/views/weights.py, logits.py):
a plural entry of the plots catalogue, so one key shown reads in the singular in Spanish."""

from __future__ import annotations

from app.i18n.translator import Translator
from app.views.logits import LogitsView
from app.views.weights import WeightsView


def test_one_key_of_fourteen_reads_in_the_singular_and_eleven_in_the_plural():
    spanish = WeightsView(tr=Translator("es"))
    spanish._title(1, 14, None)  # the title as an update draws it: top 1 of 14 keys
    assert spanish.figure.title.text == "Pesos y partes de |w·v| · 1 de 14, la mayor"
    spanish._title(11, 40, None)
    assert spanish.figure.title.text.endswith(" · 11 mayores de 40")
    english = WeightsView()
    english._title(1, 14, None)
    assert english.figure.title.text.endswith(" · top 1 of 14")  # English as it was


def test_the_logits_title_takes_the_same_plural_in_chinese_and_arabic():
    chinese = LogitsView(tr=Translator("zh-Hans"))
    chinese._title(1, 14, False)
    assert chinese.figure.title.text.endswith("14 个中的前 1 个")
    arabic = LogitsView(tr=Translator("ar"))
    arabic._title(2, 14, False)
    assert "الأعلى \u20662\u2069 من \u206614\u2069" in arabic.figure.title.text
