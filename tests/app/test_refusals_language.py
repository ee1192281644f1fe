"""The rarer refusals of a link or an import (app/state/settings_schema.py, lab_state.py) are
`Problem`s: English as before in the state, said in the student's language where shown."""

from __future__ import annotations

import pytest

from app.i18n.translator import Translator
from app.state.lab_state import LabState
from app.state.sources import SourceSwitch
from app.views.export_panel import ExportView
from app.views.phrases import phrase_text
from app.views.status import StatusView


def test_a_links_control_character_and_malformed_pair_are_refused_in_spanish():
    state = LabState()
    warnings = state.apply_query_params({"labels": '["A\\u0007","B","C"]', "keys": "1,0;0,x"})
    english = [str(w) for w in warnings]
    assert (
        english[0] == "labels[0]: label contains the control character '\\x07'; using the default"
    )
    spanish = [phrase_text(w, Translator("es")) for w in warnings]
    assert spanish[0].startswith("labels[0]: la etiqueta contiene el carácter de control '\\x07'")
    assert spanish[1].startswith("keys[1]: 'x' no es un número")


def test_an_import_of_the_wrong_json_type_reaches_the_chinese_page_in_chinese():
    state = LabState()
    with pytest.raises(ValueError, match="^temperature: expected a number, got a boolean$"):
        state.from_json('{"temperature": true}')
    export = ExportView(state, tr=Translator("zh-Hans"))
    export.upload.filename = "bad.json"
    export.upload.value = b'{"labels": [1, "B", "C"]}'
    assert "labels[0]：给出的是 数字 1；标签必须是文本" in export.message.object
    export.upload.value = b"[1, 2]"
    assert "导入内容必须是 JSON 对象，收到的是 列表" in export.message.object


def test_an_unknown_setting_in_an_edit_is_said_in_arabic_on_the_error_banner():
    state = LabState()
    status = StatusView(SourceSwitch(state), tr=Translator("ar"))
    assert not state.try_update(colour=1)
    assert state.error == "colour: unknown setting"
    assert "إعداد غير معروف" in status.error.object
