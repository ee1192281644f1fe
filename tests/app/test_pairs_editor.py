"""Each pair's inputs keep the rows they have made: a scenario with fewer pairs hides the extra
rows, one with more shows them again, and the shown rows always read the lab's pairs; the swap
controls follow the pairs' labels."""

from __future__ import annotations

import numpy as np

from app.state.lab_state import LabState
from app.views.pair_rows import PairRows
from app.views.pairs import PairsEditor


def _shown(editor: PairRows) -> list:
    return [row for row in editor._made if row.layout.visible]


def _read(editor: PairRows) -> tuple[np.ndarray, np.ndarray, list[bool]]:
    rows = _shown(editor)
    keys = np.array([[row.kx.value, row.ky.value] for row in rows])
    values = np.array([[row.vx.value, row.vy.value] for row in rows])
    return keys, values, [row.legal.value for row in rows]


def test_rows_are_kept_across_scenarios_and_read_the_pairs_shown():
    state = LabState()
    editor, swap = PairRows(state), PairsEditor(state)
    state.load_scenario("bank")  # five pairs
    made = list(editor._made)
    assert len(made) == 5
    for name, n in (("basic", 3), ("sharp", 4), ("bank", 5), ("contest", 3)):
        state.load_scenario(name)
        assert editor._made == made  # no row built again
        assert len(_shown(editor)) == len(editor._rows) == n == len(state.keys)
        keys, values, legal = _read(editor)
        np.testing.assert_array_equal(keys, np.asarray(state.keys, dtype=float))
        np.testing.assert_array_equal(values, np.asarray(state.values, dtype=float))
        assert legal == [bool(m) for m in state.mask]
        assert swap.swap_a.options == {str(label): i for i, label in enumerate(state.labels)}


def test_a_row_shown_again_edits_its_own_pair():
    state = LabState()
    editor = PairRows(state)
    state.load_scenario("bank")
    state.load_scenario("basic")
    state.load_scenario("bank")  # rows 4 and 5 hidden, then shown again
    row = editor._rows[4]
    row.kx.value = 0.25
    assert float(state.keys[4][0]) == 0.25
    row.legal.value = False
    assert not bool(state.mask[4])


def test_more_pairs_than_ever_before_makes_only_the_new_rows():
    state = LabState()
    editor = PairRows(state)  # the default scenario: three pairs
    first = list(editor._made)
    assert len(first) == 3
    state.load_scenario("bank")
    assert editor._made[:3] == first and len(editor._made) == 5
    assert [row.index for row in editor._made] == list(range(5))
