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

from app.i18n.languages import SOURCE
from app.i18n.said import Number, Said
from app.i18n.translator import ENGLISH, Translator
from engine.heads import token_marks

# The bar charts draw at most 12 rows (app/views/rows.py); the tables list as many keys, the
# heaviest first when there are more, and say how many they leave out.
MAX_ROWS = 12
ENTROPY_STEP = 10  # every 10th of the 61 temperatures of the entropy curve: 7 rows


class Words(str):
    """A table's text in English (what it prints as and compares equal to, so every reader of a
    table still reads text), carrying how to write it in another language: a `Said`, a `Number`,
    or a tuple of them (sentences joined by a space). `text(tr)` writes it in `tr`'s language."""

    shown: object

    def __new__(cls, shown, english: str | None = None):
        made = super().__new__(cls, in_language(shown, ENGLISH) if english is None else english)
        made.shown = shown
        return made

    def text(self, tr: Translator = ENGLISH) -> str:
        # English is the text itself: byte for byte what the tables printed before.
        return str.__str__(self) if tr.code == SOURCE else in_language(self.shown, tr)


def in_language(value, tr: Translator = ENGLISH) -> str:
    """A table's text (`Words`, `Said`, `Number`, sentences, plain text) in `tr`'s language;
    a `Said`'s values are written the same way, so a number inside a sentence follows it."""
    if isinstance(value, Words):
        return value.text(tr)
    if isinstance(value, Said):
        values = {name: in_language(v, tr) for name, v in value.values.items()}
        return tr.gettext(value.template).format(**values)
    if isinstance(value, Number):
        return value.text(tr)
    if isinstance(value, tuple):
        return " ".join(text for text in (in_language(v, tr) for v in value) if text)
    return str(value)


def sentences(*parts) -> Words:
    """Sentences one after the other (an empty part left out), each translated on its own."""
    return Words(tuple(part for part in parts if part))


def _words(value):
    return value if isinstance(value, str) else Words(value)


@dataclass(frozen=True)
class SceneTable:
    """One plot in words: `name` names the plot (the page's data-plot attribute). Its title,
    description, columns and cells may be given as `Said` (or `Number`): they are kept as
    `Words`, English text that the page writes in its reader's language
    (app/views/plot_text.py)."""

    name: str
    title: str
    description: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def __post_init__(self):
        object.__setattr__(self, "title", _words(self.title))
        object.__setattr__(self, "description", _words(self.description))
        object.__setattr__(self, "columns", tuple(_words(c) for c in self.columns))
        rows = tuple(tuple(_words(cell) for cell in row) for row in self.rows)
        object.__setattr__(self, "rows", rows)


def marks_said(labels) -> str:
    """What the marks in a table's token labels mean, as a sentence to append ("" for none)."""
    marks = token_marks(labels)
    return f" Tokens: {marks}." if marks else ""


def marks_sentence(labels) -> Said | str:
    """`marks_said` as a sentence of its own, to translate ("" for none)."""
    marks = token_marks(labels)
    # TRANSLATORS: the plots in words; {marks} says what the marks in token labels mean
    # ("␣ = a space before the word").
    return Said("Tokens: {marks}.", marks=marks) if marks else ""


def number(x: float, digits: int = 3) -> Words:
    """A value as the tables print it: fixed decimals, never "-0.000", "-inf" as words; in
    another language with its decimal sign (0,500), rounded as the English is."""
    x = float(x)
    if np.isnan(x):
        return Words(Said("not a number"))
    if np.isinf(x):
        return Words(Said("minus infinity")) if x < 0 else Words(Said("infinity"))
    text = f"{x:.{digits}f}"
    text = text[1:] if text.startswith("-") and float(text) == 0 else text
    pattern = "0." + "0" * digits if digits else "0"
    return Words(Number(float(text), "decimal", pattern), text)


def percent(x: float) -> Words:
    shown = number(100 * float(x), 1)
    if not isinstance(shown.shown, Number):
        return shown
    return Words(Number(float(shown) / 100, "percent", "0.0%"), f"{shown}%")


def listed_rows(weights) -> list[int]:
    """The rows a table lists: every key while they fit, else the heaviest MAX_ROWS."""
    w = np.asarray(weights, dtype=np.float64)
    if len(w) <= MAX_ROWS:
        return list(range(len(w)))
    return [int(i) for i in np.argsort(-w, kind="stable")[:MAX_ROWS]]


def _left_out(snap, rows) -> Said | str:
    n = len(snap.labels)
    if len(rows) == n:
        return ""
    return Said("The table lists the {listed} heaviest of {total} keys.", listed=len(rows), total=n)


def address_table(snap) -> SceneTable:
    """The address plane: the query and every key as arrows from the origin."""
    rows = listed_rows(snap.weights)
    q = np.asarray(snap.query, dtype=np.float64)
    keys = np.asarray(snap.keys, dtype=np.float64)
    angle = float(np.degrees(np.arctan2(q[1], q[0])))
    closest = snap.labels[int(np.argmax(keys[:, :2] @ q[:2]))] if len(keys) else ""
    description = sentences(
        Said(
            "The query q and {n} keys drawn as arrows from the origin. q points at {angle} "
            "degrees; key {closest} lies furthest along it (the largest q·k in the plane).",
            n=len(snap.labels),
            angle=number(angle, 0),
            closest=closest,
        ),
        _left_out(snap, rows),
    )
    body = [(Said("query q"), number(q[0]), number(q[1]))]
    body += [
        (Said("key {label}", label=snap.labels[i]), number(keys[i, 0]), number(keys[i, 1]))
        for i in rows
    ]
    # TRANSLATORS: the address plane's table: its first column names each arrow.
    columns = (Said("arrow"), "x", "y")
    return SceneTable("address", Said("Address: query and keys"), description, columns, tuple(body))


def payload_table(snap) -> SceneTable:
    """The payload plane: each value, its contribution w·v, and the output (their sum)."""
    rows = listed_rows(snap.weights)
    values = np.asarray(snap.values, dtype=np.float64)
    contrib = np.asarray(snap.contributions, dtype=np.float64)
    out = np.asarray(snap.output, dtype=np.float64)
    description = sentences(
        Said(
            "Each key's value v, its contribution w·v (the value times its weight, drawn head "
            "to tail) and the output, the sum of the contributions, at ({x}, {y}).",
            x=number(out[0]),
            y=number(out[1]),
        ),
        _left_out(snap, rows),
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
    body.append((Said("output"), "", "", number(out[0]), number(out[1])))
    columns = (Said("key"), Said("value x"), Said("value y"), Said("w·v x"), Said("w·v y"))
    return SceneTable("payload", Said("Payload: values, output"), description, columns, tuple(body))


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
    description = sentences(
        Said(
            "Each key's weight w beside its share of the summed lengths |w·v|; each column "
            "sums to 100%. Key {label} gets the most weight, {share}.",
            label=snap.labels[top],
            share=percent(snap.weights[top]),
        ),
        _left_out(snap, rows),
        marks_sentence(snap.labels[i] for i in rows),
    )
    body = [(str(snap.labels[i]), percent(snap.weights[i]), percent(share[i])) for i in rows]
    if snap.null_weight is not None:
        body.append((Said("null route"), percent(snap.null_weight), ""))
    columns = (Said("key"), Said("weight"), Said("share of |w·v|"))
    return SceneTable(
        "weights", Said("Weights and |w·v| shares"), description, columns, tuple(body)
    )


def logits_table(snap) -> SceneTable:
    """Each key's score at the three stages the logits chart draws."""
    rows = listed_rows(snap.weights)
    legal = np.asarray(snap.legal, dtype=bool)
    logits = np.asarray(snap.logits, dtype=np.float64)
    description = sentences(
        Said(
            "Each key's score q·k, then times the scale {scale}, then divided by the "
            "temperature {temperature}: the logit the softmax takes. A masked key's logit is "
            "minus infinity.",
            scale=number(snap.scale_factor),
            temperature=number(snap.temperature),
        ),
        _left_out(snap, rows),
    )
    body = [
        (
            str(snap.labels[i]),
            number(snap.scores[i]),
            number(snap.scaled[i]),
            number(logits[i]) if legal[i] else Said("masked"),
        )
        for i in rows
    ]
    if snap.null_logit is not None:
        body.append((Said("null route"), "", "", number(snap.null_logit)))
    columns = (Said("key"), "q·k", Said("after scale"), Said("after temperature"))
    return SceneTable("logits", Said("Logits per key"), description, columns, tuple(body))


def entropy_table(snap) -> SceneTable:
    """The entropy curve at every tenth temperature, and the current point."""
    sweep = snap.temperature_sweep
    now_t, now_h = float(sweep.current_temperature), float(sweep.current_entropy)
    description = Said(
        "How spread out the route is across temperatures {low} to {high}: the entropy of the "
        "weights in nats. Now {entropy} nats at temperature {temperature}, about {keys} "
        "effective keys.",
        low=number(sweep.temperatures[0], 2),
        high=number(sweep.temperatures[-1], 2),
        entropy=number(now_h, 2),
        temperature=number(now_t),
        keys=number(np.exp(now_h), 1),
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
            now(number(t), (t, h) == (now_t, now_h)),
            number(h),
            number(np.exp(h), 2),
        )
        for t, h in points
    )
    columns = (Said("temperature"), Said("entropy (nats)"), Said("effective keys"))
    return SceneTable("entropy", Said("Entropy across temperature"), description, columns, body)


def now(value: Words, current: bool) -> Words:
    """A row's first cell, marked " (now)" when it is the current setting."""
    # TRANSLATORS: a table's row at the current setting ("0.500 (now)").
    return Words(Said("{value} (now)", value=value)) if current else value


def first_screen(snap) -> tuple[SceneTable, ...]:
    """The first screen's plots in words, in the order they are drawn."""
    return (address_table(snap), payload_table(snap), weights_table(snap), logits_table(snap))
