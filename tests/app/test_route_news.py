"""What a screen reader is told after a change (app/state/route_news.py, app/views/announcer.py):
the route's move in one sentence, a sweep said once from where it started to where it stopped,
Measure's verdict and a vote counted, all through the summary's one live region."""

from __future__ import annotations

from app.state.lab_state import LabState
from app.state.route_news import leaders, route_change, share
from app.views.announcer import Announcer
from app.views.status import LiveSummary


class Loop:
    """A served document's timeouts, run by hand: (callback, ms) in the order added."""

    session_context = object()

    def __init__(self):
        self.waiting = []

    def add_timeout_callback(self, callback, ms):
        self.waiting.append((callback, ms))

    def run_all(self):
        waiting, self.waiting = self.waiting, []
        for callback, _ms in waiting:
            callback()


def snap_at(**settings):
    state = LabState()
    assert state.try_update(**settings)
    return state.snapshot


def test_a_new_leader_is_named_with_the_two_heaviest_keys():
    before, after = snap_at(angle=0.0), snap_at(angle=90.0)
    text = route_change(before, after)
    w = after.weights
    assert text.startswith("The route moved from key A to key C: C ")
    assert text == f"The route moved from key A to key C: {leaders(after)}."
    assert f"C {share(w[2])}" in text


def test_the_same_leader_says_it_stays_and_what_it_had():
    before, after = snap_at(temperature=1.0), snap_at(temperature=0.25)
    assert route_change(before, after).startswith("The route stays on key A: A ")
    assert f"(it had {share(before.weights[0])})" in route_change(before, after)


def test_a_swap_of_values_moves_the_output_only():
    state = LabState()
    before = state.snapshot
    state.swap_values(0, 2)
    text = route_change(before, state.snapshot)
    assert text.startswith("The weights did not change; the output moved from (")
    assert route_change(before, before) == ""


def test_shares_never_read_as_0_or_100_percent():
    assert (share(0.001), share(0.999), share(0.0), share(1.0)) == (
        "under 1%",
        "over 99%",
        "0%",
        "100%",
    )


def test_a_sweep_is_said_once_from_its_start_to_its_end_after_it_settles():
    region, loop = LiveSummary(), Loop()
    news = Announcer(region, loop)
    start = snap_at(angle=0.0)
    news.route(start)  # the page's first drawing: nothing to say
    assert loop.waiting == [] and region.news == ""
    sweep = [snap_at(angle=a) for a in (30.0, 60.0, 90.0)]
    for snap in sweep:
        news.route(snap)
    assert region.news == ""  # nothing yet: the sweep has not settled
    assert [ms for _cb, ms in loop.waiting] == [news.settle_ms] * 3
    loop.run_all()  # the two older waits find a newer one and say nothing
    assert region.news == route_change(start, sweep[-1])
    assert region.encoded_news.startswith("1:")
    # Measure's verdict rides with the next route news; said again, it counts as new.
    news.say("Measured: 3 keys.")
    loop.run_all()
    assert region.news == "Measured: 3 keys." and region.encoded_news.startswith("2:")
    news.say("Measured: 3 keys.")
    loop.run_all()
    assert region.encoded_news.startswith("3:")


def test_without_a_served_page_the_news_is_said_at_once():
    region = LiveSummary()
    news = Announcer(region)
    news.route(snap_at(angle=0.0))
    news.route(snap_at(angle=90.0))
    assert region.news.startswith("The route moved from key A to key C")
