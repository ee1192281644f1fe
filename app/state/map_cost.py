"""What a map of every head costs, in a student's words, before it starts and while it runs.

Pure: no Panel, no clock of its own (the caller passes the times). Before the map starts, its
price is the measured time of one forward of the text times the forwards the map runs
(`engine.trained.causal.map_forwards`); once it has done a little of its work, the time left
follows its own pace (batches make it faster on a short text, a busy machine slower).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.i18n.markers import N_
from app.i18n.translator import ENGLISH, Translator
from app.state.estimate_words import written

PACE_FROM = 0.02  # the share of the work after which the map's own pace tells the time left
LONG = 20.0  # seconds: a map that takes longer is announced as long, with its price
# The maps a note names while one runs (CausalState's `running`), marked for the catalogue.
MAP_KINDS = (N_("causal"), N_("patching"))


@dataclass(frozen=True)
class MapCost:
    """The price of a map: `forwards` of the text, each `forward_s` seconds (None: unknown);
    `cached_s` when the map of this text is computed already: how long reading it from the
    cache took last time (None: not cached, its forwards are to run)."""

    forwards: float
    forward_s: float | None
    cached_s: float | None = None

    @property
    def seconds(self) -> float | None:
        if self.cached_s is not None:
            return self.cached_s
        return None if self.forward_s is None else self.forwards * self.forward_s


def duration(seconds: float, tr: Translator = ENGLISH) -> str:
    """A duration as a student reads it: "under a second", "about 8 s", "about 4 min 30 s",
    "about 25 min"."""
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"a duration must be a finite number of seconds >= 0, got {seconds!r}")
    _ = tr.gettext
    if seconds < 1:
        return _("under a second")
    if seconds < 60:
        return _("about {seconds} s").format(seconds=max(1, round(seconds)))
    if seconds < 600:
        tens = round(seconds / 10) * 10  # to the nearest 10 s
        minutes, rest = divmod(tens, 60)
        if rest:
            return _("about {minutes} min {seconds} s").format(minutes=minutes, seconds=rest)
        return _("about {minutes} min").format(minutes=minutes)
    return _("about {minutes} min").format(minutes=round(seconds / 60))


def time_left(elapsed: float, fraction: float, planned: float | None) -> float | None:
    """Seconds left of a map that has run `elapsed` seconds and done `fraction` of its work:
    at its own pace once it has done PACE_FROM of it, else its price less the time spent
    (None: neither is known yet)."""
    if fraction >= PACE_FROM:
        return elapsed * (1.0 - fraction) / fraction
    if planned is None:
        return None
    return max(0.0, planned - elapsed)


def price_words(cost: MapCost, heads: int, tr: Translator = ENGLISH) -> str:
    """What "Measure every head" will cost, said before the click."""
    _ = tr.gettext
    if cost.cached_s is not None:  # no forward to run (priced in forwards, 1.6 s read "4 min")
        return _(
            "Every head of this text has been measured already (the map is cached): showing "
            "all {heads} takes {time}."
        ).format(heads=heads, time=duration(cost.cached_s, tr))
    runs = f"{cost.forwards:.0f}"
    if cost.seconds is None:
        return _(
            "Measuring every head removes each of the {heads} heads in turn: about {runs} runs "
            "of the model on this text."
        ).format(heads=heads, runs=runs)
    time = duration(cost.seconds, tr)
    if cost.forward_s >= 0.1:
        said = _(
            "Measuring every head removes each of the {heads} heads in turn: about {runs} runs "
            "of the model on this text (one took {one} s here), so it takes {time}."
        )
    else:
        said = _(
            "Measuring every head removes each of the {heads} heads in turn: about {runs} runs "
            "of the model on this text, so it takes {time}."
        )
    one = written(cost.forward_s, ".1f", tr)
    said = said.format(heads=heads, runs=runs, one=one, time=time)
    if cost.seconds >= LONG:
        said += " " + _("The estimate above is there already; you can stop at any time.")
    return said


def running_words(what: str, fraction: float, left: float | None, tr: Translator = ENGLISH) -> str:
    """The note while a map runs: how far it is and how long it has left."""
    _ = tr.gettext
    done = written(fraction, ".0%", tr)
    if left is None:
        said = _("Measuring every head ({what}): {done} done.")
        said = said.format(what=_(what), done=done)
    else:
        said = _("Measuring every head ({what}): {done} done, {time} left.")
        said = said.format(what=_(what), done=done, time=duration(left, tr))
    return said + " " + _("Stop ends it; the page stays usable meanwhile.")
