"""An accessible name for a widget group that Bokeh draws without one (a RadioGroup's buttons
have labels, the group has none): carried in the Bokeh model's `tags`, where the page's
control_names.js (app/page/a11y.py ControlNames) reads it and names the group for screen
readers."""

from __future__ import annotations

TAG_KEY = "lab_group_name"


def name_group(widget, name: str) -> None:
    """Name `widget`'s group of choices after `name` (a lesson step's question)."""
    tags = [t for t in widget.tags if not (isinstance(t, dict) and TAG_KEY in t)]
    widget.tags = [*tags, {TAG_KEY: name}]
