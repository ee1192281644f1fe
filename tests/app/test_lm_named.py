"""SmolLM2's weights named where the model is chosen and in the docs, and the load time written
where it is promised, with --preload advised for a class (issue 40)."""

from __future__ import annotations

from pathlib import Path

from app.server import cli
from engine import trained
from engine.trained import smollm

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_model_menu_names_the_instruct_weights():
    assert smollm.GGUF_FILE.startswith("SmolLM2-135M-Instruct.")
    titles = {name: title for name, title, _ok, _why in trained.available()}
    assert titles[smollm.NAME].startswith("SmolLM2-135M-Instruct ")


def test_the_docs_name_the_weights_and_the_measured_load():
    models = (DOCS / "models.md").read_text(encoding="utf-8")
    assert "**SmolLM2-135M-Instruct**" in models and "about 5 s" not in models
    assert "9.5 s cold" in models and "tools.time_lm_load" in models
    perf = (DOCS / "performance.md").read_text(encoding="utf-8")
    assert "| cold (the first after a reboot) | 9.5 s |" in perf
    teaching = (DOCS / "teaching.md").read_text(encoding="utf-8")
    assert "attention-lab --preload smollm2-135m" in teaching


def test_the_advised_flag_exists():
    options = cli.build_parser().parse_args(["--preload", "smollm2-135m", "--no-show"])
    assert options.preload == ["smollm2-135m"]
