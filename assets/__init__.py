"""The lab's static files and shipped weights, installed as the package `attention_lab_assets`.

The folder is `assets/` in a checkout; pyproject.toml maps it to this package name, so
`importlib.resources` finds the same files in a checkout, an editable install and a wheel
installed anywhere (a venv, `--user`, a container), with no search of install prefixes.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

LAB_CSS = "lab.css"
WIDGET_CSS = "lab-widgets.css"
MODELS = "models"


def folder() -> Path:
    """The assets folder on disk (served at /assets; a wheel installs it unzipped)."""
    return Path(str(files(__name__)))


def read_text(*parts: str) -> str:
    return files(__name__).joinpath(*parts).read_text(encoding="utf-8")
