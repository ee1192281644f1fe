"""The horizontal bar the per-key charts (weights, logits, the model's answer) are made of.

Each chart draws two or three bars per row side by side: each bar is dodged off its row's
centre by a fixed offset, in row units, and is a little thinner than its share of the row, so
neighbouring bars keep a gap.
"""

from __future__ import annotations

from bokeh.models.glyphs import HBar, Text
from bokeh.transform import dodge

from .style import add_glyph

GAP = 0.92  # of its share of the row, what a bar fills


def dodged_bar(fig, source, offset: float, share: float, *, right, left=0, **style):
    """A bar per row of `source` (its `row` column), `offset` off the row's centre and
    `share` of a row thick (less the gap), from `left` to `right`; `style` as `add_glyph`
    takes it (colours, hatch, `legend_label`)."""
    return add_glyph(
        fig,
        HBar,
        y=dodge("row", offset, range=fig.y_range),
        right=right,
        left=left,
        height=share * GAP,
        source=source,
        **style,
    )


def bar_note(fig, source, *, x, text, offset: float | None = None):
    """A short text (column `text` of `source`) just right of `x`, on each row's centre or
    `offset` off it, beside the bar it explains ("masked: weight 0", "12%")."""
    return add_glyph(
        fig,
        Text,
        x=x,
        y="row" if offset is None else dodge("row", offset, range=fig.y_range),
        text=text,
        source=source,
        x_offset=6,
        text_baseline="middle",
        text_font_size="14px",
        text_color="#333333",
    )
