"""The numbers a lesson prints, as `Number`s: written the way the session's language writes
them, and in English exactly as Python's format would (the lessons' tests compare that text).

Each is rounded by Python's own format first, so Babel never rounds a second time in its own
way (half-even on the decimal text: 2.675 would print 2.68, where Python prints 2.67), and a
negative zero prints "0.00", not "-0.00".
"""

from __future__ import annotations

import math

from app.i18n.said import Number


def _rounded(text: str) -> float:
    value = float(text)
    return 0.0 if value == 0 else value  # no negative zero


def fixed(x: float, digits: int = 2) -> Number | str:
    """`f"{x:.{digits}f}"`, in the session's language (0.25 -> "0,25" in Spanish); "inf" and
    "nan" as Python writes them (a measure of keys that no longer match up)."""
    if not math.isfinite(x):
        return f"{x:.{digits}f}"
    pattern = "0." + "0" * digits if digits else "0"
    return Number(_rounded(f"{x:.{digits}f}"), "decimal", pattern)


def signed(x: float, digits: int = 1) -> Number:
    """`f"{x:+.{digits}f}"`: a change, always with its sign ("+0.4", "-1.2")."""
    places = "0." + "0" * digits if digits else "0"
    return Number(float(f"{x:+.{digits}f}"), "decimal", f"+{places};-{places}")


def percent(x: float, digits: int = 1) -> Number:
    """`f"{x:.{digits}%}"`, in the session's language (0.983 -> "98,3%" in Spanish)."""
    pattern = ("0." + "0" * digits if digits else "0") + "%"
    return Number(_rounded(f"{x * 100:.{digits}f}") / 100, "percent", pattern)


def significant(x: float, digits: int = 3) -> Number:
    """`f"{x:.{digits}g}"` for numbers that print without an exponent (a temperature)."""
    return Number(_rounded(f"{x:.{digits}g}"), "decimal", "0.##########")


def integer(n: int) -> Number:
    """A count, without grouping, as Python prints it (64, 1024)."""
    return Number(int(n), "decimal", "0")
