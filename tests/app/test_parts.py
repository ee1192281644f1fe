"""The page's registry of lazy parts (app/page/parts.py)."""

from __future__ import annotations

import logging

from app.page.parts import Parts


def test_a_part_is_built_once_when_first_needed_and_drawn_from_then_on():
    built, drawn = [], []
    parts = Parts()
    parts.add("a", lambda: built.append("a") or "view a", draw=lambda v, s: drawn.append((v, s)))
    parts.add("b", lambda: built.append("b") or "view b", eager=True)
    assert built == ["b"]
    parts.draw("snap 1")
    assert drawn == []  # never built: costs nothing
    assert parts.get("a") == parts.get("a") == "view a" and built == ["b", "a"]
    parts.draw("snap 2")
    assert drawn == [("view a", "snap 2")]


def test_a_release_that_fails_is_named_and_every_other_part_is_still_released(caplog):
    released = []

    def broken(view):
        raise ValueError("ReactiveHTML(...).data doesn't have a value set")

    parts = Parts()
    parts.add("controls", lambda: "c", release=broken, eager=True)
    parts.add("classroom", lambda: "seat", release=released.append, eager=True)
    with caplog.at_level(logging.WARNING, logger="app.page.parts"):
        parts.release()
    assert released == ["seat"]  # the class seat goes even though the part before it failed
    [record] = caplog.records
    assert "controls" in record.getMessage() and record.exc_info is None  # one calm line
