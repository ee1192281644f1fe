"""What changed, in one sentence a screen reader can say (no Panel, no Bokeh).

The page announces a change once it has settled (app/views/announcer.py): `route_change`
compares the route announced last with the route now, so a drag or a slider sweep is described
from where it started to where it stopped ("The route moved from key A to key C: C 61%, A
22%."). A change that leaves the weights alone says what moved instead (the output, after a
swap of values).

Each sentence is a `Phrase` (engine/wording.py): the English text, compared and logged as
before, that keeps its template and numbers, so the announcer says it in the session's
language with a decimal comma where the language writes one (app/views/phrases.py).
"""

from __future__ import annotations

import numpy as np

from engine.wording import N_, Fixed, Phrase, Share

SAME = 5e-4  # output coordinates closer than this read as unchanged


def share(x: float) -> Phrase:
    """A weight as a whole percent, never 0% or 100% for a weight strictly between them."""
    p = 100 * float(x)
    if 0 < p < 0.5:
        # TRANSLATORS: a key's share of the attention weight, said to a screen reader.
        return Phrase(N_("under 1%"))
    if 99.5 <= p < 100:
        # TRANSLATORS: a key's share of the attention weight, said to a screen reader.
        return Phrase(N_("over 99%"))
    return Phrase("{share}", {"share": Share(float(x))})  # a number alone: nothing to translate


def leaders(snap, k: int = 2) -> Phrase:
    """The k heaviest keys with their weights: "C 61%, A 22%" (and the null route's share)."""
    w = np.asarray(snap.weights, dtype=np.float64)
    order = np.argsort(-w, kind="stable")[:k]
    # A key's name and its share, listed: no words to translate, only the shares' numbers.
    keys = [Phrase("{key} {share}", {"key": snap.labels[i], "share": share(w[i])}) for i in order]
    text = keys[0]
    for key in keys[1:]:
        text = Phrase("{first}, {then}", {"first": text, "then": key})
    if snap.null_weight is not None:
        # TRANSLATORS: the route news' list of keys, then the null route's share.
        text = Phrase(
            N_("{keys}, the null route {share}"), {"keys": text, "share": share(snap.null_weight)}
        )
    return text


def _point(p, name: str) -> dict[str, Fixed]:
    """A point of the plane as its two coordinates, `name`_x and `name`_y (two decimals)."""
    return {f"{name}_x": Fixed(float(p[0])), f"{name}_y": Fixed(float(p[1]))}


def route_change(before, after) -> Phrase | str:
    """One sentence on how the route went from `before` to `after` (None: nothing before)."""
    if before is None or tuple(before.labels) != tuple(after.labels):
        # TRANSLATORS: said to a screen reader; {leaders} is "C 61%, A 22%".
        return Phrase(N_("The route now: {leaders}."), {"leaders": leaders(after)})
    top_before, top_after = before.labels[before.winner], after.labels[after.winner]
    if top_before != top_after:
        return Phrase(
            # TRANSLATORS: said to a screen reader; {before} and {after} are keys' names.
            N_("The route moved from key {before} to key {after}: {leaders}."),
            {"before": top_before, "after": top_after, "leaders": leaders(after)},
        )
    if leaders(before) != leaders(after):  # a change too small to show in whole percent: none
        was = share(before.weights[before.winner])
        return Phrase(
            # TRANSLATORS: said to a screen reader; {had} is the key's share before the change.
            N_("The route stays on key {key}: {leaders} (it had {had})."),
            {"key": top_after, "leaders": leaders(after), "had": was},
        )
    if not np.allclose(before.weights, after.weights, atol=SAME, rtol=0):
        return ""  # the route moved, by less than a whole percent: nothing worth saying
    if not np.allclose(before.output, after.output, atol=SAME, rtol=0):
        return Phrase(
            # TRANSLATORS: said to a screen reader after the values were swapped: two points
            # (x, y) of the plane; with a decimal comma, separate x and y with a semicolon.
            N_(
                "The weights did not change; the output moved from ({was_x}, {was_y}) to "
                "({now_x}, {now_y})."
            ),
            {**_point(before.output, "was"), **_point(after.output, "now")},
        )
    return ""


def vote_counted(choice: str) -> Phrase:
    # TRANSLATORS: said to a student's screen reader; {choice} is the answer as shown to them.
    return Phrase(N_("Your prediction is counted for the class: {choice}."), {"choice": choice})
