"""The two vector planes: address space (query and keys) and payload space (values, the
contributions w_i·v_i laid head to tail, and the output).

Keys and values are drawn in separate planes on purpose: the key decides the route, the value is
what travels along it. Arrow tips of the labelled pairs (and the query) can be dragged.

`GeometryView` holds the planes' sources and pushes each snapshot into them. Its parts, one job
each: the figures (app/views/planes.py), the ranges and screen scale (plane_fit.py), the labels'
placement (label_layout.py), the drag handles' moves into the state (tip_drag.py) and what the
browser needs to preview a drag (preview_data.py).
"""

from __future__ import annotations

import math

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, Selection

from app.i18n.translator import ENGLISH, Translator
from app.state.lab_state import LabState

from . import plane_fit
from .covered import blank
from .label_layout import isolated, place_labels, shortener
from .planes import (
    ABLATED_TEXT,
    ADDRESS_FONT_PX,
    FIG_HEIGHT,
    FIG_WIDTH,
    PATCHED_TEXT,
    PAYLOAD_FONT_PX,
    address_plane,
    head_angle,
    payload_plane,
    proxy_source,
)
from .preview_data import PREVIEW_ROWS, preview_rows, preview_settings
from .style import ROLE_COLOURS, assign, canvas_words, f32
from .tip_drag import TipDrag

# Arrowheads are drawn only while the picture stays readable.
MAX_HEADS = 32
ABLATED_ALPHA = 0.25  # an ablated head's contributions, faded


class GeometryView(pn.viewable.Viewer):
    """Address and payload planes, built once per session and updated in place."""

    state = param.ClassSelector(class_=LabState, constant=True, doc="the lab its drags set")

    def __init__(self, state, tr: Translator = ENGLISH, **params):
        super().__init__(state=state, **params)
        self.tr = tr
        self._n_pairs = 0
        # No tool selects from these sources (only from the drag handles'), so they share one
        # empty selection: one model per page instead of one each.
        self._unselected = Selection()
        quiet = {"selected": self._unselected}
        self.geometry = ColumnDataSource(name="geometry", data=_empty_geometry(), **quiet)
        self.contributions = ColumnDataSource(name="contributions", data=_empty_contrib(), **quiet)
        self.distractors = ColumnDataSource(
            name="distractors",
            data={c: f32([]) for c in ("kx", "ky", "vx", "vy", "weight")},
            **quiet,
        )
        self.key_tips = ColumnDataSource(name="key_tips", data={"x": [], "y": [], "index": []})
        self.value_tips = ColumnDataSource(name="value_tips", data={"x": [], "y": [], "index": []})
        self.query_tip = ColumnDataSource(name="query_tip", data={"x": [0.0], "y": [0.0]})
        # The output "before" an action, drawn faded and dashed (empty when there is none).
        self.ghost = ColumnDataSource(name="ghost", data=_ghost_data(None), **quiet)
        # What the browser needs to preview a drag exactly (app/views/preview_data.py).
        self.preview = ColumnDataSource(
            name="preview", data={c: np.zeros(0) for c in PREVIEW_ROWS}, **quiet
        )
        self.preview_params = ColumnDataSource(
            name="preview_params", data={"enabled": [0.0]}, **quiet
        )
        self._version = 0
        self._query_handle = 1.0

        proxies = proxy_source(self._unselected)  # the legends' proxies, both planes
        address = address_plane(
            self.geometry, self.distractors, self.key_tips, self.query_tip, proxies, tr
        )
        payload = payload_plane(
            self.geometry,
            self.contributions,
            self.distractors,
            self.value_tips,
            self.ghost,
            proxies,
            tr,
        )
        self.address_fig, self.address_fit = address.fig, address.fit
        self.payload_fig, self.payload_fit = payload.fig, payload.fit
        self._distractor_keys, self._distractor_values = address.distractors, payload.distractors
        self.ablated_note = payload.note
        # Labels are placed in screen pixels: once the browser reports a plane's real size
        # (it follows the window), place them again for that size.
        self._label_args: tuple | None = None
        for fig in (self.address_fig, self.payload_fig):
            # Both sides: the legend under the frame takes a row more or less as it refits.
            for side in ("inner_width", "inner_height"):
                fig.on_change(side, self._replace_labels)
        self._drag = TipDrag(state, (self.address_fig, self.payload_fig))
        for src, kind in (
            (self.key_tips, "key"),
            (self.value_tips, "value"),
            (self.query_tip, "query"),
        ):
            self._drag.watch(src, kind)

    def set_ghost(self, point) -> None:
        """Draw a faded dashed "before" output arrow at point (x, y); None removes it."""
        if point is not None and not all(math.isfinite(float(c)) for c in point[:2]):
            point = None
        assign(self.ghost, _ghost_data(point))
        if point is not None:  # grow the payload plane if the "before" arrow lies outside it
            need = max(abs(float(point[0])), abs(float(point[1])))
            plane_fit.fit_square(self.payload_fig, need, grow_only=True)

    def update(self, snap, n_pairs: int, *, draggable: bool = True, route: bool = True) -> None:
        """Push one snapshot into the sources; the caller holds the document.

        `draggable=False` (a trained head: its planes are projections, not settings) draws the
        arrows without drag handles and turns the browser preview off. `route=False` (a lesson
        step holds the route back, app/lessons/reveals.py) leaves out what shows the route: the
        w·v arrows and the output, the distractors' weights; the query, keys and values stay, to
        act on. A drag's preview in the browser writes only into sources as long as its route
        (app/js/preview.js), so it leaves the emptied ones empty.
        """
        self._drag.draggable = draggable
        m = max(0, min(n_pairs, len(snap.weights)))
        self._n_pairs = m
        q = np.asarray(snap.query, dtype=np.float64)
        keys = np.asarray(snap.keys, dtype=np.float64)
        vals = np.asarray(snap.values, dtype=np.float64)
        rows, vec, texts = _arrow_rows(snap, m, q, keys, vals, self._masked_mark())
        self._write_route_and_tips(snap, m, keys, vals, draggable=draggable, route=route)
        self._show_distractors(len(keys) > m)
        self._fit_ranges(q, keys, vals)
        screen = plane_fit.Screen(self.address_fig)
        self._query_handle = plane_fit.query_handle_at(
            q[:2],
            keys[:m, :2],
            (screen.px, screen.py),
            float(self.address_fig.x_range.end),
        )
        # Every column of the arrows together, with equal lengths (only changed ones go).
        # Labels are placed heaviest first (the key a head looks at, the value it passes on),
        # so a crowded plane drops the least important ones.
        weights = np.asarray(snap.weights, dtype=np.float64)[:m]
        norms = np.asarray(snap.contribution_norms, dtype=np.float64)[:m]
        # (A held route places them in order, not by weight: the order would tell it.)
        priority = np.concatenate([[np.inf], weights, norms]) if route else None
        out = np.asarray(snap.output, dtype=np.float64)[:2] if route else None
        assign(self.geometry, rows | self._label_layout(vec, texts, m, priority, out))
        # Off the plane when nothing may be dragged (the handle's renderer stays in place).
        handle = self._query_handle * q[:2] if draggable else np.array([np.nan, np.nan])
        with self._drag.writing():
            if not np.allclose(
                [self.query_tip.data["x"][0], self.query_tip.data["y"][0]],
                handle,
                atol=1e-6,
                equal_nan=True,
            ):
                assign(self.query_tip, {"x": [float(handle[0])], "y": [float(handle[1])]})
        assign(self.preview, preview_rows(snap, m, self.preview.data))
        self._version += 1
        settings = preview_settings(
            snap,
            self.state,
            m,
            version=self._version,
            query_handle=self._query_handle,
            draggable=draggable,
            synced=self._drag.synced,
        )
        # A whole new data (not a column patch), so the browser's change hook always runs.
        self.preview_params.data = {k: [v] for k, v in settings.items()}

    def _write_route_and_tips(self, snap, m: int, keys, vals, *, draggable: bool, route: bool):
        """The w·v arrows and the output (or none, while the route is held), the distractors,
        and the drag handles of the first `m` keys and values."""
        with self._drag.writing():
            if route:
                self._update_contributions(snap, list(snap.labels), np.asarray(snap.legal, bool))
            else:
                blank(self.contributions)
            assign(
                self.distractors,
                {
                    "kx": f32(keys[m:, 0]),
                    "ky": f32(keys[m:, 1]),
                    "vx": f32(vals[m:, 0]),
                    "vy": f32(vals[m:, 1]),
                    "weight": f32(snap.weights[m:] if route else np.zeros(len(keys) - m)),
                },
            )
            tips = m if draggable else 0
            self._drag.set_tips("key", self.key_tips, keys[:tips])
            self._drag.set_tips("value", self.value_tips, vals[:tips])

    def _masked_mark(self) -> str:
        _ = self.tr.gettext
        # TRANSLATORS: after a masked key's label on the planes ("B (masked)"): keep the space
        # before it and the brackets.
        return _(" (masked)")

    def conceal(self) -> None:
        """Both planes emptied, instead of drawn (app/views/covered.py): a trained head's
        projections show where it looks (its keys along q are its scores)."""
        for source in (self.geometry, self.contributions, self.distractors, self.preview):
            blank(source)
        with self._drag.writing():  # no drag handle either (the hand-made lab's, drawn before)
            self._drag.set_tips("key", self.key_tips, np.zeros((0, 2)))
            self._drag.set_tips("value", self.value_tips, np.zeros((0, 2)))
            if not math.isnan(self.query_tip.data["x"][0]):
                assign(self.query_tip, {"x": [math.nan], "y": [math.nan]})
        self._label_args = None  # a resize places no label on a held plane
        self.preview_params.data = {**self.preview_params.data, "enabled": [0.0]}

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
        planes = (
            (self.address_fig, list(range(0, 1 + m)), ADDRESS_FONT_PX),
            (self.payload_fig, list(range(1 + m, 1 + 2 * m)), PAYLOAD_FONT_PX),
        )
        for fig, rows, font in planes:
            screen = plane_fit.Screen(fig)
            tips = [screen.point(vec[i, 0], vec[i, 1]) for i in rows]
            # Every arrow of the plane starts at the origin; the payload plane adds the output.
            origin = screen.point(0.0, 0.0)
            segments = [(*origin, tx, ty) for tx, ty in tips]
            if fig is self.payload_fig and output is not None:
                segments.append((*origin, *screen.point(output[0], output[1])))
            avoid = []  # the legend is under the frame (planes.py), not in it
            if fig is self.payload_fig and self.ablated_note.visible:
                first_line = str(self.ablated_note.text).split("\n")[0]
                avoid.append(screen.note_box(float(self.ablated_note.y), first_line))
            if fig is self.address_fig and self._query_handle != 1.0:
                # The query's handle, when it sits off the query's tip (query_handle_at).
                h = self._query_handle
                avoid.append(screen.handle_box(h * vec[0, 0], h * vec[0, 1]))
            order = sorted(range(len(rows)), key=lambda j: -float(priority[rows[j]]))
            placed = place_labels(
                tips,
                [texts[i] for i in rows],
                font,
                screen.frame,
                avoid,
                order=order,
                segments=segments,
                short=shortener(self._masked_mark()),
            )
            for i, (ox, oy, tag) in zip(rows, placed, strict=True):
                # A right-to-left token in an isolate: the canvas draws it in its own order.
                dx[i], dy[i], tags[i] = ox, oy, isolated(tag)
        return {"label_dx": f32(dx), "label_dy": f32(dy), "tag": tags}

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
        for fit in (self.address_fit, self.payload_fit):
            fit.refit()  # the legend's columns for the entries it shows now

    def _update_contributions(self, snap, labels, legal):
        ablated = bool(getattr(snap, "ablated", False))
        patched = bool(getattr(snap, "patched", ""))
        # One note for both interventions that cut the route from the output (the note says
        # which): an ablated head passes nothing on, a patched one another sentence's output.
        note = canvas_words(self.tr)(ABLATED_TEXT if ablated or not patched else PATCHED_TEXT)
        if self.ablated_note.text != note:
            self.ablated_note.text = note
        if self.ablated_note.visible != (ablated or patched):
            self.ablated_note.visible = ablated or patched
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
                "angle": f32(head_angle(x1 - x0, y1 - y0)),
                "size": f32(np.append(np.full(n, head), 16.0)),
                # An ablated head's contributions are faded: computed, never passed on.
                "alpha": f32(
                    np.append(np.where(legal, 0.95, 0.3) * (ABLATED_ALPHA if ablated else 1), 1.0)
                ),
                "kind": ["contribution"] * n + ["output"],
                "label": [f"w·v {lab}" for lab in labels] + [self._output_label(ablated, patched)],
            },
        )

    def _output_label(self, ablated: bool, patched: bool) -> str:
        """The output arrow's name in its hover."""
        _ = canvas_words(self.tr)
        if ablated:
            return _("output (zeroed: the head is ablated)")
        return _("output (patched in from the other sentence)") if patched else _("output")

    def _fit_ranges(self, q, keys, vals):
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
        plane_fit.fit_square(self.address_fig, addr_need)
        plane_fit.fit_square(self.payload_fig, pay_need)
        if self.ablated_note.visible:
            y = 0.78 * float(self.payload_fig.y_range.end)
            if self.ablated_note.y != y:
                self.ablated_note.y = y

    def _flush(self) -> None:
        """Apply the latest dragged positions now (app/views/tip_drag.py)."""
        self._drag.flush()

    def set_captions(self, captions: dict | None) -> None:
        """Axis titles for a projected head ({"address": (x variants, y variants), "payload":
        ...}, each longest first: the longest that fits its frame is shown), or None for the
        plain x and y of the hand-made planes."""
        for name, fit in (("address", self.address_fit), ("payload", self.payload_fit)):
            x, y = (captions or {}).get(name, (("x",), ("y",)))
            fit.x_label(*x)
            fit.y_label(*y)

    def __panel__(self):
        return pn.Row(
            pn.pane.Bokeh(self.address_fig, width=FIG_WIDTH, height=FIG_HEIGHT),
            pn.pane.Bokeh(self.payload_fig, width=FIG_WIDTH, height=FIG_HEIGHT),
            css_classes=["lab-geometry"],
        )


def _empty_geometry() -> dict:
    cols = {
        c: f32([])
        for c in ("x0", "y0", "x1", "y1", "angle", "size", "alpha", "label_dx", "label_dy")
    }
    cols.update(kind=[], label=[], colour=[], index=np.zeros(0, dtype=np.int32))
    return cols


def _empty_contrib() -> dict:
    cols = {
        c: f32([]) for c in ("x0", "y0", "x1", "y1", "cx", "cy", "norm", "weight", "angle", "size")
    }
    cols.update(kind=[], label=[], alpha=f32([]))
    return cols


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
        "angle": f32(head_angle(np.array([x]), np.array([y]))),
        "size": f32([14.0 if math.hypot(x, y) > 0 else 0.0]),
        "alpha": f32([0.35]),
    }


def _arrow_rows(
    snap, m: int, q, keys, vals, masked_mark: str = " (masked)"
) -> tuple[dict, np.ndarray, list[str]]:
    """The arrows' rows (the query, then the first `m` keys and values), their tips and their
    label texts. The rows go out once, with their labels (placed once the ranges and the query's
    handle are known): a new row count followed by a patch of some columns in the same message
    let the browser draw the labels' visuals from the old row count (RangeError in
    set_visuals)."""
    legal = np.asarray(snap.legal, dtype=bool)
    labels = list(snap.labels)
    pair_labels = [lab if legal[i] else lab + masked_mark for i, lab in enumerate(labels[:m])]
    vec = np.vstack([q[None, :2], keys[:m, :2], vals[:m, :2]])
    pair_alpha = np.where(legal[:m], 1.0, 0.35)
    kind = ["query"] + ["key"] * m + ["value"] * m
    texts = ["q", *pair_labels, *pair_labels]
    rows = {
        "x0": f32(np.zeros(len(vec))),
        "y0": f32(np.zeros(len(vec))),
        "x1": f32(vec[:, 0]),
        "y1": f32(vec[:, 1]),
        "angle": f32(head_angle(vec[:, 0], vec[:, 1])),
        "size": f32(np.full(len(vec), 16.0)),
        "alpha": f32(np.concatenate([[1.0], pair_alpha, pair_alpha])),
        "kind": kind,
        "label": texts,
        "colour": [ROLE_COLOURS[k] for k in kind],
        "index": np.array([-1, *range(m), *range(m)], dtype=np.int32),
    }
    return rows, vec, texts
