"""The logits chart's two hatches cannot be mistaken for each other (issue 40): the hidden part
of a score ("+ N hidden dims") looked like a masked key, both diagonal stripes in grey."""

from __future__ import annotations

from app.views.logits import LogitsView

DIAGONAL = {"/", "\\", "x", "right_diagonal_line", "left_diagonal_line", "diagonal_cross"}


def legend_glyphs(fig) -> dict:
    return {
        item.label.value: item.renderers[0].glyph for legend in fig.legend for item in legend.items
    }


def luminance(colour: str) -> float:
    r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_hidden_dims_and_masked_differ_in_pattern_and_fill():
    glyphs = legend_glyphs(LogitsView().figure)
    hidden, masked = glyphs["+ hidden dims"], glyphs["masked (−∞)"]
    assert hidden.hatch_pattern != masked.hatch_pattern
    # Not two kinds of diagonal stripes: one of them runs another way.
    assert not {hidden.hatch_pattern, masked.hatch_pattern} <= DIAGONAL
    # A dark bar beside a white one: apart even in greyscale or on a washed-out projector.
    assert abs(luminance(hidden.fill_color) - luminance(masked.fill_color)) > 0.4
