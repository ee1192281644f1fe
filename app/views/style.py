"""Shared look of every figure: the Okabe-Ito palette, projector-sized fonts, one figure factory.

Okabe-Ito is distinguishable under the common forms of colour blindness; roles (query, key,
value, contribution, output) also differ by shape or dash, so colour is never the only cue.
"""

from __future__ import annotations

import numpy as np
from bokeh.core.property.vectorization import value
from bokeh.models import (
    AllIndices,
    AllLabels,
    BasicTicker,
    BasicTickFormatter,
    CDSView,
    GlyphRenderer,
    HoverTool,
    Legend,
    LegendItem,
    LinearScale,
    SaveTool,
    UnionRenderers,
)
from bokeh.models.glyphs import Text
from bokeh.plotting import figure
from panel.theme import Bootstrap
from panel.viewable import Viewable

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


def figure_name(title: str) -> dict[str, str]:
    """What a screen reader meets on a plot: a figure named by its title, which says where its
    numbers are. The drawing itself is a canvas; each plot's table (app/views/plot_text.py)
    follows the plots. A reference by id cannot reach it: Panel puts the plot and the table in
    different shadow roots. Not role="img": that would make the toolbar inside it a control
    nested in an image."""
    return {
        "role": "figure",
        "aria-label": f"{title}: a chart; its numbers are in a table after the plots",
    }


def make_figure(title: str, *, height: int = 320, **kwargs) -> figure:
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
        html_attributes=figure_name(title),
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


# An average glyph of FONT as a fraction of its size (measured in Chromium: bold 0.57-0.61 on
# the titles, 0.68 on a token with its space marker; regular 0.50-0.61), on the wide side.
BOLD_EM, REGULAR_EM = 0.64, 0.61
# A toolbar button's width: the title keeps clear of the whole toolbar (BokehJS folds it into
# its "⋮" menu only sometimes, and then draws it over the title).
TOOLBAR_BUTTON_PX = 28


def toolbar_width(fig: figure) -> float:
    """The width of a figure's toolbar: a button per tool (hover tools share one) and "⋮"."""
    buttons = sum(1 for tool in fig.toolbar.tools if not isinstance(tool, HoverTool))
    return TOOLBAR_BUTTON_PX * (buttons + 1)


def text_width(text: str, font_size: str, *, bold: bool = False) -> float:
    """The estimated width in px of one line of `text` at a CSS size such as "17px"."""
    px = float(str(font_size).removesuffix("px") or 0)
    return (BOLD_EM if bold else REGULAR_EM) * px * len(text)


class FitText:
    """A figure's title, x-axis label and legend columns chosen for the width the browser draws
    its frame at (`inner_width`, reported once drawn and on each resize, and the text size,
    which presenter mode changes): the longest variant that fits, else the last. Before the
    browser reports a width the first variant is shown."""

    def __init__(self, fig: figure, *, legend_cols: int | None = None):
        self.fig = fig
        self._titles: tuple[str, ...] = (fig.title.text,)
        self._x_labels: tuple[str, ...] | None = None
        self._y_labels: tuple[str, ...] | None = None
        self._legend_cols = legend_cols
        fig.on_change("inner_width", self._changed)
        fig.title.on_change("text_font_size", self._changed)

    def title(self, *variants: str) -> None:
        self._titles = tuple(variants)
        self.refit()

    def x_label(self, *variants: str) -> None:
        self._x_labels = tuple(variants)
        self.refit()

    def y_label(self, *variants: str) -> None:
        """Variants of the y-axis label, fitted to the frame's height (a 720p projector's
        plane cut "towards the largest w·v" at both ends)."""
        if self._y_labels is None:
            self.fig.on_change("inner_height", self._changed)
        self._y_labels = tuple(variants)
        self.refit()

    def width(self, side: str = "inner_width") -> float | None:
        try:
            width = getattr(self.fig, side)  # readonly: set by the browser once drawn
        except (AttributeError, ValueError):
            width = None
        return float(width) if isinstance(width, int | float) and width > 0 else None

    def _changed(self, attr, old, new) -> None:  # Bokeh's callback signature
        self.refit()

    def refit(self) -> None:
        fig, width = self.fig, self.width()
        title = _fitting(self._titles, width, fig.title.text_font_size, True, toolbar_width(fig))
        if fig.title.text != title:
            fig.title.text = title
        if self._x_labels:
            axis = fig.xaxis[0]
            label = _fitting(self._x_labels, width, axis.axis_label_text_font_size, False, 0)
            if axis.axis_label != label:
                fig.xaxis.axis_label = label
        if self._y_labels:
            axis, height = fig.yaxis[0], self.width("inner_height")
            label = _fitting(self._y_labels, height, axis.axis_label_text_font_size, False, 0)
            if axis.axis_label != label:
                fig.yaxis.axis_label = label
        if self._legend_cols and fig.legend:
            legend = fig.legend[0]
            size = legend.label_text_font_size
            # A column: glyph, gap and the longest label shown (a hidden entry, the planes'
            # distractors, took the whole row); the legend's padding on each side.
            shown = [i for i in legend.items if i.visible]
            column = 40 + max((text_width(item_text(i), size) for i in shown), default=0)
            cols = min(self._legend_cols, max(1, len(shown)))
            while cols > 1 and width is not None and cols * column + 20 > width:
                cols -= 1
            if legend.ncols != cols:
                legend.ncols = cols


def item_text(item) -> str:
    """A legend entry's label as text (a dict or a Value, as Bokeh keeps it)."""
    label = item.label
    return str(label.get("value", "") if isinstance(label, dict) else getattr(label, "value", ""))


def _fitting(variants, width, font_size, bold: bool, spare: float) -> str:
    if width is None:
        return variants[0]
    for text in variants:
        if text_width(text, font_size, bold=bold) + spare <= width:
            return text
    return variants[-1]


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


MIN_PLOT_TEXT_PX = 14


def text_models(fig):
    """The models of a figure that can draw text: the figure, its title, toolbar, the panels
    around it and inside it (axes, legends, colour bars, labels) and its renderers' glyphs.
    A full walk of the figure's model graph finds the same ones (tested) but costs a page
    build about 12 ms."""
    yield fig
    yield fig.title
    for side in ("above", "below", "left", "right", "center"):
        yield from getattr(fig, side)
    for renderer in fig.renderers:
        yield renderer
        yield from (getattr(renderer, name, None) for name in ("glyph", "hover_glyph"))


def _font_sizes(figures):
    """(model, property, size in px) for every fixed font size in these figures."""
    seen = set()
    for fig in figures:
        for model in text_models(fig):
            if model is None or isinstance(model, str) or model.id in seen:
                continue
            seen.add(model.id)
            for name in model.properties():
                if not name.endswith("font_size"):
                    continue
                value = getattr(model, name)
                if isinstance(value, dict):
                    value = value.get("value")
                if isinstance(value, str) and value.endswith("px"):
                    try:
                        yield model, name, float(value[:-2])
                    except ValueError:
                        continue


def floor_text(figures, minimum: float = MIN_PLOT_TEXT_PX) -> None:
    """No plot text below `minimum` px, whichever view set it (legible on a projector)."""
    for model, name, size in list(_font_sizes(figures)):
        if size < minimum:
            setattr(model, name, f"{minimum:g}px")


class TextScale:
    """Scale every plot text of some figures by one factor (presenter mode), from the sizes
    they had when first seen, so switching back restores them exactly. A size a view wrote
    since (not the one this set) is that view's new unscaled size."""

    def __init__(self, figures):
        self._figures = list(figures)
        self._base: dict[tuple[str, str], float] = {}
        self._set: dict[tuple[str, str], float] = {}
        self.factor = 1.0

    def add(self, figures) -> None:
        """Figures built later (the trained model's) follow the same scale."""
        self._figures.extend(figures)

    def apply(self, factor: float | None = None) -> None:
        """Scale to `factor` (None: again to the last one, after views redrew)."""
        self.factor = self.factor if factor is None else factor
        for model, name, size in list(_font_sizes(self._figures)):
            key = (model.id, name)
            if key not in self._base or self._set.get(key) != size:
                self._base[key] = size
            new = round(self._base[key] * self.factor)
            self._set[key] = new
            if size != new:
                setattr(model, name, f"{new:g}px")


def slim(figures) -> None:
    """Share, before the page is served, the models of these figures that hold no state.

    The server keeps every Bokeh model of a page for as long as it is open. Renderers of one
    source share one view (a view stores the indices it computed for its source, so never
    across sources) with one "all rows" filter; every axis shares one label policy, and equal
    tickers, tick formatters and linear scales are one model (BokehJS computes ticks from the
    model and clones a plot's scales for its frame), and every source shares one selection
    policy (a source's selection itself is read-only in Bokeh, so each keeps its own). With the
    renderers built glyph-only (add_glyph) this took a page from ~670 Bokeh models to ~500
    (463 with the other savings in app/page/lab_page.py), and then to ~300.
    """
    every_row, all_labels = AllIndices(), AllLabels()
    views: dict[str, CDSView] = {}
    shared: dict[tuple, object] = {}
    policy = UnionRenderers()
    for fig in figures:
        for renderer in fig.renderers:
            if not isinstance(renderer, GlyphRenderer):
                continue
            # (No faded or muted glyph copies to drop: add_glyph never builds them.)
            if isinstance(renderer.view.filter, AllIndices):
                key = renderer.data_source.id
                if key not in views:  # a view is a model to build: only one per source
                    views[key] = CDSView(filter=every_row)
                renderer.view = views[key]
            renderer.data_source.selection_policy = policy
        for axis in (*fig.xaxis, *fig.yaxis):
            axis.major_label_policy = all_labels
            axis.ticker = _one_of(shared, axis.ticker)
            axis.formatter = _one_of(shared, axis.formatter)
        for grid in fig.grid:
            grid.ticker = _one_of(shared, grid.ticker)
        fig.x_scale = _one_of(shared, fig.x_scale)
        fig.y_scale = _one_of(shared, fig.y_scale)


# Stateless models that equal settings make interchangeable (not FixedTicker: its ticks change).
_SHAREABLE = (BasicTicker, BasicTickFormatter, LinearScale)


def _one_of(shared: dict, model):
    if type(model) not in _SHAREABLE:
        return model
    settings = model.properties_with_values(include_defaults=False)
    key = (type(model), tuple(sorted((k, repr(v)) for k, v in settings.items())))
    return shared.setdefault(key, model)
