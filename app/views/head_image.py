"""A head's attention drawn as one image: the head grid's mosaic of every head, and the open
head's whole pattern (app/views/head_grid.py) are each made the same way.

One Image glyph holds every weight (thousands of cells as one model, not a glyph each). On top
of it, one transparent quad per cell (a head in the grid, a query row in the pattern) carries
the hover and takes the click, and one outlined quad marks the open cell.
"""

from __future__ import annotations

from bokeh.models.glyphs import Image, Quad

from .style import OKABE_ITO, add_glyph

OPEN_COLOUR = OKABE_ITO["vermillion"]
EDGES = ("left", "right", "top", "bottom")


def image_data(image=None, *, x: float = 0.0, y: float = 0.0, dw: float = 0.0, dh: float = 0.0):
    """An image source's data: `image` (2-D) with its corner at (x, y), `dw` by `dh` in data
    units; None, an empty source."""
    if image is None:
        return {"image": [], "x": [], "y": [], "dw": [], "dh": []}
    return {"image": [image], "x": [x], "y": [y], "dw": [float(dw)], "dh": [float(dh)]}


def box_data(left=None, right=None, top=None, bottom=None) -> dict:
    """One outlined box's data (all four edges), or an empty source (none given)."""
    edges = (left, right, top, bottom)
    if all(edge is None for edge in edges):
        return {k: [] for k in EDGES}
    return {k: [edge] for k, edge in zip(EDGES, edges, strict=True)}


def add_head_image(
    fig, mapper, image, cells, outline, *, outline_width: int, cell_edges=("top", "bottom")
):
    """The image in source `image` coloured by `mapper`, a transparent quad per row of source
    `cells` (its top and bottom edges in the columns `cell_edges`) and the open cell's outline
    (source `outline`, `outline_width` px). Returns the image's and the cells' renderers, for
    their hovers."""
    picture = add_glyph(
        fig,
        Image,
        image="image",
        x="x",
        y="y",
        dw="dw",
        dh="dh",
        color_mapper=mapper,
        source=image,
    )
    top, bottom = cell_edges
    cell_quads = add_glyph(
        fig,
        Quad,
        left="left",
        right="right",
        top=top,
        bottom=bottom,
        source=cells,
        fill_alpha=0.0,
        line_alpha=0.0,
        fill_color="#000000",
        line_color="#000000",
    )
    add_glyph(
        fig,
        Quad,
        left="left",
        right="right",
        top="top",
        bottom="bottom",
        source=outline,
        fill_alpha=0.0,
        line_color=OPEN_COLOUR,
        line_width=outline_width,
    )
    return picture, cell_quads
