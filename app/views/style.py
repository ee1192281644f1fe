"""Shared look of every figure: the Okabe-Ito palette, projector-sized fonts, one figure factory.

Okabe-Ito is distinguishable under the common forms of colour blindness; roles (query, key,
value, contribution, output) also differ by shape or dash, so colour is never the only cue.
"""

from __future__ import annotations

import numpy as np
from babel.numbers import get_decimal_symbol
from bokeh.core.property.vectorization import value
from bokeh.models import (
    CustomJSTickFormatter,
    GlyphRenderer,
    HoverTool,
    Legend,
    LegendItem,
    NumeralTickFormatter,
    SaveTool,
)
from bokeh.models.glyphs import Text
from bokeh.plotting import figure
from panel.theme import Bootstrap
from panel.viewable import Viewable

from app.i18n.translator import ENGLISH, Translator
from app.patches.bokeh_columns import replace_columns
from app.patches.bokeh_glyphs import positional_args

OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
}

ROLE_COLOURS = {
    "query": OKABE_ITO["vermillion"],
    "key": OKABE_ITO["blue"],
    "value": OKABE_ITO["green"],
    "contribution": OKABE_ITO["orange"],
    "output": OKABE_ITO["black"],
    "distractor": "#7f7f7f",
    "masked": "#8f8f8f",  # 3.2:1 on white (#9a9a9a was 2.8:1); a hatch and "masked" say it too
}

# The three logit stages and the two weight columns get fixed colours so a student can follow
# one series across plots.
STAGE_COLOURS = {
    "raw": OKABE_ITO["sky"],
    "scaled": OKABE_ITO["blue"],
    "logit": OKABE_ITO["vermillion"],
    "weight": OKABE_ITO["blue"],
    "norm_share": OKABE_ITO["orange"],
    "scaled_line": OKABE_ITO["blue"],
    "unscaled_line": OKABE_ITO["vermillion"],
    "theory": OKABE_ITO["black"],
}

# Non-text contrast (WCAG 2.1, 1.4.11): a mark must stand 3:1 against the white plot. Okabe-Ito's
# sky and orange do not (2.3:1, 2.25:1), and darkened to 3:1 the orange would merge with the
# vermillion for a deuteranope (tests/app/test_contrast.py). So they keep their fill and get an
# edge of their own hue that does: the bars an outline, the w·v arrows a casing under the shaft.
EDGES = {OKABE_ITO["orange"]: "#8C5E00", OKABE_ITO["sky"]: "#1E6494"}
EDGE_WIDTH = 1.5
CASING = 2  # px of edge each side of a cased shaft
# The toolbar's "⋮" (Bokeh draws it gray, 3.95:1): darker, like the other icons' ink.
TOOLBAR_ICON = "#595959"
TOOLBAR_CSS = f".bk-tool-overflow {{ color: {TOOLBAR_ICON}; }}"


def edged(colour: str) -> dict:
    """A bar's colours: its fill, and an outline of at least 3:1 (EDGES) when the fill is
    lighter than that."""
    edge = EDGES.get(colour)
    return {"color": colour} | ({"line_color": edge, "line_width": EDGE_WIDTH} if edge else {})


FONT = "'Atkinson Hyperlegible', 'DejaVu Sans', 'Segoe UI', Helvetica, Arial, sans-serif"

# One stylesheet for every component's shadow root (page CSS never reaches inside them): type
# size, focus ring. Relative, so it follows the page under a --prefix; one model per page.
WIDGET_CSS = "assets/lab-widgets.css"


class LabDesign(Bootstrap):
    """Panel's Bootstrap design plus the lab's own stylesheet in every component."""

    modifiers = {  # noqa: RUF012 - Panel reads this class attribute
        **Bootstrap.modifiers,
        Viewable: {"stylesheets": [*Bootstrap.modifiers[Viewable]["stylesheets"], WIDGET_CSS]},
    }


# Only this many labelled rows get a tick label each; beyond that the axis falls back to numbers.
MAX_LABELLED_ROWS = 24


def figure_name(title: str, tr: Translator = ENGLISH) -> dict[str, str]:
    """What a screen reader meets on a plot: a figure named by its title, which says where its
    numbers are. The drawing itself is a canvas; each plot's table (app/views/plot_text.py)
    follows the plots. A reference by id cannot reach it: Panel puts the plot and the table in
    different shadow roots. Not role="img": that would make the toolbar inside it a control
    nested in an image."""
    _ = tr.gettext
    # TRANSLATORS: what a screen reader says on a plot; {title}: the plot's title.
    name = _("{title}: a chart; its numbers are in a table after the plots").format(title=title)
    return {"role": "figure", "aria-label": name}


RLI, PDI = "\u2067", "\u2069"  # a right-to-left isolate and its end


def canvas_words(tr: Translator = ENGLISH):
    """`tr.gettext` for text a plot draws on its canvas (a title, an axis label, a legend, a
    tooltip, a note). The plots are drawn left to right (their axes and ticks), so in a
    right-to-left language each text sits in a right-to-left isolate: an Arabic title with
    |w·v| in it then reads in its own order, as it does in the page."""
    if not tr.right_to_left:
        return tr.gettext
    return lambda message: canvas_line(tr.gettext(message), tr)


def canvas_line(text: str, tr: Translator = ENGLISH) -> str:
    """A line made of translated parts (a title "Weights · top 11 of 40"), kept in the
    language's direction on the canvas."""
    if not (tr.right_to_left and text):
        return text
    # Each line on its own: a canvas draws the lines of a note apart, and a direction does
    # not carry over a line break.
    return "\n".join(f"{RLI}{line}{PDI}" for line in text.split("\n"))


def plot_pane_styles(tr: Translator = ENGLISH) -> dict:
    """A plot pane's keyword arguments: in a right-to-left page it stays left to right (its
    ticks, negative numbers, colour bar and toolbar where an English page has them), as the
    first screen's plots do (assets/components/stage.css)."""
    return {"styles": {"direction": "ltr"}} if tr.right_to_left else {}


# Tick labels in a language whose decimal sign is not a point (Spanish: 0,5 and 12,5%). Bokeh's
# NumeralTickFormatter takes a `language`, but BokehJS bundles only Numbro's en-US, so the
# ticks are written here: the shortest form of each tick (as Bokeh's own), its point turned
# into the language's sign and its minus into "−", as Bokeh draws it. Chinese writes numbers
# as English does, and Arabic pages keep Latin digits and the point, as their text does.
_DECIMAL_TICK = """
const shown = String(Number((tick * scale).toFixed(10)))
return shown.replace(".", sign).replace("-", "\u2212") + suffix
"""


def _decimal_sign(tr: Translator) -> str:
    return get_decimal_symbol(tr.language.numbers)


def decimal_ticks(fig: figure, tr: Translator = ENGLISH, *, axes=None) -> None:
    """The figure's axes (or `axes`) tick in `tr`'s decimal sign; where it is a point (English,
    Chinese, Arabic) Bokeh's own formatter stays."""
    sign = _decimal_sign(tr)
    if sign != ".":
        formatter = CustomJSTickFormatter(
            code=_DECIMAL_TICK, args={"sign": sign, "scale": 1, "suffix": ""}
        )
        for axis in axes if axes is not None else (*fig.xaxis, *fig.yaxis):
            axis.formatter = formatter


def percent_ticks(fmt: str, tr: Translator = ENGLISH):
    """A percent axis's formatter: Bokeh's `NumeralTickFormatter(format=fmt)`, or in a language
    whose decimal sign is not a point the same percentages with its sign."""
    sign = _decimal_sign(tr)
    if sign == ".":
        return NumeralTickFormatter(format=fmt)
    return CustomJSTickFormatter(
        code=_DECIMAL_TICK, args={"sign": sign, "scale": 100, "suffix": "%"}
    )


def make_figure(title: str, *, height: int = 320, tr: Translator = ENGLISH, **kwargs) -> figure:
    """A figure with readable fonts, a PNG save tool and no logo.

    No pan or zoom unless asked for: the lab sets these axes itself, and every tool is another
    model in each student's page (the server holds a copy of each one per session).
    """
    tools = kwargs.pop("tools", "")
    fig = figure(
        title=title,
        height=height,
        tools=tools,
        toolbar_location="above",
        sizing_mode=kwargs.pop("sizing_mode", "stretch_width"),
        html_attributes=figure_name(title, tr),
        **kwargs,
    )
    fig.add_tools(SaveTool(filename=_slug(title)))
    fig.toolbar.logo = None
    fig.title.text_font = FONT
    fig.title.text_font_size = "17px"
    fig.title.text_font_style = "bold"
    for axis in (*fig.xaxis, *fig.yaxis):
        axis.axis_label_text_font = FONT
        axis.axis_label_text_font_size = "15px"
        axis.axis_label_text_font_style = "normal"
        axis.major_label_text_font = FONT
        axis.major_label_text_font_size = "14px"
    fig.background_fill_color = "#ffffff"
    fig.border_fill_color = "#ffffff"
    fig.outline_line_color = "#d0d0d0"
    fig.grid.grid_line_color = "#e6e6e6"
    return fig


def style_legend(fig: figure, location: str = "top_right", *, below: bool = False) -> None:
    if below:
        # Under the plot, in one row: the legend never hides a bar.
        legend = fig.legend[0]
        fig.center = [item for item in fig.center if item is not legend]
        fig.add_layout(legend, "below")
        legend.orientation = "horizontal"
        # Two to a row: a row of four labels is wider than a phone and spills off the plot.
        legend.ncols = 2
        location = "center"
    fig.legend.location = location
    fig.legend.label_text_font = FONT
    fig.legend.label_text_font_size = "14px"
    fig.legend.background_fill_alpha = 0.85
    fig.legend.border_line_color = "#d0d0d0"
    fig.legend.click_policy = "hide"


# Keyword arguments that belong to the renderer, not to its glyph (as in Bokeh's glyph methods).
RENDERER_ARGS = ("name", "view", "x_range_name", "y_range_name", "level", "visible")
_COLOUR_PROPS = ("fill_color", "line_color", "hatch_color", "text_color")
_ALPHA_PROPS = ("fill_alpha", "line_alpha", "hatch_alpha", "text_alpha")


def add_glyph(
    fig: figure, glyph_class, *args, source, legend_label=None, color=None, alpha=None, **kwargs
) -> GlyphRenderer:
    """`fig.scatter(...)` and friends, with only the glyph drawn.

    Bokeh's glyph methods also build a non-selection and a muted copy of every glyph, which a
    lab page never shows (BokehJS derives them when asked): this builds the renderer alone,
    at about a third of the cost. Same arguments: `color` and `alpha` set every colour and
    alpha the glyph has unless given one by one, and `legend_label` adds the renderer to the
    figure's legend under that label.
    """
    renderer_args = {k: kwargs.pop(k) for k in RENDERER_ARGS if k in kwargs}
    kwargs.update(zip(positional_args(glyph_class), args, strict=False))  # as the methods take
    props = glyph_class.properties()
    for names, shared in ((_COLOUR_PROPS, color), (_ALPHA_PROPS, alpha)):
        if shared is not None:
            for name in names:
                if name in props:
                    kwargs.setdefault(name, shared)
    renderer = fig.add_glyph(source, glyph_class(**kwargs), **renderer_args)
    if legend_label is not None:
        _add_to_legend(fig, legend_label, renderer)
    return renderer


def add_placed_labels(fig: figure, source, *, x: str, y: str, text: str, font_px: float):
    """One Text glyph for labels placed beforehand in screen pixels (receipt_labels: the
    source's `dx` and `dy` columns), centred on their offsets."""
    return add_glyph(
        fig,
        Text,
        x=x,
        y=y,
        text=text,
        source=source,
        x_offset="dx",
        y_offset="dy",
        text_align="center",
        text_baseline="middle",
        text_font_size=f"{font_px:.0f}px",
    )


def _add_to_legend(fig: figure, label: str, renderer) -> None:
    legends = fig.legend
    if legends:
        legend = legends[0]
    else:
        legend = Legend()
        fig.add_layout(legend)
    for item in legend.items:
        if item.label == value(label):
            item.renderers.append(renderer)
            return
    legend.items.append(LegendItem(label=value(label), renderers=[renderer]))


def add_hover(fig: figure, renderers, tooltips) -> None:
    fig.add_tools(HoverTool(renderers=list(renderers), tooltips=tooltips))


def f32(values) -> np.ndarray:
    """Float32 copy for a ColumnDataSource column: sent as a binary buffer, not JSON."""
    return np.ascontiguousarray(values, dtype=np.float32)


def _slug(title: str) -> str:
    keep = "".join(ch if ch.isalnum() else "-" for ch in title.lower())
    return "-".join(part for part in keep.split("-") if part) or "plot"


def assign(source, data: dict) -> None:
    """Set a ColumnDataSource's data, sending only the columns that changed.

    With the same columns and row count, only changed columns go out (as one
    ColumnDataChanged event): labels and masks rarely move, and at 4096 keys their strings
    would otherwise dominate every message. A new shape replaces the whole data.
    """
    old = source.data
    n_new = {len(v) for v in data.values()}
    if set(old) != set(data) or len(n_new) != 1 or {len(v) for v in old.values()} != n_new:
        source.data = data
        return
    changed = {k: v for k, v in data.items() if not _same_column(old[k], v)}
    if changed:
        # Not `source.data.update`: its event would read the columns when the page's hold
        # ends, after a later reshape of this source (app/patches/bokeh_columns.py).
        replace_columns(source, changed)


def _same_column(old, new) -> bool:
    if isinstance(old, np.ndarray) and isinstance(new, np.ndarray):
        return old.dtype == new.dtype and np.array_equal(old, new, equal_nan=True)
    if isinstance(old, np.ndarray) or isinstance(new, np.ndarray):
        return False
    return list(old) == list(new)
