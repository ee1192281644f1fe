"""Every head at once, the open head's whole pattern, and the query position the planes show.

- `HeadGridView`: a layer x head grid of every head's whole causal pattern (30 x 9 for SmolLM2),
  drawn as ONE image glyph (a mosaic, `app.state.head_patterns.grid_image`) with one
  transparent quad per head on top for the hover and the click; the open head is outlined.
  Clicking a cell opens that head in the planes. Beside it, the open head's whole matrix
  (query rows x keys, zoomable), with the query row outlined; clicking a row picks it.
- `QueryPicker`: the sidebar's query position (a slider, and "the last token").

Named sources (the tests and checks read them):

- `head_grid`: one row per head, layer-major: `layer`, `head`, `top_key` (position), `top_token`,
  `top_weight`, `entropy` (nats), `on_focus` (the weight on the open head's strongest key,
  `focus_key`), all from each head's query row, and the quad of its cell.
- `head_grid_image`: the mosaic (uint8, layout in `app.state.head_patterns`).
- `pattern`: the open head's matrix as one float32 image, `image[0][i][j]` the weight of query
  row i on key j (NaN above the diagonal), drawn with query 0 at the top.
- `pattern_rows`: one row per query position (its token and its strongest key).
"""

from __future__ import annotations

import html

import numpy as np
import panel as pn
import param
from bokeh.events import Tap
from bokeh.models import (
    BasicTicker,
    BoxZoomTool,
    ColorBar,
    ColumnDataSource,
    FixedTicker,
    LinearColorMapper,
    LogColorMapper,
    NoOverlap,
    PanTool,
    Range1d,
    ResetTool,
    WheelZoomTool,
)
from bokeh.palettes import Blues256

import attention_lab_assets
from app.i18n.head_words import head_words, in_line
from app.i18n.translator import ENGLISH, Translator
from app.patches.panel_events import respond_at_once
from app.state import head_patterns as hp
from app.state.chart_tables import head_grid_table
from app.state.head_tables import pattern_row_table
from app.state.model_state import ModelState
from app.state.settings_schema import MODEL_FIELDS
from engine.heads import bidi_isolated, shown_token, shown_tokens

from .covered import conceal
from .find_heads import ScoreLayer
from .head_axes import left_to_right, token_marks_words
from .head_image import add_head_image, box_data, image_data
from .notify import notify
from .plot_text import PlotText
from .style import add_hover, f32, make_figure
from .two_way import Echo

GRID_CSS = attention_lab_assets.read_text("components", "head-grid.css")
# Light (weight 0) to dark blue (weight 1); the query row's future in grey, gutters white.
WEIGHT_PALETTE = tuple(reversed(Blues256))
FUTURE_COLOUR = "#e4e4e4"
LABEL_CHARS = 10
PATTERN_HEIGHT = 560
NOTICE_HEIGHT = 140  # the grid's box while a notice stands in its place
GRID_BORDERS = (
    64,
    40,
    12,
    58,
)  # left, top, right, bottom px around the grid's cells  # a token label on the pattern's axes, at most


def grid_palette() -> list[str]:
    """256 colours, one per pixel value of the grid's mosaic (app.state.head_patterns): the
    pattern's own colours for 0..LEVELS (the same log scale), grey for the future, white gutters."""
    steps = np.linspace(0, len(WEIGHT_PALETTE) - 1, hp.LEVELS).round().astype(int)
    weights = [WEIGHT_PALETTE[0]] + [WEIGHT_PALETTE[i] for i in steps]
    return weights + [FUTURE_COLOUR] * (hp.GAP - hp.LEVELS - 1) + ["#ffffff"]


def cell_px(n_layers: int, n_heads: int) -> int:
    """Pixels per side of one head's cell: about 900 px across for SmolLM2's 30 layers (a
    laptop's main area), larger for a small model, never more than 120."""
    return int(min(120, max(22, 840 // n_layers), 360 // n_heads))


def short_labels(tokens) -> list[str]:
    """Each position's label, cut to LABEL_CHARS ("␣approved @3"), a character split over byte
    tokens shown whole where it begins and as its continuation after (`shown_tokens`)."""
    out = []
    for i, text in enumerate(shown_tokens(tokens)):
        text = text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"
        out.append(f"{bidi_isolated(text)} @{i}")
    return out


class QueryPicker(pn.viewable.Viewer):
    """The query position the planes and the answer show (the sidebar's slider)."""

    mstate = param.ClassSelector(class_=ModelState, constant=True, doc="the model source")

    def __init__(self, mstate, tr: Translator = ENGLISH, **params):
        super().__init__(mstate=mstate, **params)
        self.tr, _ = tr, tr.gettext
        self._echo = Echo()  # while update writes the slider, what it reports is its echo
        self.slider = pn.widgets.IntSlider(
            label=_(MODEL_FIELDS["query"].label),
            start=0,
            end=1,
            value=0,
            sizing_mode="stretch_width",
        )
        self.last = pn.widgets.Button(
            label=_("Back to the last token"), color="light", sizing_mode="stretch_width"
        )
        self.note = pn.pane.Markdown("", margin=(0, 10))
        self.slider.param.watch(self._picked, "value_throttled")
        self.last.on_click(lambda _e: self.send(None))
        respond_at_once(self.slider, self.last)
        mstate.param.watch(lambda *_e: self.update(), ["snapshot"])
        self.update()

    def send(self, position: int | None) -> None:
        """Ask for query `position` (None: the last token), naming a refusal."""
        run = self.mstate.run
        if position is not None and run is not None and position == len(run.tokens) - 1:
            position = None  # the last token: it stays the last when the text changes
        if position == self.mstate.query or (position is None and self.mstate.query in (None, -1)):
            return
        if not self.mstate.request(query=position):
            notify("warning", self.mstate.error_text(self.tr))
            self.update()

    def _picked(self, event) -> None:
        if not self._echo.active and event.new is not None:
            self.send(int(event.new))

    def update(self) -> None:
        run = self.mstate.run
        if run is None:
            return
        n, q = len(run.tokens), run.query_position
        with self._echo.writing():
            self.slider.param.update(end=max(1, n - 1), value=q, disabled=n < 2)
        self.last.visible = q != n - 1
        _ = self.tr.gettext
        where = _("the last token") if q == n - 1 else _("token {number} of {total}")
        note = _("Row {row}: {token} ({where}); the answer is its next token.")
        self.note.object = html.escape(
            note.format(
                row=q,
                token=shown_token(run.tokens[q]),
                where=in_line(where.format(number=q + 1, total=n), self.tr),
            )
        )

    def __panel__(self):
        return pn.Column(self.slider, self.note, self.last, sizing_mode="stretch_width", margin=0)


class HeadGridView(pn.viewable.Viewer):
    """Every head's pattern in one grid, and the open head's whole matrix."""

    mstate = param.ClassSelector(class_=ModelState, constant=True, doc="the model source")

    def __init__(self, mstate, tr: Translator = ENGLISH, **params):
        super().__init__(mstate=mstate, **params)
        self.tr, self._ = tr, tr.gettext  # the session's language (app/i18n/translator.py)
        self._drawn_image = None  # the mosaic last sent (sent again only when it changes)
        self._drawn_pattern = None
        cols = ["layer", "head", "top_key", "top_token", "top_weight", "entropy", "on_focus"]
        self.grid_source = ColumnDataSource(
            name="head_grid",
            data={c: [] for c in cols}
            | {"focus_key": [], "score": [], "left": [], "right": [], "top": [], "bottom": []},
        )
        self.image_source = ColumnDataSource(name="head_grid_image", data=image_data())
        self.open_source = ColumnDataSource(name="head_grid_open", data=box_data())
        self.grid = self._grid_figure()
        self.pattern_source = ColumnDataSource(name="pattern", data=image_data())
        self.rows_source = ColumnDataSource(
            name="pattern_rows",
            data={k: [] for k in ("query", "label", "top", "top_weight")}
            | {k: [] for k in ("left", "right", "top_edge", "bottom_edge")},
        )
        self.query_source = ColumnDataSource(name="pattern_query", data=box_data())
        self.pattern_fig = self._pattern_figure()
        self.caption = pn.pane.Markdown("", margin=(0, 10), css_classes=["lab-grid-caption"])
        self.text = PlotText(self._("Every head and the open head's pattern in words"), tr)
        self.grid_pane = self.grid_box = None  # made with the page (__panel__)

    # ------------------------------------------------------------------ figures

    def _grid_figure(self):
        model, _ = self.mstate.loaded, self._
        L, H = model.n_layers, model.n_heads
        cell = cell_px(L, H)
        # Fixed borders around a frame of square cells (no toolbar: hover and click need none).
        fig = make_figure(
            _("Every head at once"),
            x_range=Range1d(-0.5, L - 0.5),
            y_range=Range1d(H - 0.5, -0.5),  # head 0 on top
            sizing_mode="fixed",
            width=GRID_BORDERS[0] + L * cell + GRID_BORDERS[2],
            height=GRID_BORDERS[1] + H * cell + GRID_BORDERS[3],
        )
        fig.toolbar_location = None
        fig.name = "head_grid_plot"
        left_to_right(fig)
        fig.grid.visible = False
        fig.xaxis.axis_label = _("layer")
        fig.yaxis.axis_label = _("head")
        fig.xaxis.ticker = FixedTicker(ticks=[])
        fig.yaxis.ticker = FixedTicker(ticks=list(range(H)))
        mapper = LinearColorMapper(palette=grid_palette(), low=0, high=256)
        _image, cells = add_head_image(
            fig, mapper, self.image_source, self.grid_source, self.open_source, outline_width=3
        )
        add_hover(
            fig,
            [cells],
            [
                (_("head"), head_words("@layer", "@head", self.tr)),
                (_("strongest key"), "@top_token @@@top_key: @top_weight{0.000}"),
                (_("entropy"), _("{value} nats").format(value="@entropy{0.00}")),
                (_("on the open head's key"), "@on_focus{0.000}"),
            ],
        )
        # Find heads: the cells coloured by a copying score instead, on top of the mosaic.
        self.scores = ScoreLayer(self.mstate, fig, self.grid_source, fig.hover[0], tr=self.tr)
        fig.on_event(Tap, self._tap_grid)
        return fig

    def _pattern_figure(self):
        _ = self._
        fig = make_figure(
            _("The open head's whole pattern"),
            height=PATTERN_HEIGHT,
            sizing_mode="stretch_width",
            x_range=Range1d(-0.5, 0.5),
            y_range=Range1d(0.5, -0.5),  # query 0 on top
            tools="",
        )
        fig.name = "pattern_plot"
        left_to_right(fig)
        fig.grid.visible = False
        pan, box = PanTool(), BoxZoomTool(match_aspect=True)
        wheel = WheelZoomTool()
        fig.add_tools(pan, box, wheel, ResetTool())
        # No drag or scroll taken by default: the page scrolls under a finger or a wheel; pick
        # a tool in the toolbar to zoom or pan.
        fig.toolbar.active_drag = None
        fig.toolbar.active_scroll = None
        fig.xaxis.axis_label = _("key position")
        fig.yaxis.axis_label = _("query position (click a row)")
        fig.xaxis.major_label_orientation = np.pi / 2
        # Ticks on whole positions that thin out (and fill in again when zoomed).
        fig.xaxis.ticker = BasicTicker(desired_num_ticks=10, min_interval=1)
        fig.yaxis.ticker = BasicTicker(desired_num_ticks=14, min_interval=1)
        for axis in (*fig.xaxis, *fig.yaxis):
            axis.major_label_policy = NoOverlap()  # a narrow screen drops the labels that collide
        # A log scale (as the grid's): a long text spreads a row over hundreds of keys.
        mapper = LogColorMapper(
            palette=list(WEIGHT_PALETTE),
            low=hp.FLOOR,
            high=1,
            low_color=WEIGHT_PALETTE[0],
            nan_color=FUTURE_COLOUR,
        )
        image, _rows = add_head_image(
            fig,
            mapper,
            self.pattern_source,
            self.rows_source,
            self.query_source,
            outline_width=2,
            cell_edges=("top_edge", "bottom_edge"),
        )
        # One tooltip: two hovers (the rows' and the image's) stacked two boxes on each cell.
        # The axes name each position's token; the caption names the query's strongest key.
        add_hover(
            fig,
            [image],
            [
                (_("query position"), "$y{0}"),
                (_("key position"), "$x{0}"),
                (_("weight"), "@image{0.000}"),
            ],
        )
        bar = ColorBar(
            color_mapper=mapper,
            ticker=FixedTicker(ticks=[0.001, 0.01, 0.1, 1]),
            title=_("weight (log)"),
            major_label_overrides={0.001: "0.001", 0.01: "0.01", 0.1: "0.1", 1: "1"},
            title_text_font_size="14px",
            major_label_text_font_size="14px",
            orientation="horizontal",
            height=10,
            title_standoff=4,
        )
        # Above the matrix, across it: on a phone a bar at the side took a third of the width.
        fig.add_layout(bar, "above")
        fig.on_event(Tap, self._tap_pattern)
        return fig

    # ------------------------------------------------------------------ clicks

    def _tap_grid(self, event) -> None:
        model = self.mstate.loaded
        if event.x is None or event.y is None:
            return
        layer, head = int(np.rint(event.x)), int(np.rint(event.y))
        if not (0 <= layer < model.n_layers and 0 <= head < model.n_heads):
            return
        if (layer, head) != self.mstate.open_head and not self.mstate.request(
            layer=layer, head=head
        ):
            notify("warning", self.mstate.error_text(self.tr))

    def _tap_pattern(self, event) -> None:
        run = self.mstate.run
        if run is None or event.y is None or event.x is None:
            return
        row = int(np.rint(event.y))
        n = len(run.tokens)
        if not 0 <= row < n:
            return
        last = row == n - 1
        if row == run.query_position:
            return
        if not self.mstate.request(query=None if last else row):
            notify("warning", self.mstate.error_text(self.tr))

    # ------------------------------------------------------------------ drawing

    def update(self) -> None:
        m = self.mstate
        if m.run is None:
            return
        model, run = m.loaded, m.run
        L, H = model.n_layers, model.n_heads
        mosaic = m.head_grid_image()
        share = mosaic.cell / mosaic.pitch  # of a cell's square, the pattern (then the gutter)
        rows = m.head_grid()
        # Cell (layer L, head h) is centred on (L, h); the gutter splits between its sides.
        layers = np.asarray(rows["layer"], dtype=np.float32)
        heads = np.asarray(rows["head"], dtype=np.float32)
        data = dict(rows)
        data.update(
            left=f32(layers - share / 2),
            right=f32(layers + share / 2),
            top=f32(heads - share / 2),
            bottom=f32(heads + share / 2),
        )
        found = self.scores.draw(run, data, share)
        # A score the text cannot measure: its notice stands in the grid's place.
        # (The figure's own `visible`: a Bokeh pane's does not come back once set False.)
        self.grid.visible = not self.scores.notice.visible
        if self.grid_box is not None:  # no empty frame's height kept above the pattern
            self.grid_box.height = self.grid.height if self.grid.visible else NOTICE_HEIGHT
        self.grid_source.data = data
        if mosaic is not self._drawn_image:
            self._drawn_image = mosaic
            corner = -0.5 + (1 - share) / 2
            self.image_source.data = image_data(mosaic.image, x=corner, y=corner, dw=L, dh=H)
        layer, head = m.open_head
        edge = share / 2 + 0.04
        self.open_source.data = box_data(layer - edge, layer + edge, head - edge, head + edge)
        self._fit_grid(L, H)
        self._axes(L)
        self._update_pattern(run, layer, head)
        self.text.show(
            (
                *found,
                head_grid_table(rows, (layer, head)),
                pattern_row_table(
                    run.tokens, self.mstate.pattern(), run.query_position, layer, head
                ),
            )
        )

    def _fit_grid(self, L: int, H: int) -> None:
        """The grid's frame and size for this model's layers and heads: the view is built once
        per page, perhaps for the binding model while a link's SmolLM2 still loads."""
        fig = self.grid
        if (fig.x_range.end, fig.y_range.start) == (L - 0.5, H - 0.5):
            return
        cell = cell_px(L, H)
        fig.x_range.update(start=-0.5, end=L - 0.5)
        fig.y_range.update(start=H - 0.5, end=-0.5)
        size = {
            "width": GRID_BORDERS[0] + L * cell + GRID_BORDERS[2],
            "height": GRID_BORDERS[1] + H * cell + GRID_BORDERS[3],
        }
        fig.update(**size)
        fig.yaxis[0].ticker.ticks = list(range(H))
        if self.grid_pane is not None:
            self.grid_pane.param.update(**size)
            self.grid_box.param.update(max_width=size["width"], height=size["height"])

    def _axes(self, L: int) -> None:
        # Every layer's number while they fit; every other one for SmolLM2's 30.
        ticks = list(range(0, L, 1 if L <= 12 else 2))
        if list(self.grid.xaxis[0].ticker.ticks) != ticks:
            self.grid.xaxis[0].ticker.ticks = ticks

    def _update_pattern(self, run, layer: int, head: int) -> None:
        matrix = self.mstate.pattern()
        n = matrix.shape[0]
        q = run.query_position
        if matrix is not self._drawn_pattern:
            self._drawn_pattern = matrix
            self.pattern_source.data = image_data(matrix, x=-0.5, y=-0.5, dw=n, dh=n)
            # Each row's own strongest key (the cell hover gives any one weight).
            filled = np.nan_to_num(matrix, nan=-1.0)
            tops = filled.argmax(axis=1)
            positions = np.arange(n, dtype=np.float32)
            names = short_labels(run.tokens)
            self.rows_source.data = {
                "query": list(range(n)),
                "label": names,
                "top": [names[int(j)] for j in tops],
                "top_weight": f32(filled[np.arange(n), tops]),
                "left": f32(np.full(n, -0.5)),
                "right": f32(np.full(n, n - 0.5)),
                "top_edge": f32(positions - 0.5),
                "bottom_edge": f32(positions + 0.5),
            }
            labels = dict(enumerate(names))
            for axis in (self.pattern_fig.xaxis[0], self.pattern_fig.yaxis[0]):
                axis.major_label_overrides = labels
            self.pattern_fig.x_range.update(start=-0.5, end=n - 0.5)
            self.pattern_fig.y_range.update(start=n - 0.5, end=-0.5)
        self.query_source.data = box_data(-0.5, q + 0.5, q - 0.5, q + 0.5)
        title = head_words(layer, head, self.tr).capitalize()
        if self.pattern_fig.title.text != title:
            self.pattern_fig.title.text = title
        top = int(np.argmax(run.head(layer, head).weights))
        names = short_labels(run.tokens)
        self.caption.object = html.escape(self._caption(names, layer, head, q, top))

    def _caption(self, names, layer: int, head: int, q: int, top: int) -> str:
        """The grid's caption: the marked heads, the open head, its query and strongest key,
        how to pick another, and what the tokens' marks mean."""
        _ = self._
        summary = f"{self.scores.summary} " if self.scores.summary else ""
        text = _(
            "The outlined cell is the open head ({head}); the outlined row is the query, "
            "{query}, whose strongest key is {key}. Click a cell to open that head, or a row of "
            "the pattern to make it the query (by keyboard: Layer and Head, and Query position, "
            "in the sidebar)."
        ).format(head=head_words(layer, head, self.tr), query=names[q], key=names[top])
        marks = token_marks_words(names, self.tr)
        tokens = (" " + _("Tokens: {marks}.").format(marks=marks)) if marks else ""
        return summary + text + tokens

    def conceal(self) -> None:
        """Every head's weights held back until a lesson step is measured (covered.py)."""
        conceal(self, "Every head")
        conceal(self.scores, "Every head")
        self.scores.conceal()
        self._drawn_image = self._drawn_pattern = None  # the next drawing sends them again
        self.caption.object = self._("Every head's weights: predict first, then press Measure.")

    def figures(self) -> list:
        return [self.grid, self.pattern_fig]

    def __panel__(self):
        # Each figure in its own box: two sibling figures have their borders aligned by
        # BokehJS (the pattern's tall key labels took the grid's height).
        self.grid_pane = pn.pane.Bokeh(self.grid, sizing_mode="fixed")
        grid = self.grid_box = pn.Column(
            self.scores.notice,
            self.grid_pane,
            css_classes=["lab-grid"],
            sizing_mode="stretch_width",
            # Its own box scrolls sideways on a narrow screen: no minimum width for the page.
            min_width=0,
            max_width=self.grid.width,
            height=self.grid.height,
            margin=0,
        )
        pattern = pn.Column(
            pn.pane.Bokeh(
                self.pattern_fig,
                sizing_mode="stretch_width",
                height=PATTERN_HEIGHT,
            ),
            css_classes=["lab-pattern"],
            sizing_mode="stretch_width",
            margin=0,
        )
        row = pn.Row(
            grid,
            pattern,
            sizing_mode="stretch_width",
            css_classes=["lab-grid-row"],
            stylesheets=[GRID_CSS],
        )
        find = pn.Row(
            self.scores.control,
            self.scores.legend,
            css_classes=["lab-find-heads"],
            margin=0,
            stylesheets=[GRID_CSS],
        )
        return pn.Column(
            find,
            self.caption,
            row,
            self.text,
            sizing_mode="stretch_width",
            css_classes=["lab-head-grid"],
            stylesheets=[GRID_CSS],
        )
