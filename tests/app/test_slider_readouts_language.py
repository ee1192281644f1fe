"""The sliders' own value readouts (app/views/controls.py, app/js/slider_ticks.js) write the
page's decimal sign: 1,00 in Spanish; English, Chinese and Arabic keep the point, as Babel's
locales (and the lab's text) do. The readout scripts are run in Node as the browser runs them."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from app.i18n.translator import Translator
from app.state.lab_state import LabState
from app.state.settings_schema import FIELDS
from app.views.controls import CandidateControls, ControlsPanel

TITLES = {n: n for n in FIELDS["scenario"].choices}


def _readout(formatter, tick: float) -> str:
    """What BokehJS shows for `tick`: the formatter's body run with its args."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH")
    args = dict(formatter.args)
    names = ", ".join(["tick", *args])
    values = ", ".join(json.dumps(v) for v in [tick, *args.values()])
    script = f"console.log((function({names}) {{ {formatter.code} }})({values}))"
    return subprocess.run(
        [node, "-e", script], capture_output=True, text=True, check=True, timeout=30
    ).stdout.strip()


def test_a_spanish_sidebar_reads_its_sliders_with_a_decimal_comma():
    spanish = ControlsPanel(LabState(), scenario_titles=TITLES, tr=Translator("es"))
    assert _readout(spanish.temperature.format, 0.0) == "1,00"  # log10 of a temperature of 1
    assert _readout(spanish.temperature.format, -0.60206) == "0,250"
    assert _readout(spanish.angle.format, 22.5) == "22,5"


@pytest.mark.parametrize("code", ["en", "zh-Hans", "ar"])
def test_english_chinese_and_arabic_keep_the_point(code):
    panel = ControlsPanel(LabState(), scenario_titles=TITLES, tr=Translator(code))
    assert _readout(panel.temperature.format, 0.0) == "1.00"
    assert panel.angle.format is None or not hasattr(panel.angle.format, "code")


def test_the_backend_pickers_warnings_are_in_the_pages_language():
    notes = {"torch-cpu": "torch is not installed"}
    spanish = CandidateControls(
        LabState(), backend_notes=notes, unchecked=("torch-cuda",), tr=Translator("es")
    )
    assert "torch-cpu (no disponible aquí)" in spanish.backend.options
    assert spanish.backend.options["torch-cuda (se comprueba al elegirlo)"] == "torch-cuda"
    assert "**torch-cpu** no está disponible aquí: torch is not installed" in (
        spanish.backend_note.object
    )
    english = CandidateControls(LabState(), backend_notes=notes, unchecked=("torch-cuda",))
    assert "torch-cuda (checked when picked)" in english.backend.options
