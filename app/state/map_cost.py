"""What a map of every head costs, in a student's words, before it starts and while it runs.

Pure: no Panel, no clock of its own (the caller passes the times). Before the map starts, its
price is the measured time of one forward of the text times the forwards the map runs
(`engine.trained.causal.map_forwards`); once it has done a little of its work, the time left
follows its own pace (batches make it faster on a short text, a busy machine slower).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

PACE_FROM = 0.02  # the share of the work after which the map's own pace tells the time left
LONG = 20.0  # seconds: a map that takes longer is announced as long, with its price


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


def duration(seconds: float) -> str:
    """A duration as a student reads it: "under a second", "about 8 s", "about 4 min 30 s",
    "about 25 min"."""
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"a duration must be a finite number of seconds >= 0, got {seconds!r}")
    if seconds < 1:
        return "under a second"
    if seconds < 60:
        return f"about {max(1, round(seconds))} s"
    if seconds < 600:
        tens = round(seconds / 10) * 10  # to the nearest 10 s
        minutes, rest = divmod(tens, 60)
        return f"about {minutes} min" + (f" {rest} s" if rest else "")
    return f"about {round(seconds / 60)} min"


def time_left(elapsed: float, fraction: float, planned: float | None) -> float | None:
    """Seconds left of a map that has run `elapsed` seconds and done `fraction` of its work:
    at its own pace once it has done PACE_FROM of it, else its price less the time spent
    (None: neither is known yet)."""
    if fraction >= PACE_FROM:
        return elapsed * (1.0 - fraction) / fraction
    if planned is None:
        return None
    return max(0.0, planned - elapsed)


def price_words(cost: MapCost, heads: int) -> str:
    """What "Measure every head" will cost, said before the click."""
    if cost.cached_s is not None:  # no forward to run (priced in forwards, 1.6 s read "4 min")
        return (
            f"Every head of this text has been measured already (the map is cached): showing "
            f"all {heads} takes {duration(cost.cached_s)}."
        )
    said = (
        f"Measuring every head removes each of the {heads} heads in turn: about "
        f"{cost.forwards:.0f} runs of the model on this text"
    )
    if cost.seconds is None:
        return said + "."
    said += (
        f" (one took {cost.forward_s:.1f} s here), so it takes {duration(cost.seconds)}"
        if cost.forward_s >= 0.1
        else f", so it takes {duration(cost.seconds)}"
    )
    if cost.seconds >= LONG:
        said += ". The estimate above is there already; you can stop at any time"
    return said + "."


def running_words(what: str, fraction: float, left: float | None) -> str:
    """The note while a map runs: how far it is and how long it has left."""
    said = f"Measuring every head ({what}): {fraction:.0%} done"
    if left is not None:
        said += f", {duration(left)} left"
    return said + ". Stop ends it; the page stays usable meanwhile."
