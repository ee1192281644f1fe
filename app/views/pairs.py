"""The key/value pairs as a whole: swap two pairs' values, reverse the order of every pair.

These are the pair controls the lessons name ("Swap values", "Reverse the pairs"), a few cheap
widgets that sit in "More settings"; each pair's exact inputs are app/views/pair_rows.py's,
built only when their own section is opened.
"""

from __future__ import annotations

import panel as pn
import param

from app.i18n.translator import ENGLISH, Translator
from app.state.lab_state import LabState

from .notify import notify


def pair_labels(state, tr: Translator = ENGLISH) -> list[str]:
    """Each pair's label as the page shows it ("pair 3" where the lab has none)."""
    n = len(state.keys)
    labels = [str(lab) for lab in state.labels][:n]
    # TRANSLATORS: a key/value pair without a label of its own, numbered from 1.
    unnamed = tr.gettext("pair {number}")
    return labels + [unnamed.format(number=i + 1) for i in range(len(labels), n)]


def swapped_pair(old, new) -> tuple[int, int] | None:
    """(i, j) when `new` is `old` with exactly the values of pairs i and j exchanged."""
    if len(old) != len(new):
        return None
    changed = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if tuple(a) != tuple(b)]
    if len(changed) != 2:
        return None
    i, j = changed
    return (i, j) if tuple(old[i]) == tuple(new[j]) and tuple(old[j]) == tuple(new[i]) else None


class PairsEditor(pn.viewable.Viewer):
    state = param.ClassSelector(class_=LabState, constant=True, doc="the lab whose pairs it edits")

    def __init__(self, state, tr: Translator = ENGLISH, **params):
        super().__init__(state=state, **params)
        self.tr = tr
        _ = tr.gettext
        # TRANSLATORS: "Swap the value of [A] with the value of [B]": two menus, then a button.
        self.swap_a = pn.widgets.Select(label=_("Swap the value of"), width=105)
        self.swap_b = pn.widgets.Select(label=_("with the value of"), width=105)
        self.swap = pn.widgets.Button(
            label=_("Swap values"), color="primary", width=105, margin=(24, 5, 4, 5)
        )
        self.swap.on_click(self._do_swap)
        # Lesson 10's action: every pair (key, value, mask, label) in the opposite order.
        self.reverse = pn.widgets.Button(label=_("Reverse the pairs"), color="light", width=150)
        self.reverse.on_click(
            lambda _event: state.permute_pairs(list(range(len(state.keys)))[::-1])
        )
        self._values = [tuple(v) for v in state.values]  # to tell a swap from other changes
        self.refresh()

    # -- state -> widgets ---------------------------------------------------------------------
    @param.depends("state.keys", "state.labels", watch=True)
    def refresh(self):
        labels = pair_labels(self.state, self.tr)
        options = {lab: i for i, lab in enumerate(labels)}
        if self.swap_a.options != options:
            self.swap_a.options = options
            self.swap_b.options = options
            self.swap_a.value = 0
            self.swap_b.value = 1 if len(labels) > 1 else 0

    @param.depends("state.values", watch=True)
    def _follow_swap(self) -> None:
        """A swap made elsewhere ("Do it for me", a link, an import) shows in the menus: they
        name the two pairs whose values were exchanged, as if picked here."""
        swapped = swapped_pair(self._values, self.state.values)
        self._values = [tuple(v) for v in self.state.values]
        if swapped is not None and {self.swap_a.value, self.swap_b.value} != set(swapped):
            self.swap_a.value, self.swap_b.value = swapped

    # -- widgets -> state ---------------------------------------------------------------------
    def _do_swap(self, _event):
        a, b = self.swap_a.value, self.swap_b.value
        if a is None or b is None:
            return
        if a == b:
            notify("info", self.tr.gettext("Pick two different pairs to swap their values."))
            return
        self.state.swap_values(int(a), int(b))

    def __panel__(self):
        return pn.Column(
            pn.Row(self.swap_a, self.swap_b, self.swap),
            self.reverse,
            sizing_mode="stretch_width",
            css_classes=["lab-pairs"],
        )
