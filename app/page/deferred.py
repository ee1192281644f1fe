"""Parts of the page that are built the first time a student looks at them.

Every Bokeh model in a page is held by the server for as long as the page is open, and each one
costs CPU to build and send. Views below the first screen wait as a light placeholder; when it
scrolls into sight (or its button is pressed, for a keyboard or a screen reader), the browser
tells the server, which builds the views once and puts them in its place. A Disclosure is
the same for a section a student opens with a button (the sidebar's less used settings).
"""

from __future__ import annotations

import panel as pn
import param
from panel.reactive import ReactiveHTML

import attention_lab_assets
from app import js


def fill(holder, *builds) -> None:
    """Put what each of `builds` returns, in order, into the layout `holder`.

    Built inside one hold, so that what the build changes elsewhere (which may point at the
    new models) leaves in the same message as the models; and with one walk of the document's
    model graph for the whole insertion, done before that message is sent.
    """
    doc = pn.state.curdoc
    if doc is None:
        holder.objects = [build() for build in builds]
        return
    with pn.io.hold(doc), doc.models.freeze():
        holder.objects = [build() for build in builds]


class ShownSignal(ReactiveHTML):
    """The placeholder: says what will appear here, and reports when it is first seen."""

    seen = param.Boolean(default=False, doc="Set by the browser the first time it is on screen")
    title = param.String(default="")
    note = param.String(default="")
    button = param.String(default="Draw them now", doc="The label of the button that draws now")

    _child_config = {"button": "literal"}  # noqa: RUF012 - text, not a Panel component

    _template = (
        '<section id="box" class="lab-deferred" aria-label="${title}">'
        '<p class="lab-deferred-title">${title}</p>'
        '<p class="lab-deferred-note">${note}</p>'
        '<button id="show" type="button" onclick="${script(\'show\')}">${button}</button>'
        "</section>"
    )
    # Fires once, when a fifth of the placeholder is on screen.
    _scripts = js.sections("shown_signal.js")  # noqa: RUF012 - Panel reads this class attribute
    _stylesheets = [attention_lab_assets.read_text("components", "deferred.css")]  # noqa: RUF012


class Deferred(pn.viewable.Viewer):
    """Holds `build()`'s result once first shown; until then, a ShownSignal of `height` px."""

    def __init__(
        self,
        build,
        *,
        title: str,
        note: str,
        button: str = "Draw them now",
        height: int = 300,
        **params,
    ):
        super().__init__(**params)
        self._build = build
        self.signal = ShownSignal(
            title=title,
            note=note,
            button=button,
            height=height,
            sizing_mode="stretch_width",
            margin=(10, 10),
        )
        self._box = pn.Column(self.signal, sizing_mode="stretch_width", margin=0)
        self.built = False
        self.signal.param.watch(lambda event: self.show(), "seen")

    def show(self) -> None:
        """Build and show the views now (once; later calls do nothing)."""
        if self.built:
            return
        self.built = True
        fill(self._box, self._build)

    def __panel__(self):
        return self._box


class DisclosureButton(ReactiveHTML):
    """A button that opens and closes a section (announced as expanded or collapsed)."""

    open = param.Boolean(default=False)
    label = param.String(default="")

    _child_config = {"label": "literal"}  # noqa: RUF012 - text, not a Panel component

    _template = (
        '<button id="btn" type="button" class="lab-disclosure" aria-expanded="false" '
        "onclick=\"${script('toggle')}\">"
        '<span id="arrow" aria-hidden="true">▸</span> <span id="text">${label}</span></button>'
    )
    _scripts = js.sections("disclosure_button.js")  # noqa: RUF012 - Panel reads this
    _stylesheets = [attention_lab_assets.read_text("components", "disclosure.css")]  # noqa: RUF012


class Disclosure(pn.viewable.Viewer):
    """A section behind a button, whose views `build()` makes the first time it is opened."""

    def __init__(self, build, *, label: str, **params):
        super().__init__(**params)
        self._build = build
        self.button = DisclosureButton(label=label, sizing_mode="stretch_width", margin=(8, 10))
        self._content = pn.Column(sizing_mode="stretch_width", margin=0, visible=False)
        self.built = False
        self.button.param.watch(self._toggled, "open")

    def show(self) -> None:
        """Open the section (building it the first time)."""
        self.button.open = True

    def _toggled(self, event) -> None:
        if event.new and not self.built:
            self.built = True
            fill(self._content, self._build)
        self._content.visible = event.new

    def __panel__(self):
        return pn.Column(self.button, self._content, sizing_mode="stretch_width", margin=0)
