"""The plots in the page's language (the plots catalogue, issue 44): a Spanish page's charts and
their tables are Spanish with a decimal comma, ticks included; an Arabic page's canvas text
reads right to left while its axes stay left to right; a right-to-left token keeps its own
order on the planes and the bar charts; English is what it always was."""

from __future__ import annotations

from bokeh.models import CustomJSTickFormatter, NumeralTickFormatter

from app.i18n.translator import ENGLISH, Translator
from app.page.lab_page import create_app
from app.state.lab_state import LabState
from app.state.scene_tables import entropy_table, number, weights_table
from app.views.label_layout import FSI, PDI, glyphs, isolated
from app.views.plot_text import table_html
from app.views.style import RLI

SPANISH, ARABIC = Translator("es"), Translator("ar")
HELLO = "مرحبا"  # an Arabic key name, as a student may type one


def test_a_table_in_words_is_spanish_with_its_numbers_written_the_spanish_way():
    state = LabState()
    assert state.try_update(temperature=0.5)
    table = weights_table(state.snapshot)
    spanish, english = table_html(table, SPANISH), table_html(table)
    assert english == table_html(table, ENGLISH) and "Weights and |w·v| shares" in english
    assert "<caption>Pesos y partes de |w·v|. El peso w de cada clave" in spanish
    assert '<th scope="col">peso</th>' in spanish and "Weights" not in spanish
    # The same rounding, another decimal sign: 42.4% in English is 42,4% in Spanish.
    cells = [row[1] for row in table.rows]
    assert all(c.endswith("%") and "." in c for c in cells)
    for cell in cells:
        assert f"<td>{cell.replace('.', ',')}</td>" in spanish
    entropy = table_html(entropy_table(state.snapshot), SPANISH)
    assert "0,500 (ahora)" in entropy and "0.500" not in entropy
    assert number(float("nan")).text(SPANISH) == "no es un número"


def test_a_spanish_page_draws_its_charts_in_spanish_with_decimal_commas():
    page = create_app(language="es")
    weights, logits = page.lab.weights, page.lab.logits
    assert weights.figure.title.text.startswith("Pesos")
    assert weights.figure.xaxis[0].axis_label.startswith("parte")
    legend = [item.label.value for item in weights.figure.legend.items]
    assert legend == ["peso w", "parte de |w·v|"]
    assert logits.figure.xaxis[0].axis_label == "logit"
    # BokehJS formats Numbro's en-US only: the ticks are written with the Spanish sign.
    for axis in (weights.figure.xaxis[0], logits.figure.xaxis[0]):
        assert isinstance(axis.formatter, CustomJSTickFormatter)
        assert axis.formatter.args["sign"] == ","
    english = create_app(language="en").lab.weights.figure
    assert english.title.text.startswith("Weights")
    assert isinstance(english.xaxis[0].formatter, NumeralTickFormatter)


def test_an_arabic_page_reads_right_to_left_on_the_canvas_and_keeps_tokens_in_order():
    state = LabState()
    assert state.try_update(labels=[HELLO, "B", "C"])
    page = create_app(state, language="ar")
    lab = page.lab
    title = lab.weights.figure.title.text
    assert title.startswith(RLI) and title.endswith(PDI) and "الأوزان" in title
    legend = [item.label.value for item in lab.weights.figure.legend.items]
    assert all(label.startswith(RLI) for label in legend)
    # The Arabic key reads in its own order beside its bar and its arrows' labels.
    rows = lab.weights.figure.yaxis[0].major_label_overrides
    assert rows[0] == f"{FSI}{HELLO}{PDI}" and rows[1] == "B"
    tags = lab.parts.get("geometry").geometry.data["tag"]
    assert f"{FSI}{HELLO}{PDI}" in tags and "B" in tags


def test_isolating_a_token_keeps_its_position_and_marks_outside_and_leaves_latin_alone():
    assert isolated(f"{HELLO} @3") == f"{FSI}{HELLO}{PDI} @3"
    assert isolated(f"␣{HELLO}@3 ✕") == f"{FSI}␣{HELLO}{PDI}@3 ✕"
    assert isolated("␣loan @4 (masked)") == "␣loan @4 (masked)"
    # A CJK character takes about an em: the labels' boxes and the titles' fit count it so.
    assert glyphs("你好") > 3 and glyphs("ab") == 2 and glyphs(f"{FSI}ab{PDI}") == 2
