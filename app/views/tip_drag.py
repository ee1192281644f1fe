"""Dragged arrow tips into the lab's state: the server's side of a drag on the planes.

Bokeh reports a handle's new position as a change of its source's data. `TipDrag` gathers the
changes for DRAG_FLUSH_MS and then applies the latest of each kind once: a key or a value is
set at its position rounded to 4 decimals, a query handle turns the query (a new angle,
wrapped into the angle's bounds). The browser's preview (app/js/pipeline.js) mirrors this.
"""

from __future__ import annotations

import math

import numpy as np

from .two_way import Echo

DRAG_FLUSH_MS = 50
# A dragged tip reaches the state rounded to 4 decimals: a tip within this of the drawn point
# is the same point, and is not written back (that would pull a handle under the pointer).
TIP_TOLERANCE = 1e-4


class TipDrag:
    """The drag handles' sources of one pair of planes, and what their moves change."""

    def __init__(self, state, figures):
        self._state = state
        self._figures = figures
        self.draggable = True  # False: a trained head, whose planes are not settings
        self._drawing = Echo()  # the server writes the sources: their changes are not drags
        self._pending: dict[str, dict] = {}
        # The page numbers the tips it sends (app/js/preview.js). `synced`: the last one the
        # state has taken (or dropped for a later change), drawn into the preview's settings;
        # the page keeps its preview over any snapshot drawn before its last tip was.
        self._received = 0
        self.synced = 0
        self._scheduled = False
        self._flushing = Echo()  # a flush sets the state: that change is the drag's own
        state.param.watch(self._set_elsewhere, ["keys", "values", "angle"])
        # Tip positions as last drawn: a drag changes only the rows that moved away from these
        # (with "normalise" on, drawn keys differ from the stored ones, and must not be written).
        self._drawn: dict[str, tuple[list[float], list[float]]] = {
            "key": ([], []),
            "value": ([], []),
        }

    def watch(self, source, kind: str) -> None:
        """Take the moves of the handles in `source` ("key", "value" or "query")."""
        source.on_change("data", self._changed(kind))

    def writing(self):
        """The server writes the sources: their changes are not drags."""
        return self._drawing.writing()

    def set_tips(self, kind: str, source, points: np.ndarray) -> None:
        """Draw the handles of `kind` at `points`, unless they are there already."""
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

    def _changed(self, kind):
        def callback(attr, old, new):
            if self._drawing.active:
                return
            self._received = max([self._received, *(int(n) for n in new.get("sync", ()))])
            self._pending[kind] = {k: list(v) for k, v in new.items()}
            if self._scheduled:
                return
            doc = next((fig.document for fig in self._figures if fig.document), None)
            if doc is None:
                self.flush()
                return
            self._scheduled = True
            doc.add_timeout_callback(self.flush, DRAG_FLUSH_MS)

        return callback

    def _set_elsewhere(self, *events) -> None:
        """A reset, a scenario, a swap or a typed value set what a waiting drag would set: the
        drag came first, and applied after it on its flush it would undo that change."""
        if not self._flushing.active:
            self._pending.clear()
            self.synced = self._received  # answered by this change's drawing

    def flush(self) -> None:
        """Apply the latest dragged positions (at most one state change per kind per flush)."""
        self._scheduled = False
        pending, self._pending = self._pending, {}
        self.synced = self._received  # taken now: the drawing this flush causes says so
        if not self.draggable:
            return  # a trained head's planes are not settings
        with self._flushing.writing():
            self._apply(pending)

    def _apply(self, pending: dict[str, dict]) -> None:
        state = self._state
        for kind, data in pending.items():
            if kind == "query":
                x, y = float(data["x"][0]), float(data["y"][0])
                if math.hypot(x, y) < 1e-9:
                    continue
                snap = state.snapshot
                current = math.atan2(float(snap.query[1]), float(snap.query[0]))
                delta = math.degrees(math.atan2(y, x) - current)
                state.angle = wrap_angle(float(state.angle) + delta, state.param.angle.bounds)
                continue
            setter = state.set_key if kind == "key" else state.set_value
            drawn_x, drawn_y = self._drawn[kind]
            n = min(len(state.keys), len(drawn_x))
            for i, (x, y) in enumerate(zip(data["x"][:n], data["y"][:n], strict=True)):
                if not np.allclose([drawn_x[i], drawn_y[i]], [x, y], atol=1e-9):
                    setter(i, round(float(x), 4), round(float(y), 4))


def wrap_angle(angle: float, bounds) -> float:
    """`angle` (degrees) wrapped into `bounds` (default -180..180), to 0.01 degree."""
    lo, hi = bounds if bounds else (-180.0, 180.0)
    lo = -180.0 if lo is None else lo
    hi = 180.0 if hi is None else hi
    span = hi - lo
    wrapped = (angle - lo) % span + lo if span > 0 else angle
    return round(wrapped, 2)
