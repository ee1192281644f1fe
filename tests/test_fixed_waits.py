"""The tests keep their own rule (tests/waiting.py): no fixed wait. A sleep whose length is a
bare number (`time.sleep(0.5)`, `page.wait_for_timeout(600)`, `asyncio.sleep(0.01)`) is waiting
for something without saying what; a deliberate length (a press held longer than a threshold,
a probe's cadence) is a named constant beside what it must exceed, and polling goes through
`wait_until`."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SLEEPS = {"sleep", "wait_for_timeout"}


def fixed_waits(source: str) -> list[int]:
    """The lines of calls to a sleep whose arguments are numbers alone (0 yields a turn: fine)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = (
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        )
        if name not in SLEEPS or not node.args:
            continue
        bare = not any(isinstance(n, ast.Name | ast.Attribute) for n in ast.walk(node.args[0]))
        if bare and ast.unparse(node.args[0]) != "0":
            found.append(node.lineno)
    return found


def test_no_test_sleeps_a_bare_number_of_seconds():
    found = [
        f"{path.relative_to(TESTS)}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        if path.name != "waiting.py"
        for line in fixed_waits(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "fixed waits (wait for the event, or name the length):\n" + "\n".join(found)


def test_the_check_finds_a_fixed_wait_and_passes_a_named_one():
    source = (
        "import time\ntime.sleep(0.5)\npage.wait_for_timeout(2 * 300)\n"
        "HOLD_MS = 600\npage.wait_for_timeout(HOLD_MS)\nasyncio.sleep(0)\n"
        "pause = lambda s: page.wait_for_timeout(s * 1000)\n"
    )
    assert fixed_waits(source) == [2, 3]
