"""An instance's watchers of one parameter kept in two slots, not a dict of lists
(`compact_instance_watchers()`).

Param keeps, per Parameterized instance, `watchers[parameter name]` = `{"value": [watchers]}`,
made in `Parameters._register_watcher` the first time anything watches that parameter. Panel
watches every synced parameter of every component (twenty to thirty each), so a lab page
carried thousands of such one-key dicts and their lists: a large share of the Python memory one
open page holds (docs/patches.md has the figures).

Here the inner dict is a `ValueWatchers`: a mapping with the "value" list in a slot (an
instance's watchers are only ever kept under "value": Param files any other kind on the
parameter itself) and any other key in a dict made only if one is ever set. A first watcher's
list is made holding it, not grown from empty. It reads and writes as the dict did for every
use in Param and Panel (`in`, `[...]`, `.get`, `.items()`, `.values()`, iteration, and the
list itself, which `.reverse()` and unwatching change in place). Applied only to the source it
was read against (Param 2.4.2's `_register_watcher`); otherwise Param is left alone and the
log says so.
"""

from __future__ import annotations

from collections.abc import MutableMapping

from app.patches.replace import Replacement, guarded_replace

# sha256 (first 16 hex digits) of Param 2.4.2's Parameters._register_watcher, as read.
CHECKED_SOURCE = "e19074d6fccfc867"
_VALUE = "value"


class ValueWatchers(MutableMapping):
    """`{"value": [watchers]}` in two slots."""

    __slots__ = ("value", "more")

    def __init__(self, watchers: list | None = None):
        self.value = watchers  # None: no "value" key
        self.more = None  # any other key: a dict, made if ever needed

    def __getitem__(self, key):
        if key == _VALUE and self.value is not None:
            return self.value
        if self.more is not None and key != _VALUE:
            return self.more[key]
        raise KeyError(key)

    def __setitem__(self, key, watchers) -> None:
        if key == _VALUE:
            self.value = watchers
        else:
            if self.more is None:
                self.more = {}
            self.more[key] = watchers

    def __delitem__(self, key) -> None:
        if key == _VALUE and self.value is not None:
            self.value = None
        elif self.more is not None and key != _VALUE:
            del self.more[key]
        else:
            raise KeyError(key)

    # Param reads `.get("value")` at every set of a watched parameter: no KeyError round trip.
    def get(self, key, default=None):
        if key == _VALUE:
            return default if self.value is None else self.value
        return default if self.more is None else self.more.get(key, default)

    def __contains__(self, key) -> bool:
        if key == _VALUE:
            return self.value is not None
        return self.more is not None and key in self.more

    def __iter__(self):
        if self.value is not None:
            yield _VALUE
        if self.more:
            yield from self.more

    def __len__(self) -> int:
        return (self.value is not None) + (len(self.more) if self.more else 0)

    def __repr__(self) -> str:
        return repr(dict(self))


def _register_watcher(self_, action, watcher, what="value"):
    """Param's own, with a ValueWatchers per watched parameter of an instance."""
    if self_.self is not None and not self_.self._param__private.initialized:
        raise RuntimeError(
            "(Un)registering a watcher on a partially initialized Parameterized instance "
            "is not allowed. Ensure you have called super().__init__(**) in the "
            "Parameterized instance constructor before trying to set up a watcher.",
        )
    cls_param = self_.cls.param
    for parameter_name in watcher.parameter_names:
        if parameter_name not in cls_param:
            raise ValueError(
                f"{parameter_name} parameter was not found in list of "
                f"parameters of class {self_.cls.__name__}"
            )
        if self_.self is not None and what == "value":
            instance_watchers = self_.self._param__private.watchers
            kept = instance_watchers.get(parameter_name)
            if kept is None:
                if action == "append":  # the first watcher: its list made holding it
                    instance_watchers[parameter_name] = ValueWatchers([watcher])
                    continue
                kept = instance_watchers[parameter_name] = ValueWatchers()
            if what not in kept:
                kept[what] = []
            method = getattr(kept[what], action)
        else:
            param_watchers = self_[parameter_name].watchers
            if what not in param_watchers:
                param_watchers[what] = []
            method = getattr(param_watchers[what], action)
        try:
            method(watcher)
        except ValueError:
            # Removing a watcher already removed: unwatching is idempotent, as in Param.
            if action != "remove":
                raise


def compact_instance_watchers() -> bool:
    """Install the compact watchers, once per process; False (nothing changed) when this
    Param's `_register_watcher` is not the source read."""
    from param.parameterized import Parameters

    found = Parameters.__dict__["_register_watcher"]
    if found is not _register_watcher:
        _register_watcher.original = found
    return guarded_replace(
        "compact_instance_watchers",
        Replacement(Parameters, "_register_watcher", _register_watcher, CHECKED_SOURCE),
    )
