"""A page's parts by name, each built the first time something needs it.

`Lab` (app/page/lab_page.py) registers every view of a page here: how to build it, how to draw
it from a snapshot, how to release what it registered outside the page. Nothing is built until
it is asked for (`get`), except a part added `eager`. `draw` and `release` walk the parts that
exist, in the order they were added, so a part built late is drawn from then on and a part
never built costs nothing. While a lesson step holds some views back (`held`, the names of
app/lessons/reveals.py), a part that can show them is given to its `conceal` instead of its
`draw` (app/page/held.py). Panel-free.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass
class LazyPart:
    """One part: its builder, and what to do with the view it built."""

    build: Callable[[], object]
    draw: Callable[[object, object], None] | None = None  # (view, snapshot)
    release: Callable[[object], None] | None = None  # (view)
    conceal: Callable[[object, object, frozenset], None] | None = None  # (view, snapshot, held)
    view: object = None


class Parts:
    """The registry: name -> LazyPart."""

    def __init__(self) -> None:
        self._parts: dict[str, LazyPart] = {}
        self.held: frozenset[str] = frozenset()  # what the open lesson step holds back

    def add(
        self, name: str, build, *, draw=None, release=None, conceal=None, eager: bool = False
    ) -> None:
        if name in self._parts:
            raise ValueError(f"a part named {name!r} is already registered")
        self._parts[name] = LazyPart(build, draw, release, conceal)
        if eager:
            self.get(name)

    def __contains__(self, name: str) -> bool:
        return name in self._parts

    def get(self, name: str):
        """The part's view, built now if it was not yet."""
        part = self._parts[name]
        if part.view is None:
            part.view = part.build()
        return part.view

    def built(self, name: str):
        """The part's view, or None while it has not been built."""
        return self._parts[name].view

    def existing(self) -> Iterator[tuple[str, LazyPart]]:
        return ((name, part) for name, part in self._parts.items() if part.view is not None)

    def draw(self, snap, *, only: tuple[str, ...] | None = None) -> None:
        """Draw every part that exists (or those of them named in `only`) from one snapshot; the
        caller holds the document."""
        for name, part in list(self.existing()):
            if only is None or name in only:
                self._draw(part, part.view, snap)

    def draw_one(self, name: str, view, snap) -> None:
        """Draw `view`, the part `name` being built, as `draw` would once it is registered."""
        self._draw(self._parts[name], view, snap)

    def _draw(self, part: LazyPart, view, snap) -> None:
        if self.held and part.conceal is not None:
            part.conceal(view, snap, self.held)
        elif part.draw is not None:
            part.draw(view, snap)

    def release(self) -> None:
        """Each part's release on its own: one that fails (a closed page's model already
        gone) is named in one log line, and every other part is still released, its class
        seat and its memory included."""
        for name, part in list(self.existing()):
            if part.release is None:
                continue
            try:
                part.release(part.view)
            except Exception as exc:  # noqa: BLE001 - the rest of the page must still go
                log.warning("a closed page's %s was not released: %s", name, exc)
