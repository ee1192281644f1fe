"""Every source update a page sends keeps the source's columns equally long in the browser.

BokehJS throws "Size mismatch" when a message leaves a ColumnDataSource with columns of
different lengths. A partial update (`assign` sends only the columns that changed) used to be
serialized when the page's hold ended, from the source's data at that time: a later change of
the source's row count in the same hold (step 9 after step 8 draws the planes under the new
step's hold set, then at the step's own pair count) sent those columns at the new length beside
the browser's old ones (app/patches/bokeh_columns.py). These tests replay what a browser
receives, message by message, and check every source after each.
"""

from __future__ import annotations

import numpy as np
import panel.io.document as panel_document
import pytest
from bokeh.core.serialization import Serializer
from bokeh.document import Document
from bokeh.document.events import ColumnDataChangedEvent, ModelChangedEvent
from bokeh.models import ColumnDataSource
from panel.io.state import set_curdoc

from app.page.lab_page import create_app
from app.state.lab_state import LabState
from app.views.lesson_panel import ALL_LESSONS, is_model_step
from app.views.style import assign
from tests.waiting import wait_until


def _length(encoded) -> int:
    if isinstance(encoded, dict) and encoded.get("type") == "ndarray":
        return int(encoded["shape"][0])
    return len(encoded)


class Browser:
    """The column lengths of each source as a browser holds them, from the messages it gets."""

    def __init__(self, doc: Document):
        self.doc = doc
        self.columns: dict[str, dict[str, int]] = {}
        self.mismatches: list[str] = []
        self.learn_new_sources()

    def learn_new_sources(self) -> None:
        """Sources sent whole (with the page, or inside a new layout) as they are now."""
        for model in self.doc.models:
            if isinstance(model, ColumnDataSource) and model.id not in self.columns:
                self.columns[model.id] = {k: len(v) for k, v in model.data.items()}

    def receive(self, event) -> None:
        """Apply one event as it is serialized at the moment the server sends it."""
        if isinstance(event, ColumnDataChangedEvent):
            sent = event.to_serializable(Serializer())
            data = {k: _length(v) for k, v in sent["data"]["entries"]}
            if sent["cols"] is None:
                self.columns[event.model.id] = data
            else:
                self.columns.setdefault(event.model.id, {}).update(data)
        elif isinstance(event, ModelChangedEvent) and event.attr == "data":
            if isinstance(event.model, ColumnDataSource):
                self.columns[event.model.id] = {k: len(v) for k, v in event.new.items()}
        else:
            return
        lengths = self.columns[event.model.id]
        if len(set(lengths.values())) > 1:
            self.mismatches.append(f"{event.model.name or event.model.id}: {lengths}")


def test_a_partial_update_sends_the_values_it_set_not_those_at_the_holds_end():
    doc = Document()
    source = ColumnDataSource({"x": np.arange(3.0), "label": ["a", "b", "c"]})
    doc.add_root(source)
    browser = Browser(doc)
    doc.on_change(browser.receive)
    told = []
    source.on_change("data", lambda attr, old, new: told.append(len(new["x"])))
    doc.hold("combine")
    assign(source, {"x": np.arange(3.0), "label": ["A", "B", "C"]})  # the label alone goes
    assign(source, {"x": np.arange(5.0), "label": list("abcde")})  # a new row count
    doc.unhold()
    assert browser.mismatches == []
    assert browser.columns[source.id] == {"x": 5, "label": 5}
    assert told == [3, 5]  # Python's callbacks still hear of the partial update
    assert list(source.data["label"]) == list("abcde")


@pytest.fixture
def page_messages(monkeypatch):
    """A page served in-process, and the browser its messages would reach: events inside a
    hold are replayed when the hold ends (where a server serializes them), others at once."""
    doc = Document()
    with set_curdoc(doc):
        page = create_app(LabState())
        page.server_doc(doc)
    browser = Browser(doc)
    drain = panel_document._drain_unconnected_events

    def send_then_drain(held_doc, lock):
        if held_doc is doc:
            for event in list(held_doc.callbacks._held_events or []):
                browser.receive(event)
        return drain(held_doc, lock)

    monkeypatch.setattr(panel_document, "_drain_unconnected_events", send_then_drain)
    doc.on_change(browser.receive)
    return doc, page.lab, browser


def test_stepping_through_the_lessons_keeps_every_sources_columns_equally_long(page_messages):
    doc, lab, browser = page_messages
    walked = []
    with set_curdoc(doc):
        for number, step in enumerate(ALL_LESSONS, start=1):
            if is_model_step(step) and step.model != "binding":
                continue  # the language model's steps: the same views, a slow load
            browser.learn_new_sources()
            lab.lessons.open(number)
            wait_until(lambda: lab.lessons.ready, f"step {number} to start", timeout=120)
            browser.learn_new_sources()
            lab.lessons.measure.clicks += 1
            walked.append(number)
    assert 9 in walked and 18 in walked  # steps that reshaped the planes inside one hold
    assert browser.mismatches == []
