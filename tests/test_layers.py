"""The house's rules, read from the code: each module has a name of its own, imports run one
way only, down the layers that docs/architecture.md draws, and no modules import each other in a
ring."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "engine", "tools")
# Lower layers first; a module may import its own layer and any layer below it, never above.
LAYERS = (
    ("engine",),
    ("app.js",),  # the browser scripts' loader: imports nothing of the app
    ("app.i18n",),  # the languages and catalogues: Babel only (the state marks its labels)
    ("app.patches",),
    ("app.state", "app.classroom"),  # the class store is Panel-free, beside the state
    ("app.lessons",),
    ("app.views",),
    ("app.page",),
    ("app.server",),
    ("tools",),
)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts)] = path
    return found


def _layer(module: str) -> int | None:
    for rank, names in enumerate(LAYERS):
        if any(module == n or module.startswith(n + ".") for n in names):
            return rank
    return None


def _absolute(path: Path, node: ast.ImportFrom) -> str | None:
    """The module a `from ... import` names, a relative one resolved against `path`'s package."""
    if node.level == 0:
        return node.module
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]  # a/b/c.py, a/b/__init__.py: a.b
    if node.level > 1:
        package = package[: len(package) - (node.level - 1)]
    return ".".join([*package, *([node.module] if node.module else [])]) or None


def _imports(path: Path) -> set[str]:
    """Every name a module imports: at its top, inside a function or under `if TYPE_CHECKING:`
    (a type-only import still ties the two modules together for a reader), absolute or
    relative."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (module := _absolute(path, node)):
            # `from a.b import c`: c is a module of a.b, or a name a.b defines (a.b, then).
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def test_no_two_modules_share_a_name():
    stems = Counter(
        path.stem for path in _modules().values() if path.stem not in ("__init__", "__main__")
    )
    shared = sorted(name for name, count in stems.items() if count > 1)
    assert shared == [], f"modules that share a name: {shared}"


def test_imports_run_down_the_layers_only():
    wrong = []
    for module, path in _modules().items():
        own = _layer(module)
        if own is None:
            continue  # app/__init__.py and app/__main__.py sit on top of every layer
        for name in _imports(path):
            target = _layer(name)
            if target is not None and target > own:
                wrong.append(f"{module} imports {name}")
    assert wrong == [], "imports that run up the layers:\n" + "\n".join(sorted(wrong))


# The packages whose modules may not import each other in a ring, whichever way the import is
# written (relative, inside a function, type-only).
CYCLE_FREE = ("app", "engine", "tools")


def _import_graph(packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Module -> the modules of `packages` it imports (a package by its __init__), wherever in
    the module the import stands: a lazy or a type-only import closes a ring as surely as a
    top-level one."""
    modules = {
        module.removesuffix(".__init__"): path
        for module, path in _modules().items()
        if module.split(".")[0] in packages
    }
    graph = {}
    for module, path in modules.items():
        targets = set()
        for name in _imports(path):
            target = name if name in modules else name.rpartition(".")[0]
            if target in modules and target != module:
                targets.add(target)
        graph[module] = targets
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_modules_import_each_other_in_a_ring():
    rings = _cycles(_import_graph(CYCLE_FREE))
    assert rings == [], "modules that import each other (directly or round a ring):\n" + "\n".join(
        " <-> ".join(ring) for ring in rings
    )


def test_the_ring_finder_finds_a_ring():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_state_the_lessons_and_the_class_store_run_without_panel_or_bokeh():
    """A notebook or a plain test drives them: no web import below the views."""
    offenders = [
        f"{module} imports {name}"
        for module, path in _modules().items()
        if module.startswith(("app.state", "app.lessons", "app.classroom"))
        for name in _imports(path)
        if name.split(".")[0] in ("panel", "bokeh")
    ]
    assert offenders == [], offenders


# A CSS rule: a selector's last character, then a block that opens with a declaration.
_CSS_RULE = re.compile(r"[\w\-\]\)\*>]\s*\{\s*[a-z-]+\s*:\s*[^;{}]+;?[^{}]*\}")


def test_no_stylesheet_is_written_in_a_python_string():
    """Page and component CSS live in assets/ (components/ for shadow roots), read at import."""
    found = []
    for module, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if _CSS_RULE.search(node.value):
                    found.append(f"{module}:{node.lineno}")
    assert found == [], f"CSS written in Python: {found}"
    assert _CSS_RULE.search(".lab-x { color: red; }")  # the pattern still finds a rule
