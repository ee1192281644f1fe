"""Exact editing of each key/value pair: four numeric inputs and a mask toggle per pair.

Dragging in the geometry plot is quick; these inputs are precise and reachable by keyboard.
They are the page's costliest widgets (five per pair), so the page builds them only when a
student opens their section (app/page/later_parts.py): no lesson step names them, and a class
following its teacher never pays for them (docs/performance.md, "A class").
Rows are made only when a scenario or an import has more pairs than any before it, and kept:
a lesson that moves between three and eight pairs hides or shows rows it already has rather
than building every widget again.
"""

from __future__ import annotations

import panel as pn
import param

from app.i18n.markers import N_
from app.i18n.translator import ENGLISH, Translator
from app.patches.panel_events import respond_at_once
from app.state.lab_state import LabState

from .pairs import pair_labels
from .two_way import Echo

INPUT = {"step": 0.1, "width": 70, "margin": (0, 3)}
# TRANSLATORS: the four number boxes of one key/value pair (a screen reader hears "A key x").
FIELD_LABELS = (N_("key x"), N_("key y"), N_("value x"), N_("value y"))


class PairRow:
    def __init__(self, editor, index: int, tr: Translator = ENGLISH):
        self.index = index
        self.kx, self.ky, self.vx, self.vy = (
            pn.widgets.FloatInput(label=tr.gettext(label), **INPUT) for label in FIELD_LABELS
        )
        # The checkbox carries the pair's label: "[x] A" reads as "key A takes part".
        self.legal = pn.widgets.Checkbox(
            label="", value=True, margin=(8, 4, 2, 6), css_classes=["lab-pair-label"]
        )
        for w in (self.kx, self.ky):
            w.param.watch(lambda e: editor.edit_key(self.index, self), "value")
        for w in (self.vx, self.vy):
            w.param.watch(lambda e: editor.edit_value(self.index, self), "value")
        self.legal.param.watch(lambda e: editor.edit_mask(self.index, e.new), "value")
        respond_at_once(self.kx, self.ky, self.vx, self.vy, self.legal)
        self.layout = pn.Column(
            self.legal,
            pn.Row(self.kx, self.ky, self.vx, self.vy, margin=0),
            margin=(0, 0, 6, 0),
            # app/page/a11y.py names each box after this row's pair ("A key x").
            css_classes=["lab-pair"],
        )


class PairRows(pn.viewable.Viewer):
    state = param.ClassSelector(class_=LabState, constant=True, doc="the lab whose pairs it edits")

    def __init__(self, state, tr: Translator = ENGLISH, **params):
        super().__init__(state=state, **params)
        self.tr = tr
        self._echo = Echo()  # while refresh writes the rows, their reports are its echo
        self._made: list[PairRow] = []  # every row made so far; the first len(keys) are shown
        self._rows: list[PairRow] = []
        self._column = pn.Column(sizing_mode="stretch_width", margin=0, css_classes=["lab-pairs"])
        self.refresh()

    # -- state -> widgets ---------------------------------------------------------------------
    @param.depends("state.keys", "state.values", "state.mask", "state.labels", watch=True)
    def refresh(self):
        state = self.state
        keys, values, mask = list(state.keys), list(state.values), list(state.mask)
        n = len(keys)
        if len(self._made) < n:
            self._made += [PairRow(self, i, self.tr) for i in range(len(self._made), n)]
            self._column.objects = [row.layout for row in self._made]
        if len(self._rows) != n:
            self._rows = self._made[:n]
            for i, row in enumerate(self._made):
                row.layout.visible = i < n
        labels, _ = pair_labels(state, self.tr), self.tr.gettext
        # TRANSLATORS: a pair's checkbox; keep the ":" (the page names the pair's boxes after
        # what comes before it).
        takes_part, masked = _("{label}: takes part"), _("{label}: masked")
        with self._echo.writing():
            for i, row in enumerate(self._rows):
                legal = bool(mask[i]) if i < len(mask) else True
                text = (takes_part if legal else masked).format(label=labels[i])
                if row.legal.label != text:
                    row.legal.label = text
                row.kx.value, row.ky.value = float(keys[i][0]), float(keys[i][1])
                row.vx.value, row.vy.value = float(values[i][0]), float(values[i][1])
                row.legal.value = legal

    # -- widgets -> state ---------------------------------------------------------------------
    def edit_key(self, i, row):
        if not self._echo.active and None not in (row.kx.value, row.ky.value):
            self.state.set_key(i, float(row.kx.value), float(row.ky.value))

    def edit_value(self, i, row):
        if not self._echo.active and None not in (row.vx.value, row.vy.value):
            self.state.set_value(i, float(row.vx.value), float(row.vy.value))

    def edit_mask(self, i, legal):
        if self._echo.active:
            return
        mask = list(self.state.mask)
        if i < len(mask) and bool(mask[i]) != bool(legal):
            self.state.toggle_mask(i)

    def __panel__(self):
        return self._column
