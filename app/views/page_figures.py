"""What a page does to all its figures at once: no plot text under a floor, presenter mode's
one scale for every text, and the stateless models of its figures shared before it is served.
`app/page/page_style.py` applies them to a page's figures."""

from __future__ import annotations

from bokeh.models import (
    AllIndices,
    AllLabels,
    BasicTicker,
    BasicTickFormatter,
    CDSView,
    GlyphRenderer,
    LinearScale,
    UnionRenderers,
)

MIN_PLOT_TEXT_PX = 14


def text_models(fig):
    """The models of a figure that can draw text: the figure, its title, toolbar, the panels
    around it and inside it (axes, legends, colour bars, labels) and its renderers' glyphs.
    A full walk of the figure's model graph finds the same ones (tested) but costs a page
    build about 12 ms."""
    yield fig
    yield fig.title
    for side in ("above", "below", "left", "right", "center"):
        yield from getattr(fig, side)
    for renderer in fig.renderers:
        yield renderer
        yield from (getattr(renderer, name, None) for name in ("glyph", "hover_glyph"))


def font_sizes(figures):
    """(model, property, size in px) for every fixed font size in these figures."""
    seen = set()
    for fig in figures:
        for model in text_models(fig):
            if model is None or isinstance(model, str) or model.id in seen:
                continue
            seen.add(model.id)
            for name in model.properties():
                if not name.endswith("font_size"):
                    continue
                value = getattr(model, name)
                if isinstance(value, dict):
                    value = value.get("value")
                if isinstance(value, str) and value.endswith("px"):
                    try:
                        yield model, name, float(value[:-2])
                    except ValueError:
                        continue


def floor_text(figures, minimum: float = MIN_PLOT_TEXT_PX) -> None:
    """No plot text below `minimum` px, whichever view set it (legible on a projector)."""
    for model, name, size in list(font_sizes(figures)):
        if size < minimum:
            setattr(model, name, f"{minimum:g}px")


class TextScale:
    """Scale every plot text of some figures by one factor (presenter mode), from the sizes
    they had when first seen, so switching back restores them exactly. A size a view wrote
    since (not the one this set) is that view's new unscaled size."""

    def __init__(self, figures):
        self._figures = list(figures)
        self._base: dict[tuple[str, str], float] = {}
        self._set: dict[tuple[str, str], float] = {}
        self.factor = 1.0

    def add(self, figures) -> None:
        """Figures built later (the trained model's) follow the same scale."""
        self._figures.extend(figures)

    def apply(self, factor: float | None = None) -> None:
        """Scale to `factor` (None: again to the last one, after views redrew)."""
        self.factor = self.factor if factor is None else factor
        for model, name, size in list(font_sizes(self._figures)):
            key = (model.id, name)
            if key not in self._base or self._set.get(key) != size:
                self._base[key] = size
            new = round(self._base[key] * self.factor)
            self._set[key] = new
            if size != new:
                setattr(model, name, f"{new:g}px")


def slim(figures) -> None:
    """Share, before the page is served, the models of these figures that hold no state.

    The server keeps every Bokeh model of a page for as long as it is open. Renderers of one
    source share one view (a view stores the indices it computed for its source, so never
    across sources) with one "all rows" filter; every axis shares one label policy, and equal
    tickers, tick formatters and linear scales are one model (BokehJS computes ticks from the
    model and clones a plot's scales for its frame), and every source shares one selection
    policy (a source's selection itself is read-only in Bokeh, so each keeps its own). With the
    renderers built glyph-only (add_glyph) this took a page from ~670 Bokeh models to ~500
    (463 with the other savings in app/page/lab_page.py), and then to ~300.
    """
    every_row, all_labels = AllIndices(), AllLabels()
    views: dict[str, CDSView] = {}
    shared: dict[tuple, object] = {}
    policy = UnionRenderers()
    for fig in figures:
        for renderer in fig.renderers:
            if not isinstance(renderer, GlyphRenderer):
                continue
            # (No faded or muted glyph copies to drop: add_glyph never builds them.)
            if isinstance(renderer.view.filter, AllIndices):
                key = renderer.data_source.id
                if key not in views:  # a view is a model to build: only one per source
                    views[key] = CDSView(filter=every_row)
                renderer.view = views[key]
            renderer.data_source.selection_policy = policy
        for axis in (*fig.xaxis, *fig.yaxis):
            axis.major_label_policy = all_labels
            axis.ticker = _one_of(shared, axis.ticker)
            axis.formatter = _one_of(shared, axis.formatter)
        for grid in fig.grid:
            grid.ticker = _one_of(shared, grid.ticker)
        fig.x_scale = _one_of(shared, fig.x_scale)
        fig.y_scale = _one_of(shared, fig.y_scale)


# Stateless models that equal settings make interchangeable (not FixedTicker: its ticks change).
_SHAREABLE = (BasicTicker, BasicTickFormatter, LinearScale)


def _one_of(shared: dict, model):
    if type(model) not in _SHAREABLE:
        return model
    settings = model.properties_with_values(include_defaults=False)
    key = (type(model), tuple(sorted((k, repr(v)) for k, v in settings.items())))
    return shared.setdefault(key, model)
