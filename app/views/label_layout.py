"""Where arrow labels go on a plane, in screen pixels: pure Python, no Panel or Bokeh.

`place_labels` puts each label near its arrow's tip, clear of the other labels, the tips'
drag handles, boxes to avoid (a legend, a note) and the arrows themselves, inside the frame.
A label with no room is shortened, then dropped (its hover still names it); a model's token
keeps its text with its position ("loan@4"), never a bare position. The geometry view
(app/views/geometry.py) turns its data into screen points and calls it once per plane; the
receipt's dots are placed the same way (app/views/receipt_labels.py).
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata

HANDLE_RADIUS_PX = 11.0
# Directions tried around a tip, as turns from "straight past it" (radians).
LABEL_TURNS = (0.0, 0.6, -0.6, 1.2, -1.2, 1.8, -1.8, 2.5, -2.5, math.pi)
# Distances tried from a tip, nearest first (px).
LABEL_DISTANCES = (20.0, 32.0, 46.0)
FRAME_MARGIN = 2.0  # px a label keeps from the frame's edge

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 (y down)
# A CJK character is about a whole em wide, 1.65 average Latin glyphs; an isolate (U+2066 to
# U+2069) or another format character takes no room.
WIDE_GLYPH = 1.65
# Letters of the right-to-left scripts (Hebrew, Arabic, Syriac, Thaana, N'Ko, their forms).
_RIGHT_TO_LEFT = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]")
FSI, PDI = "\u2068", "\u2069"  # first-strong isolate: a run set in its own direction
_TOKEN_AND_MARKS = re.compile(r"^(.+?)((?: ?@\d+)?(?: \(.+\)| ✕)?)$", re.DOTALL)


def glyphs(text: str) -> float:
    """`text`'s width in average Latin glyphs (its length, for Latin text)."""
    if text.isascii():
        return float(len(text))
    total = 0.0
    for ch in text:
        if unicodedata.category(ch) == "Cf":
            continue
        total += WIDE_GLYPH if unicodedata.east_asian_width(ch) in "WF" else 1.0
    return total


def isolated(label: str) -> str:
    """A label whose token has right-to-left letters with that token in an isolate, so
    "مرحبا @3" reads in its own order on a canvas that draws left to right, its position
    and marks after it; any other label as it is."""
    if not _RIGHT_TO_LEFT.search(label):
        return label
    token, marks = _TOKEN_AND_MARKS.match(label).groups()
    return f"{FSI}{token}{PDI}{marks}"


def isolated_labels(labels) -> list[str]:
    return [isolated(str(label)) for label in labels]


def text_box(x: float, y: float, text: str, font: float) -> Box:
    """The box of `text` centred on (x, y) at `font` px, with a few pixels of margin."""
    # An average glyph of the lab's sans-serif (DejaVu, Atkinson) is about 0.6 em wide; a few
    # pixels of margin keep neighbours from touching.
    w, h = 0.62 * font * glyphs(text) + 10.0, 1.3 * font
    return (x - w / 2, y - h / 2, x + w / 2, y + h / 2)


def overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def crosses(box: Box, segment, inset: float = 3.0) -> bool:
    """Does the segment pass through the box (less its margin of `inset` px)? Liang-Barsky."""
    xmin, ymin, xmax, ymax = box[0] + inset, box[1] + inset, box[2] - inset, box[3] - inset
    x0, y0, x1, y1 = segment
    if max(x0, x1) < xmin or min(x0, x1) > xmax or max(y0, y1) < ymin or min(y0, y1) > ymax:
        return False
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, x0 - xmin), (dx, xmax - x0), (-dy, y0 - ymin), (dy, ymax - y0)):
        if p == 0:
            if q < 0:
                return False
            continue
        r = q / p
        if p < 0:
            t0 = max(t0, r)
        else:
            t1 = min(t1, r)
        if t0 > t1:
            return False
    return True


_POSITION = re.compile(r"^(.+) @(\d+)$")


def shorten(text: str, masked_mark: str = " (masked)") -> str | None:
    """The short form of a label that has no room (None: it has none); `masked_mark` ends a
    masked key's label (in the page's language)."""
    masked = text.endswith(masked_mark)
    core = text.removesuffix(masked_mark)
    token = _POSITION.match(core)
    if token:
        # A model's token keeps its text with its position, tighter ("␣loan @4" -> "loan@4"):
        # never its position alone ("@6 @3 @2 @1" said nothing) nor a cut word ("␣loa…").
        word = token.group(1).lstrip("␣") or token.group(1)
        return f"{word}@{token.group(2)}" + (" ✕" if masked else "")
    if len(core) <= 5:
        return f"{core} ✕" if masked else None
    return core[:4] + "…" + (" ✕" if masked else "")


@functools.cache
def shortener(masked_mark: str):
    """`shorten` for labels whose masked mark is `masked_mark`: one function per mark, so the
    placements' cache keeps working."""
    return functools.partial(shorten, masked_mark=masked_mark)


def place_labels(
    tips, texts, font: float, frame, avoid=(), *, order=None, segments=(), short=shorten
):
    """Screen offsets (dx, dy, text) for labels of arrow tips at screen points `tips` (y down)
    in a frame of side `frame` px (or `frame` = (width, height) px), trying spots around each
    tip, nearest first, so that no label overlaps another label, a tip's handle, a box in
    `avoid` or an arrow in `segments` (x0, y0, x1, y1), or leaves the frame. Labels are placed
    in `order` (indices, the most important first; default: as given), so a crowd drops the
    last. Without room a label is shortened by `short` (by default `shorten`: a token to its
    text and position without spaces, "loan@4"; other text to a few characters and an
    ellipsis), then dropped ("").

    Pure, so shared process-wide: every follower of a class on one step, with the same plot
    size, asks for the same placement (a bounded cache; about 3 ms a plane otherwise)."""
    width, height = (frame, frame) if isinstance(frame, int | float) else frame
    return list(
        _placed(
            tuple(map(tuple, tips)),
            tuple(texts),
            float(font),
            (float(width), float(height)),
            tuple(map(tuple, avoid)),
            None if order is None else tuple(order),
            tuple(map(tuple, segments)),
            short,
        )
    )


@functools.lru_cache(maxsize=1024)
def _placed(tips, texts, font, frame, avoid, order, segments, short) -> tuple:
    r = HANDLE_RADIUS_PX
    handles = [(x - r, y - r, x + r, y + r) for x, y in tips]
    taken = list(avoid)
    out: list = [(0.0, 0.0, "")] * len(tips)
    for index in order if order is not None else range(len(tips)):
        (x, y), text = tips[index], texts[index]
        found = _first_spot(x, y, (text, short(text)), font, frame, [*taken, *handles], segments)
        if found is not None:
            taken.append(found[3])
            out[index] = found[:3]
    return tuple(out)


def _first_spot(x, y, candidates, font, frame, blocked, segments):
    """(dx, dy, text, box) of the first free spot around (x, y), longest text first."""
    width, height = frame
    norm = math.hypot(x - width / 2, y - height / 2)
    # First choice: straight past the tip, away from the origin (the frame's centre).
    base = math.atan2(y - height / 2, x - width / 2) if norm > 1 else -math.pi / 2
    right, bottom = width - FRAME_MARGIN, height - FRAME_MARGIN
    for candidate in candidates:
        if candidate is None:
            continue
        for dist in LABEL_DISTANCES:
            for turn in LABEL_TURNS:
                ox, oy = dist * math.cos(base + turn), dist * math.sin(base + turn)
                box = text_box(x + ox, y + oy, candidate, font)
                outside = box[0] < FRAME_MARGIN or box[2] > right
                if outside or box[1] < FRAME_MARGIN or box[3] > bottom:
                    continue
                if any(overlaps(box, other) for other in blocked):
                    continue
                if any(crosses(box, seg) for seg in segments):
                    continue
                return (ox, oy, candidate, box)
    return None
