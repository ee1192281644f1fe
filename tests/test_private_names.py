"""A private name (one leading underscore) stays in its module: no module of app/, engine/ or
tools/ imports one from another of ours, reads one off another of our modules, or reads a private
attribute that only another of our files defines (`run._pass` from a cache). What two modules
share is public, or a method. app/patches/ and tools/bokeh_internals.py reach into Panel's and
Bokeh's privates by design (docs/patches.md); the rule is about our own names."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "engine", "tools")
LIBRARY_REACHES = ("app/patches/", "tools/bokeh_internals.py")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_of(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _absolute(path: Path, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    package = package[: len(package) - (node.level - 1)]
    return ".".join([*package, *([node.module] if node.module else [])])


def crossings(sources: dict[Path, str]) -> list[str]:
    """Each use of a private name of ours outside the file that defines it."""
    trees = {path: ast.parse(text) for path, text in sources.items()}
    modules = {_module_of(path) for path in sources}
    defined: dict[str, set[Path]] = defaultdict(set)  # private attribute -> files defining it
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined[node.name].add(path)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                defined[node.attr].add(path)
    found = []
    for path, tree in trees.items():
        rel = path.relative_to(ROOT).as_posix()
        own = _module_of(path)
        aliases = {}  # a name bound to one of our modules -> that module
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = _absolute(path, node)
                for alias in node.names:
                    if source in modules and source != own and _private(alias.name):
                        found.append(f"{rel}:{node.lineno} imports {source}.{alias.name}")
                    if f"{source}.{alias.name}" in modules:
                        aliases[alias.asname or alias.name] = f"{source}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules and alias.asname:
                        aliases[alias.asname] = alias.name
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and _private(node.attr)):
                continue
            value = node.value
            if isinstance(value, ast.Name) and aliases.get(value.id, own) != own:
                found.append(f"{rel}:{node.lineno} reads {aliases[value.id]}.{node.attr}")
            elif (
                not rel.startswith(LIBRARY_REACHES)
                and not (isinstance(value, ast.Name) and value.id in ("self", "cls"))
                and defined.get(node.attr)
                and path not in defined[node.attr]
            ):
                found.append(f"{rel}:{node.lineno} reads {ast.unparse(node)}")
    return sorted(found)


def test_no_private_name_of_ours_is_used_outside_its_file():
    sources = {
        path: path.read_text(encoding="utf-8")
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }
    found = crossings(sources)
    assert found == [], "private names used outside their module (make them public):\n" + (
        "\n".join(found)
    )


def test_the_check_finds_each_kind_of_crossing():
    """The test can fail: an import, a module attribute and an object's attribute, each caught."""
    lib, user = ROOT / "engine" / "lib_.py", ROOT / "app" / "user_.py"
    sources = {
        lib: "def _helper():\n    pass\n\nclass Box:\n    def __init__(self):\n        self._inner = 1\n",
        user: (
            "from engine.lib_ import _helper\nfrom engine import lib_\n\n"
            "def use(box):\n    return lib_._helper(), box._inner, box.public\n"
        ),
    }
    found = crossings(sources)
    assert sorted(line.split(" ", 1)[1] for line in found) == [
        "imports engine.lib_._helper",
        "reads box._inner",
        "reads engine.lib_._helper",
    ], found
