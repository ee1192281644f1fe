"""A plain Panel page with eight Bokeh figures: the baseline `tools.bench_page --served` holds
the lab's page against (issue 28: a page that joins no class and opens no model should cost
the server at most 0.7x this page's CPU to open, and at most 2.0 MB of its memory).

Served as Panel serves any script (`panel serve tools/plain_page.py`), with none of the lab's
patches: one slider named "Temperature" and eight line figures with Bokeh's default tools, the
first drawing a source named "weights" that the slider redraws (what tools/loadtest.py moves
and waits for). Nothing here is the lab's.
"""

import numpy as np
import panel as pn
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure

FIGURES = 8
KEYS = np.arange(8.0)


def plain_page() -> pn.Column:
    slider = pn.widgets.FloatSlider(name="Temperature", start=0.1, end=4.0, value=1.0, step=0.01)
    sources, panes = [], []
    for i in range(FIGURES):
        source = ColumnDataSource({"x": KEYS, "y": np.exp(-KEYS * (i + 1) / 4)})
        fig = figure(height=240, sizing_mode="stretch_width", title=f"Figure {i + 1}")
        fig.line("x", "y", source=source, line_width=2)
        sources.append(source)
        panes.append(pn.pane.Bokeh(fig, sizing_mode="stretch_width"))
    sources[0].name = "weights"

    def redraw(event):
        y = np.exp(-KEYS / event.new)
        sources[0].data = {"x": KEYS, "y": y / y.sum()}

    slider.param.watch(redraw, "value")
    return pn.Column(slider, *panes, sizing_mode="stretch_width")


if __name__.startswith("bokeh"):  # served by `panel serve`
    plain_page().servable(title="Plain Panel page")
