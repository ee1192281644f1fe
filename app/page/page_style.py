"""The type of every figure on a page: shared stateless models, no text below the floor, and
presenter mode's larger plot text (drawn on canvases, out of CSS's reach)."""

from __future__ import annotations

import param
from bokeh.models import InlineStyleSheet

from app.page.a11y import PageTools
from app.views.page_figures import TextScale, floor_text, slim
from app.views.style import TOOLBAR_CSS

# Presenter mode: page text goes from 16 to 20 px (assets/lab.css), plot text likewise.
PRESENTER_TEXT_SCALE = 1.25


class PageStyle(param.Parameterized):
    """Styles the page's figures, the first screen's at once and each one built later as it
    joins (`add`), and scales all their text while the header's presenter switch is on."""

    tools = param.ClassSelector(class_=PageTools, constant=True)

    def __init__(self, figures, **params):
        super().__init__(**params)
        # One per page: the toolbar's "⋮" drawn darker (app/views/style.py, TOOLBAR_ICON).
        self.toolbar_sheet = InlineStyleSheet(css=TOOLBAR_CSS)
        self._toolbars(figures)
        slim(figures)
        floor_text(figures)
        self.text_scale = TextScale(figures)

    def add(self, figures, *, share: bool = True) -> None:
        """A figure built late gets the page's type and presenter size (`share`: its stateless
        models shared too; the head grid's figures are built sharing theirs)."""
        self._toolbars(figures)
        if share:
            slim(figures)
        floor_text(figures)
        self.text_scale.add(figures)
        if self.tools.presenter:
            self.text_scale.apply(PRESENTER_TEXT_SCALE)

    def _toolbars(self, figures) -> None:
        for fig in figures:
            if fig.toolbar.stylesheets != [self.toolbar_sheet]:
                fig.toolbar.stylesheets = [self.toolbar_sheet]

    @param.depends("tools.presenter", watch=True)
    def _presenter_changed(self) -> None:
        self.text_scale.apply(PRESENTER_TEXT_SCALE if self.tools.presenter else 1.0)

    def rescale(self) -> None:
        """Scale again after a redraw: a view may have written an unscaled size."""
        if self.text_scale.factor != 1.0:
            self.text_scale.apply()
