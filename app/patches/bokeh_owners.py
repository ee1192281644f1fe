"""A Bokeh container's owners kept in a tuple, not a set (`owners_in_tuples()`).

Every list, dict or column-data value a Bokeh model holds is wrapped in a
`PropertyValueContainer` that remembers which (model, property) pairs own it, so that mutating
it in place can notify them. Bokeh keeps those pairs in a `set`, made in the container's
constructor. A lab page holds a couple of thousand such containers and almost every one has
exactly one owner, and a set of one pair is four times a tuple of one: a large share of the
Python memory one open page holds (measured in docs/patches.md).

Here the owners are a tuple: empty and shared until the first owner registers, then rebuilt on
each register or unregister (rare: when a value is assigned to or taken from a property).
Registering a pair twice keeps it once, unregistering a pair that is not there does nothing,
and the notifications iterate the pairs as before; only their order is the order they came in
rather than a set's. Applied only to the source it was read against (Bokeh 3.9.2's three
methods, app/patches/replace.py); otherwise Bokeh is left alone and the log says so.
"""

from __future__ import annotations

from bokeh.core.property.wrappers import PropertyValueContainer

from app.patches.replace import Replacement, guarded_replace

# sha256 (first 16 hex digits) of the three methods' source as read in Bokeh 3.9.2.
CHECKED_SOURCE = {
    "__init__": "0acd223c3ab8e8a3",
    "_register_owner": "e99c2b6db1590963",
    "_unregister_owner": "9cc35c9f7fa7c95e",
}


def _init(self, *args, **kwargs) -> None:
    # Bokeh's own, less `self._owners = set()`: the class's empty tuple stands in until an owner.
    super(PropertyValueContainer, self).__init__(*args, **kwargs)


def _register_owner(self, owner, descriptor) -> None:
    pair = (owner, descriptor)
    if pair not in self._owners:
        self._owners = (*self._owners, pair)


def _unregister_owner(self, owner, descriptor) -> None:
    pair = (owner, descriptor)
    if pair in self._owners:
        self._owners = tuple(p for p in self._owners if p != pair)


def owners_in_tuples() -> bool:
    """Install the tuple, once per process; False (nothing changed) on an unread Bokeh."""
    container = PropertyValueContainer
    return guarded_replace(
        "owners_in_tuples",
        # Shared and immutable: a container nobody owns makes nothing.
        Replacement(container, "_owners", (), added=True),
        Replacement(container, "__init__", _init, CHECKED_SOURCE["__init__"]),
        Replacement(
            container, "_register_owner", _register_owner, CHECKED_SOURCE["_register_owner"]
        ),
        Replacement(
            container, "_unregister_owner", _unregister_owner, CHECKED_SOURCE["_unregister_owner"]
        ),
    )
