"""Text that fits the frame the browser draws: a figure's title, axis labels and legend columns
chosen for the width (and height) its frame is drawn at, longest variant first."""

from __future__ import annotations

from bokeh.models import HoverTool
from bokeh.plotting import figure

from app.i18n.translator import ENGLISH, Translator

from .label_layout import glyphs
from .style import canvas_line

# An average glyph of FONT as a fraction of its size (measured in Chromium: bold 0.57-0.61 on
# the titles, 0.68 on a token with its space marker; regular 0.50-0.61), on the wide side.
BOLD_EM, REGULAR_EM = 0.64, 0.61
# A toolbar button's width: the title keeps clear of the whole toolbar (BokehJS folds it into
# its "⋮" menu only sometimes, and then draws it over the title).
TOOLBAR_BUTTON_PX = 28


def toolbar_width(fig: figure) -> float:
    """The width of a figure's toolbar: a button per tool (hover tools share one) and "⋮"."""
    buttons = sum(1 for tool in fig.toolbar.tools if not isinstance(tool, HoverTool))
    return TOOLBAR_BUTTON_PX * (buttons + 1)


def text_width(text: str, font_size: str, *, bold: bool = False) -> float:
    """The estimated width in px of one line of `text` at a CSS size such as "17px"."""
    px = float(str(font_size).removesuffix("px") or 0)
    return (BOLD_EM if bold else REGULAR_EM) * px * glyphs(text)


class FitText:
    """A figure's title, x-axis label and legend columns chosen for the width the browser draws
    its frame at (`inner_width`, reported once drawn and on each resize, and the text size,
    which presenter mode changes): the longest variant that fits, else the last. Before the
    browser reports a width the first variant is shown. In a right-to-left language (`tr`)
    each variant reads in its direction on the left-to-right canvas (`canvas_line`)."""

    def __init__(self, fig: figure, *, legend_cols: int | None = None, tr: Translator = ENGLISH):
        self.fig, self.tr = fig, tr
        self._titles: tuple[str, ...] = (fig.title.text,)
        self._x_labels: tuple[str, ...] | None = None
        self._y_labels: tuple[str, ...] | None = None
        self._legend_cols = legend_cols
        fig.on_change("inner_width", self._changed)
        fig.title.on_change("text_font_size", self._changed)

    def title(self, *variants: str) -> None:
        self._titles = tuple(canvas_line(v, self.tr) for v in variants)
        self.refit()

    def x_label(self, *variants: str) -> None:
        self._x_labels = tuple(canvas_line(v, self.tr) for v in variants)
        self.refit()

    def y_label(self, *variants: str) -> None:
        """Variants of the y-axis label, fitted to the frame's height (a 720p projector's
        plane cut "towards the largest w·v" at both ends)."""
        if self._y_labels is None:
            self.fig.on_change("inner_height", self._changed)
        self._y_labels = tuple(canvas_line(v, self.tr) for v in variants)
        self.refit()

    def width(self, side: str = "inner_width") -> float | None:
        try:
            width = getattr(self.fig, side)  # readonly: set by the browser once drawn
        except (AttributeError, ValueError):
            width = None
        return float(width) if isinstance(width, int | float) and width > 0 else None

    def _changed(self, attr, old, new) -> None:  # Bokeh's callback signature
        self.refit()

    def refit(self) -> None:
        fig, width = self.fig, self.width()
        title = _fitting(self._titles, width, fig.title.text_font_size, True, toolbar_width(fig))
        if fig.title.text != title:
            fig.title.text = title
        if self._x_labels:
            axis = fig.xaxis[0]
            label = _fitting(self._x_labels, width, axis.axis_label_text_font_size, False, 0)
            if axis.axis_label != label:
                fig.xaxis.axis_label = label
        if self._y_labels:
            axis, height = fig.yaxis[0], self.width("inner_height")
            label = _fitting(self._y_labels, height, axis.axis_label_text_font_size, False, 0)
            if axis.axis_label != label:
                fig.yaxis.axis_label = label
        if self._legend_cols and fig.legend:
            legend = fig.legend[0]
            size = legend.label_text_font_size
            # A column: glyph, gap and the longest label shown (a hidden entry, the planes'
            # distractors, took the whole row); the legend's padding on each side.
            shown = [i for i in legend.items if i.visible]
            column = 40 + max((text_width(item_text(i), size) for i in shown), default=0)
            cols = min(self._legend_cols, max(1, len(shown)))
            while cols > 1 and width is not None and cols * column + 20 > width:
                cols -= 1
            if legend.ncols != cols:
                legend.ncols = cols


def item_text(item) -> str:
    """A legend entry's label as text (a dict or a Value, as Bokeh keeps it)."""
    label = item.label
    return str(label.get("value", "") if isinstance(label, dict) else getattr(label, "value", ""))


def _fitting(variants, width, font_size, bold: bool, spare: float) -> str:
    if width is None:
        return variants[0]
    for text in variants:
        if text_width(text, font_size, bold=bold) + spare <= width:
            return text
    return variants[-1]
