"""The hand-made lab in a student's language (issue 44): the headline, a refused change, a
link's warning, the pairs editor, the export panel and the keyboard help come from the lab's
catalogue with numbers written the language's way, and English stays exactly as it was."""

from __future__ import annotations

from app.i18n.translator import Translator
from app.page.a11y import keys_help
from app.state.lab_state import LabState
from app.state.sources import SourceSwitch
from app.views.export_panel import ExportView
from app.views.pairs import PairsEditor
from app.views.phrases import phrase_text
from app.views.status import StatusView, headline
from app.views.tip_keys import TipKeys, tip_rows


def test_the_headline_is_the_engines_sentence_in_english_and_translated_with_decimal_commas():
    state = LabState()
    snap = state.snapshot
    assert headline(snap) == snap.summary  # English: the engine's own sentence, byte for byte
    spanish = StatusView(SourceSwitch(state), tr=Translator("es"))
    spanish.update(snap)
    said = spanish.summary.text
    assert "recibe" in said and "del peso" in said and "nats" in said
    entropy = f"{snap.entropy:.2f}".replace(".", ",")
    assert entropy in said and f"{snap.entropy:.2f}" not in said
    chinese = headline(snap, Translator("zh-Hans"))
    assert "的权重" in chinese and chinese.endswith("。")


def test_a_refused_temperature_and_every_key_masked_are_said_in_the_students_language():
    state = LabState()
    status = StatusView(SourceSwitch(state), tr=Translator("es"))
    assert not state.try_update(temperature=0.0)
    banner = status.error.object
    assert "Ese cambio no se aplicó" in banner and "fuera de rango" in banner
    assert "0,05" in banner  # the range, written with a decimal comma
    assert state.error.startswith("temperature: 0 is out of range")  # the state keeps English
    state.mask = [False] * len(state.mask)
    assert "todas las claves están enmascaradas" in status.error.object
    arabic = StatusView(SourceSwitch(state), tr=Translator("ar"))
    assert "كل المفاتيح محجوبة" in arabic.error.object


def test_a_links_warnings_keep_their_template_and_are_translated_where_shown():
    state = LabState()
    warnings = state.apply_query_params({"angle": "999", "colour": "red"})
    english = [str(w) for w in warnings]
    assert any("angle: 999 is out of range" in w for w in english)
    spanish = [phrase_text(w, Translator("es")) for w in warnings]
    assert any("fuera de rango" in w and "se usa el valor por defecto" in w for w in spanish)
    assert any("ajuste desconocido 'colour' ignorado" == w for w in spanish)
    status = StatusView(SourceSwitch(state), tr=Translator("zh-Hans"))
    for warning in warnings:
        status.link_warning(warning)
    assert "已忽略" in status.link[0].object and status.link[1].name == "关闭"


def test_the_pairs_editor_the_export_panel_the_tips_and_the_keyboard_help_are_translated():
    state = LabState()
    spanish = Translator("es")
    pairs = PairsEditor(state, tr=spanish)
    assert (pairs.swap.label, pairs.reverse.label) == ("Intercambiar valores", "Invertir los pares")
    export = ExportView(state, tr=spanish)
    assert export.copy_link.label == "Copiar un enlace a este mismo laboratorio"
    export.upload.filename = "mal.json"
    export.upload.value = b"{not json"
    assert "mal.json no se importó: la importación no es JSON válido" in export.message.object
    tips = TipKeys(state, tr=Translator("ar"))
    assert tips.title_text == "تحريك طرف بلوحة المفاتيح"
    assert tip_rows(state, spanish)[0]["label"] == "Consulta q"
    assert tip_rows(state, spanish)[1]["shown"] == "A (1,00; 0,00)"  # decimal commas, then ";"
    assert tip_rows(state)[1]["shown"] == "A (1.00, 0.00)"
    help_ = keys_help(Translator("zh-Hans"))
    assert help_["keys_title"] == "键盘帮助" and "<b>跳到课程</b>" in help_["keys_list"]
    assert keys_help()["keys_title"] == "Keyboard help"


def test_a_backend_the_machine_lacks_and_a_link_value_that_is_no_number_are_translated():
    state = LabState()
    warnings = state.apply_query_params({"d_k": "many"})
    assert str(warnings[0]).startswith("d_k: 'many' is not a whole number")
    assert "no es un número entero" in phrase_text(warnings[0], Translator("es"))
    state.try_update(backend="torch-cuda")
    notice = state.snapshot.notice
    if notice:  # a machine with CUDA computes there instead: nothing to say
        assert str(notice).startswith("torch-cuda is not available here")
        assert "不可用" in phrase_text(notice, Translator("zh-Hans"))


def test_a_held_plot_says_predict_first_in_the_students_language_and_english_as_before():
    from app.views.covered import conceal
    from app.views.weights import WeightsView

    spanish = WeightsView(tr=Translator("es"))
    conceal(spanish, "Weights")
    assert spanish.fit.fig.title.text == "Pesos: predice primero y luego pulsa Medir"
    english = WeightsView()
    conceal(english, "Weights")
    assert english.fit.fig.title.text == "Weights: predict first, then press Measure"


def test_each_pairs_boxes_and_checkbox_are_named_in_the_students_language():
    from app.views.pair_rows import PairRows

    state = LabState()
    rows = PairRows(state, tr=Translator("es"))
    first = rows._rows[0]
    assert (first.kx.name, first.vy.name) == ("clave x", "valor y")
    assert first.legal.name == "A: participa"  # the ":" the page's script cuts at stays
    state.toggle_mask(0)
    assert first.legal.name == "A: enmascarada"
    assert PairRows(state)._rows[0].legal.name == "A: masked"


def test_the_placeholders_below_the_first_screen_and_the_pairs_names_speak_the_language():
    """Strings a view reads with `tr.gettext(...)` are extracted too (tools/translations.py):
    the analysis placeholder, its button, an unnamed pair, a refused swap."""
    from types import SimpleNamespace

    from app.page.deferred import Deferred
    from app.page.lab_page import create_app
    from app.views.pairs import pair_labels

    page = create_app(LabState(), language="es")
    analysis = page.lab.parts.get("analysis")
    assert isinstance(analysis, Deferred) and not analysis.built
    signal = analysis.signal
    assert signal.title == "Entropía, jacobiano de softmax y d_k"
    assert signal.button == "Dibujarlas ahora" and "desplazarte" in signal.note
    two_keys_one_label = SimpleNamespace(keys=[(1, 0), (0, 1)], labels=["A"])
    assert pair_labels(two_keys_one_label, Translator("zh-Hans")) == ["A", "第 2 对"]
