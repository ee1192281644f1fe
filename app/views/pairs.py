"""Exact editing of each key/value pair: numeric inputs, a mask toggle, and a value swap.

Dragging in the geometry plot is quick; these inputs are precise and reachable by keyboard.
Rows are made only when a scenario or an import has more pairs than any before it, and kept:
a lesson that moves between three and eight pairs hides or shows rows it already has rather
than building every widget again (new models for the page to take in: 0.50 s of 0.74 s for
four step openings under cProfile before; docs/performance.md, "A class").
"""

from __future__ import annotations

import panel as pn
import param

from app.patches.panel_events import respond_at_once
from app.state.lab_state import LabState

from .notify import notify

INPUT = {"step": 0.1, "width": 70, "margin": (0, 3)}


class PairRow:
    def __init__(self, editor, index: int):
        self.index = index
        self.kx = pn.widgets.FloatInput(label="key x", **INPUT)
        self.ky = pn.widgets.FloatInput(label="key y", **INPUT)
        self.vx = pn.widgets.FloatInput(label="value x", **INPUT)
        self.vy = pn.widgets.FloatInput(label="value y", **INPUT)
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


class PairsEditor(pn.viewable.Viewer):
    state = param.ClassSelector(class_=LabState, constant=True, doc="the lab whose pairs it edits")

    def __init__(self, state, **params):
        super().__init__(state=state, **params)
        self._busy = False
        self._made: list[PairRow] = []  # every row made so far; the first len(keys) are shown
        self._rows: list[PairRow] = []
        self._column = pn.Column(sizing_mode="stretch_width", margin=0)
        self.swap_a = pn.widgets.Select(label="Swap the value of", width=105)
        self.swap_b = pn.widgets.Select(label="with the value of", width=105)
        self.swap = pn.widgets.Button(
            label="Swap values", color="primary", width=105, margin=(24, 5, 4, 5)
        )
        self.swap.on_click(self._do_swap)
        # Lesson 10's action: every pair (key, value, mask, label) in the opposite order.
        self.reverse = pn.widgets.Button(label="Reverse the pairs", color="light", width=150)
        self.reverse.on_click(
            lambda _event: state.permute_pairs(list(range(len(state.keys)))[::-1])
        )
        self.refresh()

    # -- state -> widgets ---------------------------------------------------------------------
    @param.depends("state.keys", "state.values", "state.mask", "state.labels", watch=True)
    def refresh(self):
        state = self.state
        keys, values, mask = list(state.keys), list(state.values), list(state.mask)
        n = len(keys)
        if len(self._made) < n:
            self._made += [PairRow(self, i) for i in range(len(self._made), n)]
            self._column.objects = [row.layout for row in self._made]
        if len(self._rows) != n:
            self._rows = self._made[:n]
            for i, row in enumerate(self._made):
                row.layout.visible = i < n
        labels = [str(lab) for lab in state.labels][:n]
        labels += [f"pair {i + 1}" for i in range(len(labels), n)]
        self._busy = True
        try:
            for i, row in enumerate(self._rows):
                legal = bool(mask[i]) if i < len(mask) else True
                text = f"{labels[i]}: takes part" if legal else f"{labels[i]}: masked"
                if row.legal.label != text:
                    row.legal.label = text
                row.kx.value, row.ky.value = float(keys[i][0]), float(keys[i][1])
                row.vx.value, row.vy.value = float(values[i][0]), float(values[i][1])
                row.legal.value = legal
            options = {lab: i for i, lab in enumerate(labels)}
            if self.swap_a.options != options:
                self.swap_a.options = options
                self.swap_b.options = options
                self.swap_a.value = 0
                self.swap_b.value = 1 if n > 1 else 0
        finally:
            self._busy = False

    # -- widgets -> state ---------------------------------------------------------------------
    def edit_key(self, i, row):
        if not self._busy and None not in (row.kx.value, row.ky.value):
            self.state.set_key(i, float(row.kx.value), float(row.ky.value))

    def edit_value(self, i, row):
        if not self._busy and None not in (row.vx.value, row.vy.value):
            self.state.set_value(i, float(row.vx.value), float(row.vy.value))

    def edit_mask(self, i, legal):
        if self._busy:
            return
        mask = list(self.state.mask)
        if i < len(mask) and bool(mask[i]) != bool(legal):
            self.state.toggle_mask(i)

    def _do_swap(self, _event):
        a, b = self.swap_a.value, self.swap_b.value
        if a is None or b is None:
            return
        if a == b:
            notify("info", "Pick two different pairs to swap their values.")
            return
        self.state.swap_values(int(a), int(b))

    def __panel__(self):
        return pn.Column(
            self._column,
            pn.Row(self.swap_a, self.swap_b, self.swap),
            self.reverse,
            sizing_mode="stretch_width",
            css_classes=["lab-pairs"],
        )
