"""The plots in words: a short description and a data table for each plot of the lab, made from
the snapshot the plots draw (no Panel, no Bokeh).

A screen reader cannot read a canvas. Each plot of the first screen and the entropy plot gets
a `SceneTable` here, computed from the same `LabSnapshot` the figures are filled from, so the
words and the drawing cannot disagree; `app/views/plot_text.py` writes them into the page.
Numbers are plain text with a fixed number of decimals (three for coordinates and logits, one
for percentages) and an ASCII minus, as a screen reader reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.heads import token_marks

# The bar charts draw at most 12 rows (app/views/rows.py); the tables list as many keys, the
# heaviest first when there are more, and say how many they leave out.
MAX_ROWS = 12
ENTROPY_STEP = 10  # every 10th of the 61 temperatures of the entropy curve: 7 rows


@dataclass(frozen=True)
class SceneTable:
    """One plot in words: `name` names the plot (the page's data-plot attribute)."""

    name: str
    title: str
    description: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


def marks_said(labels) -> str:
    """What the marks in a table's token labels mean, as a sentence to append ("" for none)."""
    marks = token_marks(labels)
    return f" Tokens: {marks}." if marks else ""


def number(x: float, digits: int = 3) -> str:
    """A value as the tables print it: fixed decimals, never "-0.000", "-inf" as words."""
    x = float(x)
    if np.isnan(x):
        return "not a number"
    if np.isinf(x):
        return "minus infinity" if x < 0 else "infinity"
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def percent(x: float) -> str:
    return f"{number(100 * float(x), 1)}%"


def listed_rows(weights) -> list[int]:
    """The rows a table lists: every key while they fit, else the heaviest MAX_ROWS."""
    w = np.asarray(weights, dtype=np.float64)
    if len(w) <= MAX_ROWS:
        return list(range(len(w)))
    return [int(i) for i in np.argsort(-w, kind="stable")[:MAX_ROWS]]


def _left_out(snap, rows) -> str:
    n = len(snap.labels)
    return "" if len(rows) == n else f" The table lists the {len(rows)} heaviest of {n} keys."


def address_table(snap) -> SceneTable:
    """The address plane: the query and every key as arrows from the origin."""
    rows = listed_rows(snap.weights)
    q = np.asarray(snap.query, dtype=np.float64)
    keys = np.asarray(snap.keys, dtype=np.float64)
    angle = float(np.degrees(np.arctan2(q[1], q[0])))
    closest = snap.labels[int(np.argmax(keys[:, :2] @ q[:2]))] if len(keys) else ""
    description = (
        f"The query q and {len(snap.labels)} keys drawn as arrows from the origin. q points at "
        f"{number(angle, 0)} degrees; key {closest} lies furthest along it (the largest q·k in "
        f"the plane).{_left_out(snap, rows)}"
    )
    body = [("query q", number(q[0]), number(q[1]))]
    body += [(f"key {snap.labels[i]}", number(keys[i, 0]), number(keys[i, 1])) for i in rows]
    return SceneTable(
        "address", "Address: query and keys", description, ("arrow", "x", "y"), tuple(body)
    )


def payload_table(snap) -> SceneTable:
    """The payload plane: each value, its contribution w·v, and the output (their sum)."""
    rows = listed_rows(snap.weights)
    values = np.asarray(snap.values, dtype=np.float64)
    contrib = np.asarray(snap.contributions, dtype=np.float64)
    out = np.asarray(snap.output, dtype=np.float64)
    description = (
        "Each key's value v, its contribution w·v (the value times its weight, drawn head to "
        f"tail) and the output, the sum of the contributions, at ({number(out[0])}, "
        f"{number(out[1])}).{_left_out(snap, rows)}"
    )
    body = [
        (
            str(snap.labels[i]),
            number(values[i, 0]),
            number(values[i, 1]),
            number(contrib[i, 0]),
            number(contrib[i, 1]),
        )
        for i in rows
    ]
    body.append(("output", "", "", number(out[0]), number(out[1])))
    columns = ("key", "value x", "value y", "w·v x", "w·v y")
    return SceneTable("payload", "Payload: values, output", description, columns, tuple(body))


def shares(snap) -> np.ndarray:
    """Each key's share of the summed contribution lengths |w·v| (what the weights chart draws)."""
    norms = np.asarray(snap.contribution_norms, dtype=np.float64)
    total = float(norms.sum())
    return norms / total if total > 0 else np.zeros_like(norms)


def weights_table(snap) -> SceneTable:
    """Each key's weight beside its share of |w·v|; the null route's weight when it is on."""
    rows = listed_rows(snap.weights)
    share = shares(snap)
    top = snap.winner
    description = (
        f"Each key's weight w beside its share of the summed lengths |w·v|; each column sums to "
        f"100%. Key {snap.labels[top]} gets the most weight, {percent(snap.weights[top])}."
        f"{_left_out(snap, rows)}{marks_said(snap.labels[i] for i in rows)}"
    )
    body = [(str(snap.labels[i]), percent(snap.weights[i]), percent(share[i])) for i in rows]
    if snap.null_weight is not None:
        body.append(("null route", percent(snap.null_weight), ""))
    columns = ("key", "weight", "share of |w·v|")
    return SceneTable("weights", "Weights and |w·v| shares", description, columns, tuple(body))


def logits_table(snap) -> SceneTable:
    """Each key's score at the three stages the logits chart draws."""
    rows = listed_rows(snap.weights)
    legal = np.asarray(snap.legal, dtype=bool)
    logits = np.asarray(snap.logits, dtype=np.float64)
    description = (
        f"Each key's score q·k, then times the scale {number(snap.scale_factor)}, then divided "
        f"by the temperature {number(snap.temperature)}: the logit the softmax takes. A masked "
        f"key's logit is minus infinity.{_left_out(snap, rows)}"
    )
    body = [
        (
            str(snap.labels[i]),
            number(snap.scores[i]),
            number(snap.scaled[i]),
            number(logits[i]) if legal[i] else "masked",
        )
        for i in rows
    ]
    if snap.null_logit is not None:
        body.append(("null route", "", "", number(snap.null_logit)))
    columns = ("key", "q·k", "after scale", "after temperature")
    return SceneTable("logits", "Logits per key", description, columns, tuple(body))


def entropy_table(snap) -> SceneTable:
    """The entropy curve at every tenth temperature, and the current point."""
    sweep = snap.temperature_sweep
    now_t, now_h = float(sweep.current_temperature), float(sweep.current_entropy)
    description = (
        f"How spread out the route is across temperatures {number(sweep.temperatures[0], 2)} "
        f"to {number(sweep.temperatures[-1], 2)}: the entropy of the weights in nats. Now "
        f"{number(now_h, 2)} nats at temperature {number(now_t)}, about "
        f"{number(np.exp(now_h), 1)} effective keys."
    )
    points = [
        (float(t), float(h))
        for t, h in zip(
            sweep.temperatures[::ENTROPY_STEP], sweep.entropy[::ENTROPY_STEP], strict=True
        )
    ]
    points = [p for p in points if not np.isclose(p[0], now_t, rtol=1e-9, atol=0)]
    points = sorted([*points, (now_t, now_h)], key=lambda p: p[0])
    body = tuple(
        (
            number(t) + (" (now)" if (t, h) == (now_t, now_h) else ""),
            number(h),
            number(np.exp(h), 2),
        )
        for t, h in points
    )
    columns = ("temperature", "entropy (nats)", "effective keys")
    return SceneTable("entropy", "Entropy across temperature", description, columns, body)


def first_screen(snap) -> tuple[SceneTable, ...]:
    """The first screen's plots in words, in the order they are drawn."""
    return (address_table(snap), payload_table(snap), weights_table(snap), logits_table(snap))
