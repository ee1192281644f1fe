"""The runtime packages need only the core dependencies; the tools in tools/ need theirs from the
`tools` extra, and nothing installed imports the tools."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# tests/browser (imported as `browser`) holds the served-lab-in-Chromium helper the benchmarks share.
OURS = {"app", "engine", "tools", "tests", "browser", "attention_lab_assets", "__future__"}
# Import names that differ from their distribution's name; tornado comes with bokeh.
DISTRIBUTION = {"yaml": "pyyaml", "tornado": "bokeh", "array_api_compat": "array-api-compat"}
# Optional at run time, each behind its own extra and imported only when asked for.
OPTIONAL = {"torch", "gguf", "tokenizers"}


def _names(specs) -> set[str]:
    names = set()
    for spec in specs:
        name = spec.split(";")[0]
        for mark in "<>=!~[ ":
            name = name.split(mark)[0]
        names.add(name.strip().lower())
    return names


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _third_party_imports(folder: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module.split(".")[0]]
            else:
                continue
            for name in names:
                if name not in sys.stdlib_module_names and name not in OURS:
                    found.setdefault(DISTRIBUTION.get(name, name), set()).add(
                        str(path.relative_to(ROOT))
                    )
    return found


def test_the_runtime_packages_import_only_core_and_optional_dependencies():
    core = _names(_project()["dependencies"]) | OPTIONAL
    for package in ("app", "engine"):
        imports = _third_party_imports(ROOT / package)
        missing = {name: where for name, where in imports.items() if name not in core}
        assert missing == {}, f"{package}/ imports what `pip install .` lacks: {missing}"


def test_the_tools_get_what_they_import_from_the_tools_extra():
    project = _project()
    extras = project["optional-dependencies"]
    # The `compare` extra: transformers, for tools/bench_lm.py's side-by-side (optional there).
    have = _names(project["dependencies"]) | _names(extras["tools"]) | _names(extras["compare"])
    imports = _third_party_imports(ROOT / "tools")
    assert "psutil" in imports  # the one dependency that moved out of the runtime
    missing = {name: where for name, where in imports.items() if name not in have | OPTIONAL}
    assert missing == {}, f"tools/ imports what `pip install .[tools]` lacks: {missing}"


def test_nothing_installed_imports_the_tools():
    for package in ("app", "engine"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module:
                    assert not node.module.startswith("tools"), f"{path} imports {node.module}"
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        assert not alias.name.startswith("tools"), f"{path} imports tools"
