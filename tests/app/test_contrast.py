"""Non-text contrast (WCAG 2.1, 1.4.11) of the plots' palette, computed from its constants
(app/views/style.py): every mark stands 3:1 against the white plot, by its own colour or by
its edge; the colours drawn side by side stay apart for the three kinds of colour blindness
(so a darker orange, which would merge with the vermillion, is refused); and the figures are
built with those edges."""

from __future__ import annotations

import re

import numpy as np
import pytest

import attention_lab_assets
from app.page.lab_page import create_app
from app.views.entropy import EntropyView
from app.views.logits import LogitsView
from app.views.notify import TOAST_BACKGROUNDS, TOAST_TEXT
from app.views.style import (
    EDGES,
    OKABE_ITO,
    ROLE_COLOURS,
    STAGE_COLOURS,
    TOOLBAR_ICON,
)
from app.views.weights import WeightsView

WHITE = "#ffffff"
# Machado, Oliveira and Fernandes (2009), severity 1.0, on linear RGB.
DICHROMACY = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                   [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                     [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                   [0.004733, 0.691367, 0.303900]],
}  # fmt: skip
# The colours one chart draws side by side.
TOGETHER = {
    "weights": (STAGE_COLOURS["weight"], STAGE_COLOURS["norm_share"]),
    "logits": (STAGE_COLOURS["raw"], STAGE_COLOURS["scaled"], STAGE_COLOURS["logit"]),
    "planes": tuple(ROLE_COLOURS[r] for r in ("query", "key", "value", "contribution", "output")),
}
APART = 15.0  # CIE76 distance; the closest pair today is orange and vermillion for a deuteranope


def linear(colour: str) -> np.ndarray:
    c = np.array([int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)])
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def contrast(a: str, b: str = WHITE) -> float:
    """WCAG's contrast ratio of two sRGB colours."""
    la, lb = (float(linear(c) @ [0.2126, 0.7152, 0.0722]) for c in (a, b))
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def lab(rgb: np.ndarray) -> np.ndarray:
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    t = xyz @ np.clip(rgb, 0, 1) / [0.95047, 1.0, 1.08883]
    f = np.where(t > 0.008856, np.cbrt(t), 7.787 * t + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def seen_apart(a: str, b: str, kind: str) -> float:
    m = np.array(DICHROMACY[kind])
    return float(np.linalg.norm(lab(m @ linear(a)) - lab(m @ linear(b))))


def test_the_contrast_formula_gives_wcags_figures():
    assert contrast("#000000") == pytest.approx(21.0)
    assert contrast("#767676") == pytest.approx(4.54, abs=0.01)
    # Issue 30's measurements of the marks before this work.
    assert contrast(OKABE_ITO["orange"]) == pytest.approx(2.25, abs=0.01)
    assert contrast(OKABE_ITO["sky"]) == pytest.approx(2.3, abs=0.02)
    assert contrast("#808080") == pytest.approx(3.95, abs=0.01)  # Bokeh's gray "⋮"


@pytest.mark.parametrize("chart", list(TOGETHER))
def test_every_mark_stands_3_to_1_on_the_plot_by_its_colour_or_its_edge(chart):
    for colour in TOGETHER[chart]:
        shown = max(contrast(colour), contrast(EDGES.get(colour, colour)))
        assert shown >= 3.0, (chart, colour, contrast(colour))
    assert contrast(TOOLBAR_ICON) >= 4.5


def test_an_edge_is_its_fills_hue_and_stands_out_from_it():
    for fill, edge in EDGES.items():
        assert contrast(edge) >= 3.0 and contrast(edge, fill) >= 2.5
        hue = np.angle(complex(*lab(linear(fill))[1:]), deg=True)
        assert abs(hue - np.angle(complex(*lab(linear(edge))[1:]), deg=True)) < 15


@pytest.mark.parametrize("kind", list(DICHROMACY))
@pytest.mark.parametrize("chart", list(TOGETHER))
def test_colours_drawn_together_stay_apart_for_colour_blind_eyes(chart, kind):
    colours = TOGETHER[chart]
    for i, a in enumerate(colours):
        for b in colours[i + 1 :]:
            assert seen_apart(a, b, kind) >= APART, (chart, kind, a, b)


def test_an_orange_darkened_to_3_to_1_would_merge_with_the_vermillion():
    darker = "#B97F00"  # the Okabe-Ito orange's hue at 3.4:1
    assert contrast(darker) >= 3.0
    assert seen_apart(darker, ROLE_COLOURS["query"], "deuteranopia") < APART


def test_the_figures_are_built_with_the_edges():
    orange, sky = EDGES[OKABE_ITO["orange"]], EDGES[OKABE_ITO["sky"]]

    def outlines(fig):
        return {
            (r.glyph.fill_color, r.glyph.line_color)
            for r in fig.renderers
            if hasattr(r.glyph, "fill_color")
        }

    assert (STAGE_COLOURS["norm_share"], orange) in outlines(WeightsView().figure)
    assert (STAGE_COLOURS["raw"], sky) in outlines(LogitsView().figure)
    lines = [r.glyph.line_color for r in EntropyView().figure.renderers]
    assert OKABE_ITO["orange"] not in lines and orange in lines
    page = create_app()
    payload = page.lab.geometry.payload_fig
    shafts = {
        (r.glyph.line_color, r.glyph.line_width)
        for r in payload.renderers
        if type(r.glyph).__name__ == "Segment"
    }
    assert {(orange, 9), (ROLE_COLOURS["contribution"], 5)} <= shafts
    sheets = {s.css for fig in page.lab.figures() for s in fig.toolbar.stylesheets}
    assert len(sheets) == 1 and TOOLBAR_ICON in sheets.pop()


HEADER = "#0b3d5c"  # the page's header, where the page tools' rings are drawn


def test_the_masked_grey_and_every_components_focus_ring_stand_3_to_1():
    assert contrast(ROLE_COLOURS["masked"]) >= 3.0  # was 2.8:1
    # A component's ring: a dark outline for the white page, a light halo for the dark header
    # (a yellow ring alone was 1.4:1 on white).
    for sheet in ("deferred.css", "disclosure.css", "page-tools.css"):
        css = attention_lab_assets.read_text("components", sheet)
        rule = re.search(r":focus-visible \{([^}]*)\}", css).group(1)
        outline = re.search(r"outline: 3px solid (#[0-9a-fA-F]{6})", rule).group(1)
        halo = re.search(r"box-shadow: 0 0 0 3px (#[0-9a-fA-F]{6})", rule).group(1)
        assert contrast(outline) >= 3.0 and contrast(halo, HEADER) >= 3.0, sheet


def test_the_payload_legend_shows_the_arrows_casing():
    payload = create_app().lab.geometry.payload_fig
    (item,) = [i for i in payload.legend[0].items if i.label.value == "w·v"]
    colours = {r.glyph.line_color for r in item.renderers}
    assert colours == {OKABE_ITO["orange"], EDGES[OKABE_ITO["orange"]]}


@pytest.mark.parametrize("kind", list(TOAST_BACKGROUNDS))
def test_every_toast_stands_4_5_to_1(kind):
    """A toast's white 16 px text on its kind's colour (app/views/notify.py): WCAG AA. Panel's
    warning amber gave 1.6:1, Notyf's green 2.2:1."""
    assert contrast(TOAST_TEXT, TOAST_BACKGROUNDS[kind]) >= 4.5
    page = create_app()
    types = {t["type"]: t["background"] for t in page.notifications.types}
    assert types[kind] == TOAST_BACKGROUNDS[kind]  # the page's notification area uses them


def test_every_status_banner_stands_4_5_to_1():
    """The error, notice and link banners' text on their backgrounds (status.css)."""
    css = attention_lab_assets.read_text("components", "status.css")
    found = {
        name: (fg, bg)
        for name, fg, bg in re.findall(
            r"\.(lab-[\w-]+) \{ color: (#[0-9a-f]{6}); background-color: (#[0-9a-f]{6})", css
        )
    }
    assert set(found) == {"lab-error", "lab-notice", "lab-link-notes"}, found
    for name, (fg, bg) in found.items():
        assert contrast(fg, bg) >= 4.5, (name, fg, bg, contrast(fg, bg))
