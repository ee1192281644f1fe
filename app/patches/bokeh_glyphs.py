"""A glyph class's positional argument names, for a renderer built without the glyph methods.

`app.views.style.add_glyph` builds a renderer from a glyph class directly: Bokeh's glyph methods
(`fig.scatter(...)` and friends) also build a non-selection and a muted copy of every glyph,
which a lab page never shows, and that costs about three times the renderer alone. To take the
same positional arguments as those methods, it needs the names they map them to, which Bokeh
keeps only in the glyph class's private `_args` (its `bokeh.plotting._decorators` read it).
"""

from __future__ import annotations


def positional_args(glyph_class) -> tuple[str, ...]:
    """The property names a glyph method takes positionally, in order (Scatter: x, y, ...)."""
    return tuple(glyph_class._args)
