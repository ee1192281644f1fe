"""The one way a process-wide patch replaces a third-party attribute: `guarded_replace`.

A patch names what it replaces (an attribute of a class or module, or an entry of a route
table) and, for a function, the hash of the source it was read against. Before anything is
replaced, every part is checked: a part that is missing, or whose source is not the one read,
skips the whole patch with a warning in the log, and the process runs Panel, Bokeh and Param as
they ship (slower, never wrong). What was there before is kept, so `undo(name)` puts it back.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import MutableSequence
from dataclasses import dataclass
from typing import Any

from app.patches.pins import source_hash

_log = logging.getLogger("attention_lab.patches")

ABSENT = object()  # an attribute the owner itself did not have (it may inherit one)


@dataclass(frozen=True)
class Replacement:
    """`owner.attribute = new` (an entry `owner[attribute]` when the owner is a list).

    `source`: the hash (`pins.source_hash`) of the function the attribute holds, as read; None
    checks only that the attribute is there. `added`: the owner need not have it yet (a
    class-level default or property the patch adds)."""

    owner: Any
    attribute: str | int
    new: Any
    source: str | None = None
    added: bool = False
    what: str = ""  # how the log names it, where `owner.attribute` would not say

    def where(self) -> str:
        if self.what:
            return self.what
        name = getattr(self.owner, "__qualname__", None) or getattr(self.owner, "__name__", None)
        return f"{name or type(self.owner).__name__}.{self.attribute}"


_done: dict[str, list[tuple[Replacement, Any]]] = {}  # name -> (replacement, what it replaced)
_lock = threading.RLock()


def current(owner: Any, attribute: str | int) -> Any:
    """What the owner itself holds (a class's own descriptor, not the bound method), or ABSENT."""
    if isinstance(owner, MutableSequence):
        return owner[attribute] if 0 <= attribute < len(owner) else ABSENT
    return vars(owner).get(attribute, ABSENT)


def function_in(value: Any) -> Any:
    """The function a classmethod, staticmethod or property holds; else the value itself."""
    if isinstance(value, (classmethod, staticmethod)):
        return value.__func__
    if isinstance(value, property):
        return value.fget
    return value


def mismatch(replacement: Replacement) -> str | None:
    """Why the replacement must not be made, or None."""
    found = current(replacement.owner, replacement.attribute)
    if found is ABSENT:
        return None if replacement.added else f"{replacement.where()} is missing"
    if replacement.source is None:
        return None
    try:
        digest = source_hash(function_in(found))
    except (OSError, TypeError):
        digest = None
    if digest != replacement.source:
        return f"{replacement.where()} is not the source read"
    return None


def guarded_replace(name: str, *replacements: Replacement) -> bool:
    """Make every replacement of the patch `name`, or none; True when the patch is in (also
    when it already was). A mismatch leaves everything as it was and logs why."""
    with _lock:
        if name in _done:
            return True
        for replacement in replacements:
            reason = mismatch(replacement)
            if reason is not None:
                _log.warning("patch %s skipped: %s; left as it ships", name, reason)
                return False
        made = []
        for replacement in replacements:
            made.append((replacement, current(replacement.owner, replacement.attribute)))
            _put(replacement.owner, replacement.attribute, replacement.new)
        _done[name] = made
        return True


def undo(name: str) -> bool:
    """Put back what the patch `name` replaced; False when it was not in."""
    with _lock:
        made = _done.pop(name, None)
        if made is None:
            return False
        for replacement, previous in reversed(made):
            if current(replacement.owner, replacement.attribute) is not replacement.new:
                # Something replaced it since (the served guard rebuilds the route table).
                _log.warning("patch %s: %s changed since; not undone", name, replacement.where())
                continue
            _put(replacement.owner, replacement.attribute, previous)
        return True


def is_in(name: str) -> bool:
    return name in _done


def _put(owner: Any, attribute: str | int, value: Any) -> None:
    if isinstance(owner, MutableSequence):
        owner[attribute] = value
    elif value is ABSENT:
        delattr(owner, attribute)
    else:
        setattr(owner, attribute, value)
