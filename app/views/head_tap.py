"""A tap on a head's cell or dot opens that head: the maps, the estimate grid and the receipt."""

from __future__ import annotations


def open_head_on_tap(source, model_state) -> None:
    """When a glyph of `source` (with `layer` and `head` columns) is tapped, open that head in
    `model_state` and clear the selection, so the same head can be tapped again."""

    def open_head(_attr, _old, new) -> None:
        if not new:
            return
        i = new[0]
        layer, head = int(source.data["layer"][i]), int(source.data["head"][i])
        source.selected.indices = []
        model_state.request(layer=layer, head=head)

    source.selected.on_change("indices", open_head)
