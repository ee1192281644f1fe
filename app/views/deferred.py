"""A part of the page that is built the first time a student looks at it.

Every Bokeh model in a page is held by the server for as long as the page is open, and each one
costs CPU to build and send. Views below the first screen wait as a light placeholder; when it
scrolls into sight (or its button is pressed, for a keyboard or a screen reader), the browser
tells the server, which builds the views once and puts them in its place.
"""

from __future__ import annotations

import panel as pn
import param
from panel.reactive import ReactiveHTML

# Fires once, when a fifth of the placeholder is on screen: the first screen's grid ends just
# above it, and a sliver showing at the bottom edge is not a student looking at it.
_OBSERVE = """
if (data.seen) return;
const observer = new IntersectionObserver(entries => {
  if (entries.some(e => e.isIntersecting)) { observer.disconnect(); data.seen = true; }
}, {threshold: 0.2});
observer.observe(box);
state.observer = observer;
"""


class ShownSignal(ReactiveHTML):
    """The placeholder: says what will appear here, and reports when it is first seen."""

    seen = param.Boolean(default=False, doc="Set by the browser the first time it is on screen")
    title = param.String(default="")
    note = param.String(default="")

    _template = (
        '<section id="box" class="lab-deferred" aria-label="${title}">'
        '<p class="lab-deferred-title">${title}</p>'
        '<p class="lab-deferred-note">${note}</p>'
        '<button id="show" type="button" onclick="${script(\'show\')}">Draw them now</button>'
        "</section>"
    )
    _scripts = {  # noqa: RUF012 - Panel reads this class attribute
        "render": _OBSERVE,
        "show": "data.seen = true;",
        "remove": "if (state.observer) state.observer.disconnect();",
    }
    _stylesheets = [  # noqa: RUF012
        ".lab-deferred { box-sizing: border-box; height: 100%; padding: 18px 20px;"
        " border: 2px dashed #c8d3dc; border-radius: 8px; background: #f7f9fb;"
        " font-size: var(--lab-text, 16px); color: #23323d; }"
        ".lab-deferred-title { font-weight: 700; margin: 0 0 6px; }"
        ".lab-deferred-note { margin: 0 0 12px; }"
        ".lab-deferred button { font: inherit; padding: 6px 14px; border-radius: 6px;"
        " border: 2px solid #0b3d5c; background: #fff; color: #0b3d5c; cursor: pointer; }"
        ":focus-visible { outline: 3px solid #ffd166 !important; outline-offset: 2px; }"
    ]


class Deferred(pn.viewable.Viewer):
    """Holds `build()`'s result once first shown; until then, a ShownSignal of `height` px."""

    def __init__(self, build, *, title: str, note: str, height: int = 300, **params):
        super().__init__(**params)
        self._build = build
        self.signal = ShownSignal(
            title=title, note=note, height=height, sizing_mode="stretch_width", margin=(10, 10)
        )
        self._box = pn.Column(self.signal, sizing_mode="stretch_width", margin=0)
        self.built = False
        self.signal.param.watch(lambda event: self.show(), "seen")

    def show(self) -> None:
        """Build and show the views now (once; later calls do nothing)."""
        if self.built:
            return
        self.built = True
        doc = pn.state.curdoc
        if doc is None:
            self._box.objects = [self._build()]
            return
        # Built inside one hold, so that what the build changes elsewhere (which may point at
        # the new models) goes in the same message as the models; and one walk of the
        # document's model graph for the whole insertion, before that message is sent.
        with pn.io.hold(doc), doc.models.freeze():
            self._box.objects = [self._build()]

    def __panel__(self):
        return self._box
