"""The one guarded replace every process-wide patch goes through (app/patches/replace.py): all
of a patch's parts or none, a source that is not the one read left alone and logged, and undo
puts back exactly what was there."""

from __future__ import annotations

import logging

import pytest

from app.patches import replace
from app.patches.pins import source_hash
from app.patches.replace import Replacement, guarded_replace, undo


class Shipped:
    """Stands in for a class of Panel's, as it ships."""

    def method(self):
        return "shipped"

    @classmethod
    def made(cls):
        return "shipped"


def _method(self):
    return "patched"


def _made(cls):
    return "patched"


@pytest.fixture
def owner():
    """A fresh copy of Shipped per test, and the patch named "toy" undone after it."""
    made = type("Owner", (Shipped,), dict(vars(Shipped)))
    yield made
    undo("toy")


def _parts(owner):
    return (
        Replacement(owner, "method", _method, source_hash(Shipped.method)),
        Replacement(
            owner, "made", classmethod(_made), source_hash(Shipped.__dict__["made"].__func__)
        ),
        Replacement(owner, "added", (), added=True),
    )


def test_every_part_is_made_and_undo_puts_back_what_was_there(owner):
    shipped_made = owner.__dict__["made"]
    assert guarded_replace("toy", *_parts(owner))
    assert replace.is_in("toy")
    assert owner().method() == owner.made() == "patched" and owner.added == ()
    assert guarded_replace("toy", *_parts(owner))  # in already: nothing made twice
    assert undo("toy") and not replace.is_in("toy")
    assert owner().method() == owner.made() == "shipped"
    assert owner.__dict__["made"] is shipped_made  # the classmethod itself, not a copy
    assert not hasattr(owner, "added")  # what the owner did not have is gone again
    assert not undo("toy")  # undone already


def test_a_part_that_is_not_the_source_read_leaves_every_part_alone_and_says_so(owner, caplog):
    before = dict(vars(owner))
    with caplog.at_level(logging.WARNING, logger="attention_lab.patches"):
        # The first part is the one read; the second is checked against another source.
        parts = _parts(owner)
        other = Replacement(owner, "made", classmethod(_made), "another source")
        assert not guarded_replace("toy", parts[0], other, parts[2])
    assert dict(vars(owner)) == before and not replace.is_in("toy")
    assert "patch toy skipped: Owner.made is not the source read" in caplog.text


def test_a_missing_part_skips_the_patch(owner, caplog):
    with caplog.at_level(logging.WARNING, logger="attention_lab.patches"):
        assert not guarded_replace("toy", Replacement(owner, "gone", _method))
    assert "Owner.gone is missing" in caplog.text and not hasattr(owner, "gone")


def test_an_entry_of_a_route_table_is_replaced_and_put_back():
    table = [("/ws", "Panel's handler"), ("/metadata", "Bokeh's")]
    entry = ("/ws", "ours")
    part = Replacement(table, 0, entry, what="the websocket route")
    try:
        assert guarded_replace("toy", part)
        assert table[0] is entry
    finally:
        undo("toy")
    assert table == [("/ws", "Panel's handler"), ("/metadata", "Bokeh's")]


def test_undo_leaves_a_part_something_else_replaced_since(owner, caplog):
    assert guarded_replace("toy", *_parts(owner))
    owner.method = lambda self: "someone else's"
    with caplog.at_level(logging.WARNING, logger="attention_lab.patches"):
        assert undo("toy")
    assert owner().method() == "someone else's" and owner.made() == "shipped"
    assert "changed since; not undone" in caplog.text
