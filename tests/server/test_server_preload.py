"""--preload: the flag and its variable, and a named refusal for a model the lab cannot load."""

from __future__ import annotations

import subprocess
import sys

from labserver import ROOT, clean_env

from app.server.cli import panel_serve_args


def test_preload_from_the_flag_or_the_environment():
    _, options = panel_serve_args(["--preload", "smollm2-135m"], env={})
    assert options.preload == ["smollm2-135m"]
    _, options = panel_serve_args([], env={"ATTENTION_LAB_PRELOAD": "binding, smollm2-135m"})
    assert options.preload == ["binding", "smollm2-135m"]
    _, options = panel_serve_args([], env={})
    assert options.preload == []


def test_an_unknown_model_stops_the_start_up_with_its_name():
    result = subprocess.run(
        [sys.executable, "-m", "app", "--no-show", "--port", "5987", "--preload", "gpt-9"],
        cwd=ROOT,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "--preload gpt-9" in result.stderr and "binding" in result.stderr
