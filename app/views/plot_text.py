"""The plots in words on the page: each plot's description and data table, visually hidden.

A screen reader reaches the tables where they sit in the page, after the plots they describe
(a table's caption names its plot and says what it shows). They are hidden from sight but not
from the accessibility tree. The tables themselves come from the state (`SceneTable`,
app/state/scene_tables.py, app/state/head_tables.py); this pane only writes them as HTML,
sending them again only when a number changed.
"""

from __future__ import annotations

import html

import panel as pn

from app.i18n.head_words import in_line
from app.i18n.translator import ENGLISH, Translator
from app.state.scene_tables import in_language

# In the accessibility tree, out of sight and out of the layout (an absolute box takes no cell
# of the stage's grid); inline styles, not a stylesheet: no model more per page.
HIDDEN = {
    "position": "absolute",
    "width": "1px",
    "height": "1px",
    "overflow": "hidden",
    "clip-path": "inset(50%)",
    "white-space": "nowrap",
}


def table_html(table, tr: Translator = ENGLISH) -> str:
    """One `SceneTable` as an HTML table in `tr`'s language, every text escaped (labels come
    from links)."""

    def esc(text) -> str:
        return html.escape(in_language(text, tr))

    head = "".join(f'<th scope="col">{esc(c)}</th>' for c in table.columns)
    body = "".join(
        "<tr>"
        + f'<th scope="row">{esc(row[0])}</th>'
        + "".join(f"<td>{esc(cell)}</td>" for cell in row[1:])
        + "</tr>"
        for row in table.rows
    )
    _ = tr.gettext
    # The title and description each in its own first-strong isolate: in Arabic the caption's
    # placeholders sit in left-to-right isolates, which would reorder their words.
    # TRANSLATORS: a plot's table's caption: the plot's title, then what the table shows.
    caption = _("{title}. {description}").format(
        title=in_line(in_language(table.title, tr), tr),
        description=in_line(in_language(table.description, tr), tr),
    )
    return (
        f'<table data-plot="{html.escape(table.name)}"><caption>{html.escape(caption)}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def tables_html(label: str, tables, tr: Translator = ENGLISH) -> str:
    inner = "".join(table_html(t, tr) for t in tables)
    return f'<section aria-label="{html.escape(label)}">{inner}</section>' if inner else ""


class PlotText:
    """A visually hidden pane that holds the tables of some plots, named by `label` (in the
    page's language), written in `tr`'s language."""

    def __init__(self, label: str, tr: Translator = ENGLISH):
        self.label, self.tr = label, tr
        self.pane = pn.pane.HTML(
            "",
            css_classes=["lab-plot-text"],
            styles=HIDDEN,
            width=1,
            height=1,
            margin=0,
        )

    def show(self, tables) -> None:
        text = tables_html(self.label, tables, self.tr)
        if self.pane.object != text:
            self.pane.object = text

    def __panel__(self):
        return self.pane
