"""One walk of a page's model graph for a batch of changes, and none for a batch that needs none.

Bokeh keeps the set of a document's models by walking the whole graph from its roots
(`DocumentModelManager.recompute`, every model of the page: about 50 ms of a lab page on the
2-core machine). It walks after each change of a property whose old or new value holds models
(`Model.trigger` calls `doc.models.invalidate()`). `doc.models.freeze()` defers those walks to
one at the end, but walks at the end whether or not anything asked for one, so wrapping a
lesson step in it added a walk to every step that swaps no model.

`walk_once(doc)` is a freeze that walks at the end only if something asked for a walk meanwhile:
for the batch it shadows, on that document's model manager only, `invalidate` with a flag and
`recompute` with Bokeh's own that clears it (a freeze opened inside walks at its end as usual,
and what was asked before it is then done). A lesson step needs this: Panel re-renders a
Markdown pane with its design's isolated stylesheets and the template applies them without
(`Design.params` against `Design._reapply(isolated=False)`), so after each layout change the
step's text panes swap their stylesheet models once, and that was a walk per pane.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def walk_once(doc) -> Iterator[None]:
    """Inside: no walk of `doc`'s model graph; at the end: one, if a change asked for it."""
    models = getattr(doc, "models", None)
    if models is None or "invalidate" in vars(models):
        yield  # no document, or a walk_once already open on it: the outer one walks
        return
    asked = False
    recompute = models.recompute  # Bokeh's own, bound

    def ask() -> None:
        nonlocal asked
        asked = True

    def walk() -> None:
        nonlocal asked
        asked = False
        recompute()

    models.invalidate, models.recompute = ask, walk
    try:
        yield
    finally:
        del models.invalidate, models.recompute
        if asked:
            models.invalidate()  # Bokeh's own: walks now, or at the end of a freeze still open
