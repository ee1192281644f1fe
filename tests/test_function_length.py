"""No function in app/, engine/ or tools/ longer than about 80 lines: a reader keeps one on a
screen. A function may be listed in STILL_LONG with its length, and may then only shrink; none is
listed today."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 80
# "file:qualified name" -> its length in lines today.
STILL_LONG: dict[str, int] = {}


def function_lengths(source: str) -> dict[str, int]:
    """Qualified name -> lines, for every function and method of a module."""
    found = {}

    def visit(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                found[prefix + child.name] = child.end_lineno - child.lineno + 1
                visit(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")

    visit(ast.parse(source), "")
    return found


def test_no_function_is_longer_than_a_screen():
    too_long = []
    for package in ("app", "engine", "tools"):
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for name, lines in function_lengths(path.read_text(encoding="utf-8")).items():
                allowed = STILL_LONG.get(f"{rel}:{name}", LIMIT)
                if lines > allowed:
                    too_long.append(f"{rel}:{name} is {lines} lines (at most {allowed})")
    assert too_long == [], "split these:\n" + "\n".join(too_long)


def test_the_lengths_count_methods_by_their_class():
    source = "class A:\n    def f(self):\n        x = 1\n        return x\n\ndef g():\n    pass\n"
    assert function_lengths(source) == {"A.f": 3, "g": 2}
