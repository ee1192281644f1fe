"""`python -m app.loadtest` runs after the README's plain install: what it imports is a core
dependency, not only part of the test extra."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Import names that differ from their distribution's name.
DISTRIBUTION = {"yaml": "pyyaml"}


def _core_dependencies() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = set()
    for spec in project["dependencies"]:
        name = spec.split(";")[0]
        for mark in "<>=!~[ ":
            name = name.split(mark)[0]
        names.add(name.strip().lower())
    return names


def test_everything_the_load_tool_imports_is_installed_by_pip_install_dot():
    tree = ast.parse((ROOT / "app" / "loadtest.py").read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.add(node.module.split(".")[0])
    third_party = {
        name
        for name in imported
        if name not in sys.stdlib_module_names and name not in ("app", "engine", "__future__")
    }
    assert "psutil" in third_party  # the one that used to live in the test extra
    core = _core_dependencies()
    # tornado comes with bokeh (a Bokeh server runs on it).
    missing = sorted(
        n for n in third_party if DISTRIBUTION.get(n, n) not in core and n != "tornado"
    )
    assert missing == [], f"app/loadtest.py imports {missing}, which `pip install -e .` lacks"
