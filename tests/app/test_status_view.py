"""The status's banners are made when first needed, in their place under the summary."""

from __future__ import annotations

from app.state.lab_state import LabState
from app.state.sources import SourceSwitch
from app.views.status import StatusView


def test_a_page_that_shows_no_banner_builds_none_and_the_first_one_takes_its_place():
    state = LabState()
    status = StatusView(SourceSwitch(state))
    column = status.__panel__()
    assert list(column.objects) == [status.summary]  # nothing to show: nothing built
    status.set_running("")  # no backend at work: still nothing
    assert list(column.objects) == [status.summary]
    state.mask = [False] * len(state.mask)  # every key masked: the lab refuses it
    assert state.error
    assert list(column.objects) == [status.summary, status.error]
    assert status.error.visible and "every key is masked" in status.error.object
    status.set_running("torch-cpu")
    # Each banner in its order: the error above the backend's note.
    assert list(column.objects) == [status.summary, status.error, status.running]
    assert status.running.visible and "torch-cpu" in status.running.object


def test_a_links_warnings_are_lines_in_the_page_until_dismissed():
    state = LabState()
    status = StatusView(SourceSwitch(state))
    column = status.__panel__()
    status.link_warning("Link: temperature: <b>hot</b> is not a number")
    status.link_warning("Link: d_k: 99999 is out of range")
    assert list(column.objects) == [status.summary, status.link]
    text = status.link[0].object
    assert text.count("<li>") == 2 and "&lt;b&gt;hot&lt;/b&gt;" in text  # shown, not rendered
    # A phone's summary stops following the page while they show (status.css).
    assert "lab-noted" in column.css_classes
    state.mask = [False] * len(state.mask)  # a refused change: its banner under the warnings
    assert list(column.objects) == [status.summary, status.link, status.error]
    status.dismiss_link_warnings()
    assert not status.link.visible and status.link[0].object == ""
    assert "lab-noted" in column.css_classes  # the error still shows
    state.mask = [True] * len(state.mask)
    assert "lab-noted" not in column.css_classes
