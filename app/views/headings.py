"""Headings at their place in the page's outline, drawn at the size they had.

The page has one `h1` (the title, app/page/a11y.py); every section below it is an `h2`: a
lesson step's title, the class's cards, the Causal map tab's parts and the sidebar's groups
("Route", "Regime", ...). They were `h3` and `h4`, chosen for their size, and a screen
reader's list of headings skipped a level. The level says where a section sits; these
stylesheets keep the size each had, and a Markdown h2 gets no "¶" link (Panel adds one to
h1 and h2: a Tab stop in every heading) (a title as an `h3`, a sidebar group as an `h4`).
"""

from __future__ import annotations

import html

import panel as pn

import attention_lab_assets

# A title (a lesson step, a card, a tab's part): the size and margins of the h3 it was.
TITLE_CSS = attention_lab_assets.read_text("components", "heading-title.css")
CARD_TITLE_STYLE = "font-size: 1.17em; font-weight: 700; margin-block: 0.2em"
# A sidebar group: the size and margins of the h4 it was.
GROUP_CSS = attention_lab_assets.read_text("components", "heading-group.css")


def group_heading(text: str, margin=(8, 10, 0, 10)) -> pn.pane.Markdown:
    """A group of settings in the sidebar ("Route"): an h2 the size of a bold line."""
    return pn.pane.Markdown(
        f"## {text}", margin=margin, stylesheets=[GROUP_CSS], disable_anchors=True
    )


def card_header(title: str) -> pn.pane.HTML:
    """A Card's header as Panel draws its title (an h3), but an h2: pass as `header=`. The
    style is inline: the card's own stylesheet sizes a title's heading after a pane's."""
    return pn.pane.HTML(
        f'<h2 style="{CARD_TITLE_STYLE}">{html.escape(title)}</h2>',
        css_classes=["card-title"],
        margin=(5, 0),
    )
