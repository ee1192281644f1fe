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
