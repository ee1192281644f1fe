"""Why is it sharp? and the Audit in a student's language (issue 44): the engine's findings,
its tests' names and the audit's checks and details are `Phrase`s, shown translated with the
language's numbers, while their English (what a notebook prints) stays as it was."""

from __future__ import annotations

import html

from app.i18n.translator import Translator
from app.state.lab_state import LabState
from app.views.analysis import AuditView, DiagnosisView, diagnosis_text


def test_why_is_it_sharp_says_its_findings_and_tests_in_spanish():
    state = LabState()
    state.temperature = 0.25
    view = DiagnosisView(state, tr=Translator("es"))
    view.run()
    table = view.table.object
    tests = set(table[table.columns[1]])
    assert "multiplicar la temperatura por 4" in tests
    assert "girar solo la consulta 45, 90, 135, 180, 225, 270, 315 grados" in tests
    said = view.result.object
    assert "Temperatura 0,25 -&gt; 1: peso máximo" in said and "Temperature" not in said
    # The English of the same report is the engine's own sentence, word for word.
    report = state.diagnose()
    english = diagnosis_text(report)
    assert html.escape(report.finding("temperature").note) in english


def test_the_audits_checks_and_details_are_translated_with_the_languages_numbers():
    state = LabState()
    spanish, english = AuditView(state, tr=Translator("es")), AuditView(state)
    spanish.run()
    english.run()
    rows = spanish.table.object.values.tolist()
    names = [row[0] for row in rows]
    assert "los pesos suman 1 sobre las claves permitidas" in names
    applicable = [row for row in rows if row[2]]
    assert applicable and all("," in row[2] and "E" in row[2] for row in applicable)
    shift = next(row[3] for row in rows if row[3].startswith("desplazamiento de"))
    assert "los pesos se movieron" in shift
    english_rows = english.table.object.values.tolist()
    assert english_rows[0][0] == "weights sum to 1 over legal keys"
    assert all("e" in row[2] for row in english_rows if row[2])
    chinese = AuditView(state, tr=Translator("zh-Hans"))
    chinese.run()
    assert "允许的键上的权重之和为 1" in chinese.table.object.values[0][0]
