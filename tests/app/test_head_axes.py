"""The maps of a model's heads share one orientation (issue 40): the every-head grid put layers
across while the Causal map tab's patching and estimate maps put them up. All three: layer
across (x, 0 at the left), head down (y, 0 on top), a head's cell at (layer, head)."""

from __future__ import annotations

from bokeh.models import Rect

from app.state.causal_state import CausalState
from app.state.model_state import ModelState
from app.state.receipt_state import ReceiptState
from app.views.causal_view import CausalView
from app.views.head_grid import HeadGridView
from app.views.receipt_view import ReceiptView


def _orientation(fig) -> tuple[str, str, bool]:
    return fig.xaxis[0].axis_label, fig.yaxis[0].axis_label, fig.y_range.start > fig.y_range.end


def _cells(fig):
    (rect,) = [r.glyph for r in fig.renderers if isinstance(r.glyph, Rect)]
    return rect.x, rect.y


def test_every_head_map_puts_layers_across_and_heads_down():
    m = ModelState()
    c = CausalState(m)
    assert c.settle(60)
    grid = HeadGridView(m).grid
    patching = CausalView(c, m).patch_figure
    estimate = ReceiptView(ReceiptState(m), c, m).grid_figure
    for fig in (grid, patching, estimate):
        assert _orientation(fig) == ("layer", "head", True), fig.name
    for fig in (patching, estimate):
        assert _cells(fig) == ("layer", "head"), fig.name


def test_a_drawn_patching_map_fits_the_model_layers_across():
    m = ModelState()
    c = CausalState(m)
    assert c.settle(60)
    view = CausalView(c, m)
    c.patch()
    assert c.settle(60) and c.patching is not None
    model = m.loaded
    fig = view.patch_figure
    assert (fig.x_range.start, fig.x_range.end) == (-0.5, model.n_layers - 0.5)
    assert (fig.y_range.start, fig.y_range.end) == (model.n_heads - 0.5, -0.5)
    assert list(fig.xaxis[0].ticker.ticks) == list(range(model.n_layers))
