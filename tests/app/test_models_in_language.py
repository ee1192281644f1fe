"""The trained-model pages in a student's language (issue 44): the model panel, the head grid
and the experiments table speak the session's language, write numbers its way, name a head the
one way the catalogue does, and keep the model's own tokens and example texts as they are."""

from __future__ import annotations

from app.i18n.head_words import head_words
from app.i18n.translator import Translator
from app.state.model_state import ModelState
from app.views.head_axes import token_marks_words
from app.views.head_grid import HeadGridView
from app.views.model_panel import ModelMainView, ModelPanel, experiments_table

PDI, FSI = "\u2069", "\u2068"


def test_the_model_panel_and_the_grid_speak_spanish_and_keep_the_models_text():
    spanish, m = Translator("es"), ModelState()
    panel, grid = ModelPanel(m, tr=spanish), HeadGridView(m, tr=spanish)
    grid.update()
    assert panel.model.label == "Modelo" and panel.text.label.startswith("Programa")
    assert list(panel.layer.options)[0] == "capa 0"
    assert panel.head_note.object.startswith("Abierta primero: capa ")
    assert "la respuesta es el token siguiente" in panel.query.note.object
    assert grid.grid.title.text == "Todas las cabezas a la vez"
    assert grid.caption.object.startswith("La celda con borde es la cabeza abierta")
    # The examples' texts are what the model reads: their menu entries keep them whole.
    assert m.text in panel.example.options.values()
    # A found head's measure with a decimal comma, rounded as the English is.
    panel.finder.value = "sharpest"
    found = [label for label in panel.found.options if label.startswith("capa")]
    assert found and all("," in label.split(": ")[1] for label in found)


def test_the_experiments_table_names_its_columns_and_writes_its_numbers_in_chinese():
    chinese, m = Translator("zh-Hans"), ModelState()
    main = ModelMainView(m, tr=chinese)
    assert main.run.label == "运行"
    m.run_experiment(next(iter(main.experiment.options.values())))
    table = experiments_table(m.experiments, chinese)
    assert '<th class="cell">实验</th>' in table and "P(正确答案)" in table
    english = experiments_table(m.experiments)
    assert '<th class="cell">experiment</th>' in english and "P(right answer)" in english


def test_arabic_keeps_a_heads_name_in_its_own_isolate_and_the_token_marks_translated():
    arabic = Translator("ar")
    name = head_words(13, 8, arabic)
    assert name.startswith(FSI) and name.endswith(PDI) and "13" in name and "8" in name
    assert head_words(13, 8) == "layer 13 head 8"  # English: exactly as before
    marks = token_marks_words(["␣loan @0", "↳ア @1"], arabic)
    assert "مسافة قبل الكلمة" in marks and "ア" in marks
    assert token_marks_words(["␣loan"]) == "␣ = a space before the word"


def test_the_causal_maps_price_and_the_estimates_words_follow_the_language():
    from app.state.estimate_words import order_words, probability_factor
    from app.state.map_cost import MapCost, price_words

    spanish = Translator("es")
    cost = MapCost(forwards=540, forward_s=0.25)
    assert price_words(cost, 270, spanish) == (
        "Medir todas las cabezas quita cada una de las 270 cabezas por turno: unas 540 "
        "ejecuciones del modelo con este texto (una tardó 0,2 s aquí), así que tarda unos 2 min "
        "20 s. La estimación de arriba ya está ahí; puedes detenerlo en cualquier momento."
    )
    assert price_words(cost, 270).startswith("Measuring every head removes each of the 270")
    assert "(una tardó 0,2 s aquí)" in price_words(cost, 270, spanish)  # as Python rounds 0.25
    assert order_words(0.91, spanish).startswith("casi el mismo orden (correlación de rangos 0,91")
    assert probability_factor(-0.69, spanish) == "× 0,50"
    assert probability_factor(-0.69) == "× 0.50"


def test_a_right_to_left_token_reads_in_its_own_order_inside_its_label():
    from engine.heads import token_labels

    labels = token_labels(["ال", " ق", "The", " bank"])
    assert labels[0] == f"{FSI}ال{PDI} @0" and labels[1] == f"{FSI}␣ق{PDI} @1"
    assert labels[2:] == ("The @2", "␣bank @3")  # a left-to-right token exactly as before


def test_a_refused_head_is_named_in_the_students_language_and_in_english_as_before():
    m = ModelState()
    assert not m.request(layer=99)
    assert m.error == "layer: 99 is not a layer of this model (0..1)"
    assert m.error_text(Translator("es")) == "layer: 99 no es una capa de este modelo (0..1)"


def test_the_status_banner_shows_a_model_refusal_in_the_students_language():
    from app.state.lab_state import LabState
    from app.state.sources import MODEL, SourceSwitch
    from app.views.status import StatusView

    sources = SourceSwitch(LabState())
    sources.source = MODEL
    spanish, english = StatusView(sources, tr=Translator("es")), StatusView(sources)
    assert not sources.model.request(layer=99)
    assert "99 no es una capa de este modelo" in spanish.error.object
    assert "99 is not a layer of this model" in english.error.object


def test_a_trained_heads_headline_says_the_models_answer_in_the_students_language():
    from app.views.status import headline

    snap = ModelState().snapshot
    english = headline(snap)
    assert english == snap.summary and "; the model answers " in english
    answer = english.rsplit("; the model answers ", 1)[1].split(" (")[0]
    spanish, chinese = headline(snap, Translator("es")), headline(snap, Translator("zh-Hans"))
    assert f"; el modelo responde {answer} (" in spanish and "entropía 0,00 nats" in spanish
    assert chinese.endswith("）。") and f"模型的回答是 {answer}" in chinese


def test_an_experiments_edit_and_note_are_written_in_the_students_language():
    """The engine's edit descriptions and the row's note reach the table as Phrases (issue 44):
    English byte for byte, Spanish with a decimal comma, nested head names translated."""
    from app.views.phrases import phrase_text
    from engine.trained import load
    from engine.trained.edits import HeadTemperature, MaskPosition
    from engine.trained.experiments import run_experiment

    assert str(HeadTemperature(1, 2, 0.25).describe()) == "temperature x0.25 (layer 1 head 2)"
    spanish = Translator("es")
    assert phrase_text(HeadTemperature(1, 2, 0.25).describe(), spanish) == (
        "temperatura x0,25 (capa 1 cabeza 2)"
    )
    every = MaskPosition(layer=None, head=None, position=3).describe()
    assert phrase_text(every, Translator("zh-Hans")) == "遮蔽位置 3（所有头）"
    model = load("binding")
    text = model.examples[next(iter(model.examples))]
    row = run_experiment(model, text, "weight_vs_responsibility")
    assert str(row.note).startswith(f"top weight {row.details['top_weight']:.3f} at position")
    table = experiments_table([row], spanish)
    assert "peso máximo " in table and f"{row.details['top_weight']:.3f}".replace(".", ",") in table
    assert "valor de la posición" in table and "x0 (capa" in table  # the edit, in Spanish
    assert "top weight" not in table and "value of position" not in table


def test_the_suggested_change_and_a_typed_ones_differences_are_in_the_students_language():
    from app.state.causal_state import describe_change
    from app.views.phrases import phrase_text
    from engine.trained import load
    from engine.trained.counterfactual import find_change

    model = load("binding")
    change = find_change(model, "a=3; b=5; ?a")
    assert str(change.description) == f"a=3 became a={change.new}"
    assert phrase_text(change.description, Translator("es")) == f"a=3 pasó a a={change.new}"
    typed = describe_change(model, "a=3; b=5; ?a", "a=4; b=6; ?a")
    assert typed == "3 became 4 at token 3; 5 became 6 at token 7"
    assert (
        phrase_text(typed, Translator("es")) == "3 pasó a 4 en el token 3; 5 pasó a 6 en el token 7"
    )
    assert phrase_text(typed, Translator("zh-Hans")) == (
        "第 3 个词元处 3 变成了 4；第 7 个词元处 5 变成了 6"
    )


def test_the_model_plots_in_words_are_written_in_the_students_language():
    from app.state.head_tables import pattern_row_table
    from app.views.plot_text import table_html

    table = pattern_row_table(["a", " b"], [[1.0, 0.0], [0.5, 0.5]], 1, 13, 8)
    assert table.description.startswith("Layer 13 head 8, its row for the query ␣b (position 1)")
    spanish = table_html(table, Translator("es"))
    assert "capa 13 cabeza 8, su fila para la consulta ␣b (posición 1)" in spanish
    assert '<th scope="col">clave</th>' in spanish and "0,500" in spanish
    assert "its row" not in spanish and "position 1" not in spanish


def test_the_head_grid_estimate_and_receipt_tables_name_heads_and_warnings_in_spanish():
    from app.state.chart_tables import estimate_table, head_grid_table, receipt_table
    from app.views.plot_text import table_html
    from engine import trained

    spanish, m = Translator("es"), ModelState()
    grid = head_grid_table(m.head_grid(), m.open_head)
    layer, head = m.open_head
    assert f"layer {layer} head {head} (open)" in {row[0] for row in grid.rows}  # English
    grid_html = table_html(grid, spanish)
    assert f'<th scope="row">capa {layer} cabeza {head} (abierta)</th>' in grid_html
    assert f"(capa {layer} cabeza {head})" in grid_html  # the description names the open head
    assert "layer " not in grid_html and "(open)" not in grid_html
    amap = trained.load("binding").attribution_map("a=5; b=7; a=3; ?a", verify=2)
    receipt = receipt_table(amap)
    assert {row[4] for row in receipt.rows} == {"saturated, large step"}  # English as before
    receipt_html = table_html(receipt, spanish)
    assert receipt_html.count("<td>saturada, paso grande</td>") == 2
    estimate_html = table_html(estimate_table(amap), spanish)
    assert "capa 0 cabeza 1" in estimate_html and "layer " not in estimate_html
    for html_ in (receipt_html, estimate_html):
        assert "saturated" not in html_ and "layer " not in html_


def test_the_find_heads_table_is_written_in_chinese_and_arabic():
    from app.state import copy_tables as ct
    from app.views.plot_text import table_html

    m = ModelState(find="first_token")
    scores = ct.copy_scores(m.run)
    table = ct.ranked_table(scores, "first_token", m.open_head)
    assert table.title == "Find heads: First token (attention sink)"  # English as before
    assert table.description.startswith("Every head scored by the share of its attention on")
    layer, head = m.open_head
    opened = f"layer {layer} head {head} (open)"
    assert opened in {row[1] for row in table.rows}
    chinese = table_html(table, Translator("zh-Hans"))
    assert "<caption>查找注意力头：第一个词元（注意力汇聚点）。" in chinese
    assert '<th scope="col">排名</th>' in chinese and "（已打开）" in chinese
    assert "Find heads" not in chinese and "(open)" not in chinese and "layer " not in chinese
    arabic = table_html(table, Translator("ar"))
    assert '<th scope="col">الترتيب</th>' in arabic
    # The open head's Arabic name keeps its own isolate inside the sentence's (its words in order).
    name = head_words(layer, head, Translator("ar"))
    assert name.startswith(FSI) and f"\u2066{name}{PDI} (مفتوح)" in arabic
    assert "Every head" not in arabic and "layer " not in arabic
    none = ct.ranked_table(scores[:0], "induction", m.open_head)
    assert "repeats no token" in none.description
    assert "repeats no token" not in table_html(none, Translator("es"))
