"""The two square planes' Bokeh figures, built once per session: address (the query and the
keys, with their drag handles) and payload (the values, the contributions w_i·v_i head to tail,
the output, a faded "before" output and the ablated head's note).

Building only: GeometryView (app/views/geometry.py) owns the sources and fills them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from bokeh.models import (
    CDSView,
    ColumnDataSource,
    GroupFilter,
    Label,
    PointDrawTool,
    Range1d,
    Span,
)
from bokeh.models.glyphs import Line, Scatter, Segment, Text

from app.i18n.markers import N_
from app.i18n.translator import ENGLISH, Translator

from .style import (
    CASING,
    EDGES,
    ROLE_COLOURS,
    add_glyph,
    add_hover,
    canvas_words,
    decimal_ticks,
    make_figure,
    style_legend,
)
from .text_fit import FitText

# Square frames so a 45-degree vector looks like one; the outer size leaves room for axes.
FRAME = 300
FIG_WIDTH, FIG_HEIGHT = FRAME + 110, FRAME + 110
ADDRESS_FONT_PX, PAYLOAD_FONT_PX = 16.0, 15.0
# On an ablated head's payload plane, over its faded contributions (they no longer reach the
# model: the output is zero).
# TRANSLATORS: a note on the payload plane, in two lines (keep the \n: a phone's plane is narrow).
ABLATED_TEXT = N_("ablated: this head's\noutput is zeroed")
# The same note on a patched head's plane: the output drawn is the other sentence's, not the
# sum of the contributions drawn (activation patching).
# TRANSLATORS: a note on the payload plane, in two lines (keep the \n).
PATCHED_TEXT = N_("patched: this head's output\ncomes from the other sentence")
ADDRESS_TITLE = N_("Address: query and keys")
PAYLOAD_TITLE = N_("Payload: values, w·v, output")


@dataclass(frozen=True)
class Plane:
    fig: object
    fit: FitText
    distractors: object  # the distractor cloud's renderer (hidden when there are none)
    note: Label | None = None  # the payload plane's "ablated" note


def head_angle(x, y):
    """Bokeh's triangle marker points up: the angle that turns it to the vector (x, y)."""
    return np.arctan2(y, x) - np.pi / 2


def proxy_source(selected) -> ColumnDataSource:
    """One source of a single NaN point for every legend proxy of both planes (a source per
    glyph would cost three models each)."""
    return ColumnDataSource(data={"x": [math.nan], "y": [math.nan]}, selected=selected)


def address_plane(
    geometry, distractors, key_tips, query_tip, proxies, tr: Translator = ENGLISH
) -> Plane:
    _ = canvas_words(tr)
    fig = _square(_(ADDRESS_TITLE), tr)
    fit = FitText(fig, legend_cols=3, tr=tr)  # one row of the legend while it fits
    fit.title(_(ADDRESS_TITLE), _("Address: q and keys"), _("Address"))
    fig.name = "address_plot"
    keys_only, query_only = _kind("key"), _kind("query")
    cloud = _cloud(fig, distractors, "kx", "ky", 0.45, _("distractor keys"))
    seg, _key_heads = _arrows(fig, geometry, keys_only, "colour", width=4)
    # Dashed, so a key pointing the same way still shows through.
    q_seg, _query_head = _arrows(fig, geometry, query_only, "colour", width=4, dash=[10, 6])
    for view, role in ((query_only, "query"), (keys_only, "key")):
        _tip_labels(fig, geometry, view, ADDRESS_FONT_PX, ROLE_COLOURS[role])
    add_hover(fig, [seg, q_seg], [("", "@label"), ("x", "@x1{0.00}"), ("y", "@y1{0.00}")])
    # Drag handles: hollow circles on the tips of the labelled keys and of the query.
    k_tip = _handles(fig, key_tips, "key", 18)
    q_tip = _handles(fig, query_tip, "query", 20)
    _drag_tool(fig, [k_tip, q_tip], _("Drag a key or the query"))
    _legend_proxies(fig, proxies, [(_("query"), "query"), (_("keys"), "key")])
    return Plane(fig, fit, cloud)


def payload_plane(
    geometry, contributions, distractors, value_tips, ghost, proxies, tr: Translator = ENGLISH
) -> Plane:
    _ = canvas_words(tr)
    fig = _square(_(PAYLOAD_TITLE), tr)
    fit = FitText(fig, legend_cols=4, tr=tr)
    fit.title(_(PAYLOAD_TITLE), _("Payload: values, output"), _("Payload"))
    fig.name = "payload_plot"
    values = _kind("value")
    cloud = _cloud(fig, distractors, "vx", "vy", 0.35, _("distractor values"))
    _arrows(fig, geometry, values, "colour", width=3)
    _tip_labels(fig, geometry, values, PAYLOAD_FONT_PX, ROLE_COLOURS["value"])
    # The w·v shafts on a darker casing: orange alone is 2.25:1 on white (style.EDGES).
    contribution = ROLE_COLOURS["contribution"]
    c_view = _kind("contribution")
    _casing(fig, contributions, c_view, EDGES[contribution], width=5 + 2 * CASING)
    c_seg, c_head = _arrows(fig, contributions, c_view, contribution, width=5)
    c_head.glyph.line_color = EDGES[contribution]
    o_seg, _output_head = _arrows(
        fig, contributions, _kind("output"), ROLE_COLOURS["output"], width=3
    )
    _arrows(fig, ghost, None, ROLE_COLOURS["output"], width=3, dash=[6, 5])
    add_hover(
        fig,
        [c_seg, o_seg],
        [("", "@label"), (_("weight"), "@weight{0.000}"), ("|w·v|", "@norm{0.000}")],
    )
    _drag_tool(fig, [_handles(fig, value_tips, "value", 18)], _("Drag a value"))
    _legend_proxies(
        fig,
        proxies,
        [(_("values"), "value"), ("w·v", "contribution"), (_("output"), "output")],
    )
    return Plane(fig, fit, cloud, _ablated_note(fig, _(ABLATED_TEXT)))


def _square(title, tr: Translator = ENGLISH):
    fig = make_figure(
        title,
        tr=tr,
        height=FIG_HEIGHT,
        width=FIG_WIDTH,
        sizing_mode=None,
        frame_width=FRAME,
        frame_height=FRAME,
        x_range=Range1d(-2, 2),
        y_range=Range1d(-2, 2),
        tools="pan,wheel_zoom,reset",  # room to follow a long distractor cloud
    )
    fig.xaxis.axis_label = "x"
    fig.yaxis.axis_label = "y"
    decimal_ticks(fig, tr)
    for axis in (*fig.xaxis, *fig.yaxis):
        axis.ticker.desired_num_ticks = 5  # nine labels ran together on a laptop or a phone
    for dim in (0, 1):
        fig.add_layout(
            Span(
                location=0,
                dimension="width" if dim else "height",
                line_color="#b0b0b0",
                line_width=1,
            )
        )
    return fig


def _kind(kind: str) -> CDSView:
    return CDSView(filter=GroupFilter(column_name="kind", group=kind))


def _cloud(fig, source, x, y, alpha, legend):
    return add_glyph(
        fig,
        Scatter,
        x,
        y,
        source=source,
        size=4,
        color=ROLE_COLOURS["distractor"],
        alpha=alpha,
        legend_label=legend,
    )


def _casing(fig, source, view, colour, *, width):
    """A wider shaft drawn under an arrow's own, so a light colour keeps a dark edge."""
    return add_glyph(
        fig,
        Segment,
        "x0",
        "y0",
        "x1",
        "y1",
        source=source,
        view=view,
        line_color=colour,
        line_width=width,
        line_alpha="alpha",
    )


def _arrows(fig, source, view, colour_field, *, width, dash="solid"):
    """A shaft (segment) and a head (triangle) per row, coloured by `colour_field`."""
    on = {"view": view} if view is not None else {}
    seg = add_glyph(
        fig,
        Segment,
        "x0",
        "y0",
        "x1",
        "y1",
        source=source,
        line_color=colour_field,
        line_width=width,
        line_alpha="alpha",
        line_dash=dash,
        **on,
    )
    head = add_glyph(
        fig,
        Scatter,
        "x1",
        "y1",
        source=source,
        **on,
        marker="triangle",
        angle="angle",
        size="size",
        fill_color=colour_field,
        line_color=colour_field,
        fill_alpha="alpha",
        line_alpha="alpha",
    )
    return seg, head


def _tip_labels(fig, source, view, font_px: float, colour: str) -> None:
    """Each arrow's label just past its tip (offsets come with the data).

    One colour per glyph, not a colour column: when a new program has fewer rows, BokehJS
    recomputes a filtered view's mask before it rebuilds the text glyph's labels, and the
    labels' visuals then read the new, shorter colour column at the old rows (a RangeError
    in set_visuals). Alphas are plain numbers and are read again once the labels are in."""
    add_glyph(
        fig,
        Text,
        "x1",
        "y1",
        text="tag",
        source=source,
        view=view,
        x_offset="label_dx",
        y_offset="label_dy",
        text_align="center",
        text_baseline="middle",
        text_font_size=f"{font_px:.0f}px",
        text_color=colour,
        text_alpha="alpha",
    )


def _handles(fig, source, role: str, size: int):
    return add_glyph(
        fig,
        Scatter,
        "x",
        "y",
        source=source,
        size=size,
        fill_alpha=0.0,
        line_color=ROLE_COLOURS[role],
        line_width=2,
    )


def _drag_tool(fig, renderers, description: str) -> None:
    drag = PointDrawTool(renderers=renderers, add=False, drag=True, description=description)
    fig.add_tools(drag)
    fig.toolbar.active_tap = drag
    fig.toolbar.active_drag = drag


def _legend_proxies(fig, source, entries) -> None:
    # Invisible glyphs so the legend names each role with its colour and line; a role drawn
    # with a casing (the w·v arrows) shows it in its swatch too: one item, both lines.
    for text, role in entries:
        colour = ROLE_COLOURS[role]
        lines = [(EDGES[colour], 4 + 2 * CASING)] if colour in EDGES else []
        for line_color, line_width in [*lines, (colour, 4)]:
            add_glyph(
                fig,
                Line,
                "x",
                "y",
                source=source,
                line_color=line_color,
                line_width=line_width,
                line_dash=[10, 6] if role == "query" else "solid",
                legend_label=text,
            )
    # Under the frame, in one row where it fits: inside it, on a 720p projector, it covered the
    # values' arrows (and in a trained head's crowded plane no corner stays free). Tight, to
    # leave the square its height.
    style_legend(fig, below=True)
    fig.legend.update(
        label_text_font_size="13px",
        click_policy="none",
        glyph_width=16,
        label_standoff=4,
        spacing=8,
        padding=3,
        margin=2,
        ncols=len(entries),
    )


def _ablated_note(fig, text: str) -> Label:
    # One Label (one model), shown only while the open head is ablated: centred near the top
    # of the plane (in data units, placed again when the plane's range changes).
    note = Label(
        name="ablated_note",
        x=0.0,
        y=0.0,
        text=text,
        visible=False,
        text_align="center",
        text_baseline="middle",
        text_font_size="13px",
        text_font_style="bold",
        text_color=ROLE_COLOURS["output"],
        background_fill_color="#ffffff",
        background_fill_alpha=0.9,
        border_line_color="#888888",
        padding=4,
    )
    fig.add_layout(note)
    return note
