"""The process-wide registry of Panel's JS callbacks, emptied for a page that closed.

Panel 1.9 files each editable slider's JS callback (`Callback`, from `jscallback`) in a
process-wide registry (`panel.links.Callback.registry`, a weak-keyed dict) keyed by the
slider's text box, and the callback leads back to that box, so the entry never expires: every
closed page stayed in memory (about 2 MB each). Nothing public removes an entry.
"""

from __future__ import annotations


def forget_js_callbacks(widget) -> None:
    """Drop the registered JS callbacks of `widget` and of every part of it (a composite)."""
    from panel.links import Callback

    for part in widget.select():
        Callback.registry.pop(part, None)
