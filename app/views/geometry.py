"""The two vector planes: address space (query and keys) and payload space (values, the
contributions w_i·v_i laid head to tail, and the output).

Keys and values are drawn in separate planes on purpose: the key decides the route, the value is
what travels along it. Arrow tips of the labelled pairs (and the query) can be dragged.
"""

from __future__ import annotations

import math

import numpy as np
import panel as pn
from bokeh.models import (
    CDSView,
    ColumnDataSource,
    GroupFilter,
    Label,
    PointDrawTool,
    Range1d,
    Selection,
    Span,
)
from bokeh.models.glyphs import Line, Scatter, Segment, Text

from app.state.settings_schema import COORD_LIMIT
from engine.scenarios import SCENARIOS

from .label_layout import HANDLE_RADIUS_PX, place_labels
from .style import (
    ROLE_COLOURS,
    FitText,
    add_glyph,
    add_hover,
    assign,
    f32,
    make_figure,
    style_legend,
    text_width,
)

# Arrowheads and text are drawn only while the picture stays readable.
MAX_HEADS = 32
DRAG_FLUSH_MS = 50
# A dragged tip reaches the state rounded to 4 decimals: a tip within this of the drawn point
# is the same point, and is not written back (that would pull a handle under the pointer).
TIP_TOLERANCE = 1e-4
# Where the query's handle may sit on its ray, as a fraction of its length, in order of
# preference: on the tip unless a key's handle is there (in the default scenario q lies on A).
QUERY_HANDLE_AT = (1.0, 0.7, 1.25, 0.5, 0.85, 1.15, 0.35)
HANDLE_GAP_PX = 26  # centre to centre: the handles are 18-20 px circles
PREVIEW_ROWS = ("kx", "ky", "vx", "vy", "hidden", "legal")
# On an ablated head's payload plane, over its faded contributions (they no longer reach the
# model: the output is zero).
ABLATED_TEXT = "ablated: this head's\noutput is zeroed"  # two lines: a phone's plane is narrow
ABLATED_ALPHA = 0.25
ADDRESS_FONT_PX, PAYLOAD_FONT_PX = 16.0, 15.0
# Square frames so a 45-degree vector looks like one; the outer size leaves room for axes.
FRAME = 300
FIG_WIDTH, FIG_HEIGHT = FRAME + 110, FRAME + 110


def _head_angle(x, y):
    # Bokeh's triangle marker points up; rotate it to the vector direction.
    return np.arctan2(y, x) - np.pi / 2


def _limit(current: float, needed: float) -> float:
    """Keep the axis still while the content fits; grow at once, shrink only when far too big."""
    needed = max(needed, 0.5)
    if needed > current or needed < 0.45 * current:
        return float(1.3 * needed)
    return current


def _arrow_renderers(
    fig, source, view, colour_field, *, width, alpha_field="alpha", legend=None, dash="solid"
):
    kw = {"legend_label": legend} if legend else {}
    if view is not None:
        kw["view"] = view
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
        line_alpha=alpha_field,
        line_dash=dash,
        **kw,
    )
    head = add_glyph(
        fig,
        Scatter,
        "x1",
        "y1",
        source=source,
        **({"view": view} if view is not None else {}),
        marker="triangle",
        angle="angle",
        size="size",
        fill_color=colour_field,
        line_color=colour_field,
        fill_alpha=alpha_field,
        line_alpha=alpha_field,
    )
    return seg, head


class GeometryView(pn.viewable.Viewer):
    """Address and payload planes, built once per session and updated in place."""

    def __init__(self, state, **params):
        super().__init__(**params)
        self._state = state
        self._writing = False
        self._pending: dict[str, object] = {}
        self._flush_scheduled = False
        self._n_pairs = 0
        self._draggable = True
        # Tip positions as last drawn: a drag changes only the rows that moved away from these
        # (with "normalise" on, drawn keys differ from the stored ones, and must not be written).
        self._drawn: dict[str, tuple[list[float], list[float]]] = {
            "key": ([], []),
            "value": ([], []),
        }

        # No tool selects from these sources (only from the drag handles'), so they share one
        # empty selection: one model per page instead of one each.
        self._unselected = Selection()
        quiet = {"selected": self._unselected}
        self.geometry = ColumnDataSource(name="geometry", data=self._empty_geometry(), **quiet)
        self.contributions = ColumnDataSource(
            name="contributions", data=self._empty_contrib(), **quiet
        )
        self.distractors = ColumnDataSource(
            name="distractors",
            data={c: f32([]) for c in ("kx", "ky", "vx", "vy", "weight")},
            **quiet,
        )
        self.key_tips = ColumnDataSource(name="key_tips", data={"x": [], "y": [], "index": []})
        self.value_tips = ColumnDataSource(name="value_tips", data={"x": [], "y": [], "index": []})
        self.query_tip = ColumnDataSource(name="query_tip", data={"x": [0.0], "y": [0.0]})
        # The output "before" an action, drawn faded and dashed (empty when there is none).
        self.ghost = ColumnDataSource(name="ghost", data=self._ghost_data(None), **quiet)
        # What the browser needs to preview a drag exactly (app/views/preview.py): float64,
        # one row per candidate, and one row of settings.
        self.preview = ColumnDataSource(
            name="preview", data={c: np.zeros(0) for c in PREVIEW_ROWS}, **quiet
        )
        self.preview_params = ColumnDataSource(
            name="preview_params", data={"enabled": [0.0]}, **quiet
        )
        self._version = 0
        self._query_handle = 1.0

        self.address_fig = self._build_address()
        self.payload_fig = self._build_payload()
        # Labels are placed in screen pixels: once the browser reports a plane's real size
        # (it follows the window), place them again for that size.
        self._label_args: tuple | None = None
        for fig in (self.address_fig, self.payload_fig):
            fig.on_change("inner_width", self._replace_labels)
        for src, kind in ((self.key_tips, "key"), (self.value_tips, "value")):
            src.on_change("data", self._tips_changed(kind))
        self.query_tip.on_change("data", self._tips_changed("query"))

    # -- construction -------------------------------------------------------------------------
    @staticmethod
    def _empty_geometry():
        cols = {
            c: f32([])
            for c in ("x0", "y0", "x1", "y1", "angle", "size", "alpha", "label_dx", "label_dy")
        }
        cols.update(kind=[], label=[], colour=[], index=np.zeros(0, dtype=np.int32))
        return cols

    @staticmethod
    def _empty_contrib():
        cols = {
            c: f32([])
            for c in ("x0", "y0", "x1", "y1", "cx", "cy", "norm", "weight", "angle", "size")
        }
        cols.update(kind=[], label=[], alpha=f32([]))
        return cols

    def _square(self, title, x_label, y_label):
        fig = make_figure(
            title,
            height=FIG_HEIGHT,
            width=FIG_WIDTH,
            sizing_mode=None,
            frame_width=FRAME,
            frame_height=FRAME,
            x_range=Range1d(-2, 2),
            y_range=Range1d(-2, 2),
            tools="pan,wheel_zoom,reset",  # room to follow a long distractor cloud
        )
        fig.xaxis.axis_label = x_label
        fig.yaxis.axis_label = y_label
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

    def _build_address(self):
        fig = self._square("Address: query and keys", "x", "y")
        self.address_fit = FitText(fig)
        self.address_fit.title("Address: query and keys", "Address: q and keys", "Address")
        fig.name = "address_plot"
        keys_only = CDSView(filter=GroupFilter(column_name="kind", group="key"))
        query_only = CDSView(filter=GroupFilter(column_name="kind", group="query"))
        self._distractor_keys = add_glyph(
            fig,
            Scatter,
            "kx",
            "ky",
            source=self.distractors,
            size=4,
            color=ROLE_COLOURS["distractor"],
            alpha=0.45,
            legend_label="distractor keys",
        )
        seg, _ = _arrow_renderers(fig, self.geometry, keys_only, "colour", width=4)
        # Dashed, so a key pointing the same way still shows through.
        q_seg, _ = _arrow_renderers(fig, self.geometry, query_only, "colour", width=4, dash=[10, 6])
        for view, role in ((query_only, "query"), (keys_only, "key")):
            self._tip_labels(fig, view, f"{ADDRESS_FONT_PX:.0f}px", ROLE_COLOURS[role])
        add_hover(fig, [seg, q_seg], [("", "@label"), ("x", "@x1{0.00}"), ("y", "@y1{0.00}")])
        # Drag handles: hollow circles on the tips of the labelled keys and of the query.
        k_tip = add_glyph(
            fig,
            Scatter,
            "x",
            "y",
            source=self.key_tips,
            size=18,
            fill_alpha=0.0,
            line_color=ROLE_COLOURS["key"],
            line_width=2,
        )
        q_tip = add_glyph(
            fig,
            Scatter,
            "x",
            "y",
            source=self.query_tip,
            size=20,
            fill_alpha=0.0,
            line_color=ROLE_COLOURS["query"],
            line_width=2,
        )
        drag = PointDrawTool(
            renderers=[k_tip, q_tip], add=False, drag=True, description="Drag a key or the query"
        )
        fig.add_tools(drag)
        fig.toolbar.active_tap = drag
        fig.toolbar.active_drag = drag
        self._legend_proxies(fig, [("query", "query"), ("keys", "key")])
        return fig

    def _build_payload(self):
        fig = self._square("Payload: values, w·v, output", "x", "y")
        self.payload_fit = FitText(fig)
        self.payload_fit.title("Payload: values, w·v, output", "Payload: values, output", "Payload")
        fig.name = "payload_plot"
        values = CDSView(filter=GroupFilter(column_name="kind", group="value"))
        contrib = CDSView(filter=GroupFilter(column_name="kind", group="contribution"))
        output = CDSView(filter=GroupFilter(column_name="kind", group="output"))
        self._distractor_values = add_glyph(
            fig,
            Scatter,
            "vx",
            "vy",
            source=self.distractors,
            size=4,
            color=ROLE_COLOURS["distractor"],
            alpha=0.35,
            legend_label="distractor values",
        )
        _arrow_renderers(fig, self.geometry, values, "colour", width=3)
        self._tip_labels(fig, values, f"{PAYLOAD_FONT_PX:.0f}px", ROLE_COLOURS["value"])
        c_seg, _ = _arrow_renderers(
            fig, self.contributions, contrib, ROLE_COLOURS["contribution"], width=5
        )
        o_seg, _ = _arrow_renderers(
            fig, self.contributions, output, ROLE_COLOURS["output"], width=3
        )
        _arrow_renderers(
            fig, self.ghost, None, ROLE_COLOURS["output"], width=3, dash=[6, 5], legend=None
        )
        add_hover(
            fig,
            [c_seg, o_seg],
            [("", "@label"), ("weight", "@weight{0.000}"), ("|w·v|", "@norm{0.000}")],
        )
        v_tip = add_glyph(
            fig,
            Scatter,
            "x",
            "y",
            source=self.value_tips,
            size=18,
            fill_alpha=0.0,
            line_color=ROLE_COLOURS["value"],
            line_width=2,
        )
        drag = PointDrawTool(renderers=[v_tip], add=False, drag=True, description="Drag a value")
        fig.add_tools(drag)
        fig.toolbar.active_tap = drag
        fig.toolbar.active_drag = drag
        self._legend_proxies(
            fig, [("values", "value"), ("w·v head to tail", "contribution"), ("output", "output")]
        )
        # One Label (one model), shown only while the open head is ablated: centred near the
        # top of the plane (in data units, placed again when the plane's range changes).
        self.ablated_note = Label(
            name="ablated_note",
            x=0.0,
            y=0.0,
            text=ABLATED_TEXT,
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
        fig.add_layout(self.ablated_note)
        return fig

    def _legend_proxies(self, fig, entries):
        # Invisible glyphs so the legend names each role with its colour and line; one shared
        # source of a single NaN point (a source per glyph would cost three models each).
        if not hasattr(self, "_proxy_source"):
            self._proxy_source = ColumnDataSource(
                data={"x": [math.nan], "y": [math.nan]}, selected=self._unselected
            )
        for text, role in entries:
            add_glyph(
                fig,
                Line,
                "x",
                "y",
                source=self._proxy_source,
                line_color=ROLE_COLOURS[role],
                line_width=4,
                line_dash=[10, 6] if role == "query" else "solid",
                legend_label=text,
            )
        style_legend(fig, "bottom_left")
        fig.legend.label_text_font_size = "13px"
        fig.legend.click_policy = "none"

    # -- update -------------------------------------------------------------------------------
    @staticmethod
    def _ghost_data(point) -> dict:
        cols = ("x0", "y0", "x1", "y1", "angle", "size", "alpha")
        if point is None:
            return {c: f32([]) for c in cols}
        x, y = float(point[0]), float(point[1])
        return {
            "x0": f32([0.0]),
            "y0": f32([0.0]),
            "x1": f32([x]),
            "y1": f32([y]),
            "angle": f32(_head_angle(np.array([x]), np.array([y]))),
            "size": f32([14.0 if math.hypot(x, y) > 0 else 0.0]),
            "alpha": f32([0.35]),
        }

    def set_ghost(self, point) -> None:
        """Draw a faded dashed "before" output arrow at point (x, y); None removes it."""
        if point is not None and not all(math.isfinite(float(c)) for c in point[:2]):
            point = None
        assign(self.ghost, self._ghost_data(point))
        if point is not None:  # grow the payload plane if the "before" arrow lies outside it
            x_range = self.payload_fig.x_range
            lim = _limit(float(x_range.end), max(abs(float(point[0])), abs(float(point[1]))))
            if lim > x_range.end:
                x_range.update(start=-lim, end=lim)
                self.payload_fig.y_range.update(start=-lim, end=lim)

    def _tip_labels(self, fig, view, font_size: str, colour: str) -> None:
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
            source=self.geometry,
            view=view,
            x_offset="label_dx",
            y_offset="label_dy",
            text_align="center",
            text_baseline="middle",
            text_font_size=font_size,
            text_color=colour,
            text_alpha="alpha",
        )

    def update(self, snap, n_pairs: int, *, draggable: bool = True) -> None:
        """Push one snapshot into the sources; the caller holds the document.

        `draggable=False` (a trained head: its planes are projections, not settings) draws the
        arrows without drag handles and turns the browser preview off.
        """
        self._draggable = draggable
        n = len(snap.weights)
        m = max(0, min(n_pairs, n))
        self._n_pairs = m
        legal = np.asarray(snap.legal, dtype=bool)
        labels = list(snap.labels)
        q = np.asarray(snap.query, dtype=np.float64)
        keys = np.asarray(snap.keys, dtype=np.float64)
        vals = np.asarray(snap.values, dtype=np.float64)
        pair_labels = [lab if legal[i] else f"{lab} (masked)" for i, lab in enumerate(labels[:m])]
        vec = np.vstack([q[None, :2], keys[:m, :2], vals[:m, :2]])
        pair_alpha = np.where(legal[:m], 1.0, 0.35)
        alpha = np.concatenate([[1.0], pair_alpha, pair_alpha])
        kind = ["query"] + ["key"] * m + ["value"] * m
        texts = ["q", *pair_labels, *pair_labels]
        # The arrows' rows go out once, with their labels (placed below, once the ranges and the
        # query's handle are known): a new row count followed by a patch of some columns in the
        # same message let the browser draw the labels' visuals from the old row count
        # (RangeError in set_visuals).
        rows = {
            "x0": f32(np.zeros(len(vec))),
            "y0": f32(np.zeros(len(vec))),
            "x1": f32(vec[:, 0]),
            "y1": f32(vec[:, 1]),
            "angle": f32(_head_angle(vec[:, 0], vec[:, 1])),
            "size": f32(np.full(len(vec), 16.0)),
            "alpha": f32(alpha),
            "kind": kind,
            "label": texts,
            "colour": [ROLE_COLOURS[k] for k in kind],
            "index": np.array([-1, *range(m), *range(m)], dtype=np.int32),
        }
        self._writing = True
        try:
            self._update_contributions(snap, labels, legal)
            assign(
                self.distractors,
                {
                    "kx": f32(keys[m:, 0]),
                    "ky": f32(keys[m:, 1]),
                    "vx": f32(vals[m:, 0]),
                    "vy": f32(vals[m:, 1]),
                    "weight": f32(snap.weights[m:]),
                },
            )
            tips = m if draggable else 0
            self._set_tips("key", self.key_tips, keys[:tips])
            self._set_tips("value", self.value_tips, vals[:tips])
        finally:
            self._writing = False
        self._show_distractors(len(keys) > m)
        self._fit_ranges(q, keys, vals, m)
        self._query_handle = _query_handle_at(
            q[:2], keys[:m, :2], self._px(self.address_fig), float(self.address_fig.x_range.end)
        )
        # Every column of the arrows together, with equal lengths (only changed ones go).
        # Labels are placed heaviest first (the key a head looks at, the value it passes on),
        # so a crowded plane drops the least important ones.
        weights = np.asarray(snap.weights, dtype=np.float64)[:m]
        norms = np.asarray(snap.contribution_norms, dtype=np.float64)[:m]
        priority = np.concatenate([[np.inf], weights, norms])
        out = np.asarray(snap.output, dtype=np.float64)[:2]
        assign(self.geometry, rows | self._label_layout(vec, texts, m, priority, out))
        # Off the plane when nothing may be dragged (the handle's renderer stays in place).
        handle = self._query_handle * q[:2] if draggable else np.array([np.nan, np.nan])
        self._writing = True
        try:
            if not np.allclose(
                [self.query_tip.data["x"][0], self.query_tip.data["y"][0]],
                handle,
                atol=1e-6,
                equal_nan=True,
            ):
                assign(self.query_tip, {"x": [float(handle[0])], "y": [float(handle[1])]})
        finally:
            self._writing = False
        self._update_preview(snap, q, keys, vals, m)

    def _replace_labels(self, attr, old, new) -> None:
        # A browser resize, answered at once: its message can overtake a redraw that Panel
        # holds back for the next turn of the loop (a new program with fewer rows). A patch of
        # some columns would then reach the browser's old, longer source with the new row
        # count (RangeError in the labels' visuals), so this sends every column together.
        if self._label_args is not None and old != new:
            self.geometry.data = dict(self.geometry.data) | self._label_layout(*self._label_args)

    def _label_layout(
        self, vec: np.ndarray, texts: list[str], m: int, priority=None, output=None
    ) -> dict:
        """Label positions that avoid each other, the arrows, the handles and the legend, inside
        the frame, placed in order of `priority` (largest first); a label with no room is
        shortened to its position ("@4"), then dropped (its hover still names it)."""
        self._label_args = (vec, texts, m, priority, output)
        if priority is None:
            priority = np.zeros(len(vec))
        dx, dy, tags = np.zeros(len(vec)), np.zeros(len(vec)), list(texts)
        crowd = int(bool(self._distractor_keys.visible))  # one more legend entry
        planes = (
            (self.address_fig, list(range(0, 1 + m)), ADDRESS_FONT_PX, 2 + crowd),
            (self.payload_fig, list(range(1 + m, 1 + 2 * m)), PAYLOAD_FONT_PX, 3 + crowd),
        )
        for fig, rows, font, legend_rows in planes:
            px = self._px(fig)
            start = float(fig.x_range.start)
            frame = (float(fig.x_range.end) - start) / px
            tips = [((vec[i, 0] - start) / px, frame - (vec[i, 1] - start) / px) for i in rows]
            # The legend sits in the bottom left corner (style_legend), one row per entry.
            avoid = [(0.0, frame - 28.0 * legend_rows - 18.0, 190.0, frame)]
            if fig is self.payload_fig and self.ablated_note.visible:
                # The "ablated" note near the top of the plane: two lines of 13 px bold.
                cx = (0.0 - start) / px
                cy = frame - (float(self.ablated_note.y) - start) / px
                half_w = 0.5 * text_width("ablated: this head's", "13px", bold=True) + 8
                avoid.append((cx - half_w, cy - 25.0, cx + half_w, cy + 25.0))
            if fig is self.address_fig and self._query_handle != 1.0:
                # The query's handle, when it sits off the query's tip (see _query_handle_at).
                hx = (self._query_handle * vec[0, 0] - start) / px
                hy = frame - (self._query_handle * vec[0, 1] - start) / px
                r = HANDLE_RADIUS_PX
                avoid.append((hx - r, hy - r, hx + r, hy + r))
            # Every arrow of the plane starts at the origin; the payload plane adds the output.
            ox0, oy0 = (0.0 - start) / px, frame - (0.0 - start) / px
            segments = [(ox0, oy0, tx, ty) for tx, ty in tips]
            if fig is self.payload_fig and output is not None:
                segments.append(
                    (ox0, oy0, (output[0] - start) / px, frame - (output[1] - start) / px)
                )
            order = sorted(range(len(rows)), key=lambda j: -float(priority[rows[j]]))
            placed = place_labels(
                tips, [texts[i] for i in rows], font, frame, avoid, order=order, segments=segments
            )
            for i, (ox, oy, tag) in zip(rows, placed, strict=True):
                dx[i], dy[i], tags[i] = ox, oy, tag
        return {"label_dx": f32(dx), "label_dy": f32(dy), "tag": tags}

    @staticmethod
    def _px(fig) -> float:
        """Data units per screen pixel in a square plane."""
        # The frame as the browser last drew it (its size follows the window), else as built.
        try:
            width = fig.inner_width  # readonly: the browser sets it once the plot is drawn
        except (AttributeError, ValueError):  # Bokeh: "doesn't have a value set"
            width = None
        width = width or fig.frame_width or FRAME
        return float(fig.x_range.end - fig.x_range.start) / max(1, width)

    def _update_preview(self, snap, q, keys, vals, m) -> None:
        q2, k2 = q[:2], keys[:, :2]
        visible = k2 @ q2
        hidden = np.asarray(snap.scores, dtype=np.float64) - visible
        # Distractors are drawn around the query (engine.interventions): in the query's own
        # frame (along q, across q) they stay put when the query turns, so turning it does
        # not resend thousands of them. The pairs' keys are sent as they are drawn.
        kx, ky = np.array(k2[:, 0], dtype=np.float64), np.array(k2[:, 1], dtype=np.float64)
        norm = float(np.hypot(*q2))
        if len(k2) > m and norm > 0:
            ux, uy = q2 / norm
            kx[m:] = k2[m:, 0] * ux + k2[m:, 1] * uy
            ky[m:] = -k2[m:, 0] * uy + k2[m:, 1] * ux
        rows = {
            "kx": kx,
            "ky": ky,
            "vx": np.array(vals[:, 0], dtype=np.float64),
            "vy": np.array(vals[:, 1], dtype=np.float64),
            "hidden": hidden,
            "legal": np.asarray(snap.legal, dtype=np.float64),
        }
        old = self.preview.data
        if set(old) == set(rows) and all(len(old[c]) == len(rows[c]) for c in rows):
            # Recomputed frames differ by rounding only: a column within 1e-12 stays as it is.
            rows = {
                c: (old[c] if np.allclose(old[c], v, rtol=0, atol=1e-12) else v)
                for c, v in rows.items()
            }
        assign(self.preview, rows)
        self._version += 1
        params = {
            "enabled": 0.0,
            "version": float(self._version),
            "n_pairs": float(m),
            "qx": float(q2[0]),
            "qy": float(q2[1]),
            "qhandle": float(self._query_handle),
            "scale": float(snap.scale_factor),
            "temperature": float(snap.temperature),
            "null_on": float(snap.null_weight is not None),
            "null_logit": float(snap.null_logit or 0.0),
            "coord_limit": COORD_LIMIT,
        }
        state = self._state
        scenario = SCENARIOS.get(getattr(state, "scenario", None))
        # Only the lab's own state is previewed (its pipeline is what preview.js mirrors).
        if (
            self._draggable
            and scenario is not None
            and hasattr(state, "angle")
            and len(snap.query) == 2
        ):
            lo, hi = state.param.angle.bounds or (-180.0, 180.0)
            base = np.asarray(scenario.query, dtype=np.float64)
            params.update(
                enabled=1.0,
                angle=float(state.angle),
                angle_lo=float(lo),
                angle_hi=float(hi),
                base_qx=float(base[0]),
                base_qy=float(base[1]),
                normalise=float(bool(state.normalise)),
            )
        # A whole new data (not a column patch), so the browser's change hook always runs.
        self.preview_params.data = {k: [v] for k, v in params.items()}

    def _show_distractors(self, shown: bool) -> None:
        for fig, renderer in (
            (self.address_fig, self._distractor_keys),
            (self.payload_fig, self._distractor_values),
        ):
            if renderer.visible != shown:
                renderer.visible = shown
                for item in fig.legend.items:
                    if renderer in item.renderers:
                        item.visible = shown

    def _update_contributions(self, snap, labels, legal):
        ablated = bool(getattr(snap, "ablated", False))
        if self.ablated_note.visible != ablated:
            self.ablated_note.visible = ablated
        c = np.asarray(snap.contributions, dtype=np.float64)[:, :2]
        ends = np.cumsum(c, axis=0)
        starts = ends - c
        out = np.asarray(snap.output, dtype=np.float64)[:2]
        n = len(c)
        head = 14.0 if n <= MAX_HEADS else 0.0
        x0 = np.append(starts[:, 0], 0.0)
        y0 = np.append(starts[:, 1], 0.0)
        x1 = np.append(ends[:, 0], out[0])
        y1 = np.append(ends[:, 1], out[1])
        assign(
            self.contributions,
            {
                "x0": f32(x0),
                "y0": f32(y0),
                "x1": f32(x1),
                "y1": f32(y1),
                "cx": f32(np.append(c[:, 0], out[0])),
                "cy": f32(np.append(c[:, 1], out[1])),
                "norm": f32(np.append(snap.contribution_norms, np.hypot(*out))),
                "weight": f32(np.append(snap.weights, 1.0)),
                "angle": f32(_head_angle(x1 - x0, y1 - y0)),
                "size": f32(np.append(np.full(n, head), 16.0)),
                # An ablated head's contributions are faded: computed, never passed on.
                "alpha": f32(
                    np.append(np.where(legal, 0.95, 0.3) * (ABLATED_ALPHA if ablated else 1), 1.0)
                ),
                "kind": ["contribution"] * n + ["output"],
                "label": [f"w·v {lab}" for lab in labels]
                + ["output (zeroed: the head is ablated)" if ablated else "output"],
            },
        )

    def _set_tips(self, kind, source, points):
        x, y = points[:, 0].tolist(), points[:, 1].tolist()
        self._drawn[kind] = (x, y)
        old_x, old_y = source.data.get("x", []), source.data.get("y", [])
        if (
            len(old_x) == len(x)
            and np.allclose(old_x, x, rtol=0, atol=TIP_TOLERANCE)
            and np.allclose(old_y, y, rtol=0, atol=TIP_TOLERANCE)
        ):
            return  # unchanged: do not fight a drag in progress
        source.data = {"x": x, "y": y, "index": list(range(len(x)))}

    def _fit_ranges(self, q, keys, vals, m):
        addr_need = max(
            float(np.hypot(*q[:2])),
            float(np.max(np.hypot(keys[:, 0], keys[:, 1]), initial=0.0)),
        )
        ends = self.contributions.data
        ghost = self.ghost.data
        pay_need = max(
            float(np.max(np.abs(ghost["x1"]), initial=0.0)),  # the "before" arrow stays in view
            float(np.max(np.abs(ghost["y1"]), initial=0.0)),
            float(np.max(np.hypot(vals[:, 0], vals[:, 1]), initial=0.0)),
            float(np.max(np.abs(ends["x1"]), initial=0.0)),
            float(np.max(np.abs(ends["y1"]), initial=0.0)),
        )
        for fig, need in ((self.address_fig, addr_need), (self.payload_fig, pay_need)):
            lim = _limit(float(fig.x_range.end), need)
            if lim != fig.x_range.end:
                fig.x_range.update(start=-lim, end=lim)
                fig.y_range.update(start=-lim, end=lim)
        if self.ablated_note.visible:
            y = 0.78 * float(self.payload_fig.y_range.end)
            if self.ablated_note.y != y:
                self.ablated_note.y = y

    # -- dragging -----------------------------------------------------------------------------
    def _tips_changed(self, kind):
        def callback(attr, old, new):
            if self._writing:
                return
            self._pending[kind] = {k: list(v) for k, v in new.items()}
            if self._flush_scheduled:
                return
            doc = self.address_fig.document or self.payload_fig.document
            if doc is None:
                self._flush()
                return
            self._flush_scheduled = True
            doc.add_timeout_callback(self._flush, DRAG_FLUSH_MS)

        return callback

    def _flush(self):
        """Apply the latest dragged positions (at most one state change per kind per flush)."""
        self._flush_scheduled = False
        pending, self._pending = self._pending, {}
        if not self._draggable:
            return  # a trained head's planes are not settings
        state = self._state
        for kind, data in pending.items():
            if kind == "query":
                x, y = float(data["x"][0]), float(data["y"][0])
                if math.hypot(x, y) < 1e-9:
                    continue
                snap = state.snapshot
                current = math.atan2(float(snap.query[1]), float(snap.query[0]))
                delta = math.degrees(math.atan2(y, x) - current)
                state.angle = _wrap_angle(float(state.angle) + delta, state.param.angle.bounds)
                continue
            setter = state.set_key if kind == "key" else state.set_value
            drawn_x, drawn_y = self._drawn[kind]
            n = min(len(state.keys), len(drawn_x))
            for i, (x, y) in enumerate(zip(data["x"][:n], data["y"][:n], strict=True)):
                if not np.allclose([drawn_x[i], drawn_y[i]], [x, y], atol=1e-9):
                    setter(i, round(float(x), 4), round(float(y), 4))

    def set_captions(self, captions: dict | None) -> None:
        """Axis titles for a projected head ({"address": (x, y), "payload": (x, y)}), or None
        for the plain x and y of the hand-made planes."""
        for name, fig in (("address", self.address_fig), ("payload", self.payload_fig)):
            x, y = (captions or {}).get(name, ("x", "y"))
            if fig.xaxis[0].axis_label != x:
                fig.xaxis.axis_label = x
                fig.yaxis.axis_label = y

    def __panel__(self):
        return pn.Row(
            pn.pane.Bokeh(self.address_fig, width=FIG_WIDTH, height=FIG_HEIGHT),
            pn.pane.Bokeh(self.payload_fig, width=FIG_WIDTH, height=FIG_HEIGHT),
            css_classes=["lab-geometry"],
        )


def _query_handle_at(
    q: np.ndarray, key_tips: np.ndarray, px: float, lim: float = math.inf
) -> float:
    """Where on its ray the query's handle goes: the first place in QUERY_HANDLE_AT at least
    HANDLE_GAP_PX from every key's handle and inside the plane (else the one farthest from
    the keys' handles)."""
    if not np.any(q) or len(key_tips) == 0:
        return 1.0
    gap = HANDLE_GAP_PX * px
    best, best_dist = 1.0, -1.0
    for factor in QUERY_HANDLE_AT:
        if factor > 1 and float(np.max(np.abs(factor * q))) > lim - HANDLE_GAP_PX * px:
            continue  # would sit on (or past) the plane's edge
        dist = float(np.min(np.hypot(*(key_tips - factor * q).T)))
        if dist >= gap:
            return factor
        if dist > best_dist:
            best, best_dist = factor, dist
    return best


def _wrap_angle(angle: float, bounds) -> float:
    lo, hi = bounds if bounds else (-180.0, 180.0)
    lo = -180.0 if lo is None else lo
    hi = 180.0 if hi is None else hi
    span = hi - lo
    wrapped = (angle - lo) % span + lo if span > 0 else angle
    return round(wrapped, 2)
