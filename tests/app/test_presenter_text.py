"""Presenter mode's plot type holds after every redraw (a review on a projector: the bar charts'
key and token names fell back from 18 to 14 px as soon as a lesson step or a model loaded)."""

from __future__ import annotations

from bokeh.document import Document
from panel.io.state import set_curdoc

from app.page.lab_page import PRESENTER_TEXT_SCALE, create_app

BASE_PX = 14


def _row_label_px(fig) -> float:
    return float(str(fig.yaxis[0].major_label_text_font_size).removesuffix("px"))


def test_presenter_row_labels_hold_after_a_lesson_step_and_a_model_load():
    doc = Document()
    with set_curdoc(doc):
        page = create_app()
        page.server_doc(doc)
        lab = page.lab
        presenter = round(BASE_PX * PRESENTER_TEXT_SCALE)
        lab.tools.presenter = True
        charts = {"Weights": lab.weights.figure, "Logits": lab.logits.figure}
        assert {name: _row_label_px(f) for name, f in charts.items()} == dict.fromkeys(
            charts, presenter
        )
        lab.state.angle = 25.0  # a redraw
        lab.lessons.open(3)  # a step loads its set-up
        assert {name: _row_label_px(f) for name, f in charts.items()} == dict.fromkeys(
            charts, presenter
        )
        lab.sources.source = "model"  # the trained head: its answer chart joins
        lab.sources.model.layer = 1 - lab.sources.model.layer  # and redraws
        charts["Answer"] = lab.parts.built("model_main").prediction.figure
        assert {name: _row_label_px(f) for name, f in charts.items()} == dict.fromkeys(
            charts, presenter
        )
        lab.tools.presenter = False  # back to the sizes the views chose
        assert {name: _row_label_px(f) for name, f in charts.items()} == dict.fromkeys(
            charts, BASE_PX
        )
