"""Seven exact shortcuts in Bokeh's property system, for the page build (`apply()`).

Profiling a page open (tools/bench_page.py) showed much of its CPU inside Bokeh functions that
recompute what they already know, and much of what an open page holds in empty lists and dicts
that nobody asked for (docs/patches.md has the figures):

- `HasProps.query_properties_with_values` (every serialisation of every model, and Panel's
  property syncing) computes and validates the default of *every* property, then throws away
  those that were never set. Here a property whose default is stable and was never set is
  skipped before its default is computed. Properties that may be unset (no default) still go
  through the original path, so a missing required value raises exactly as before.
- `HasProps._overridden_defaults` walks the class's MRO on every default lookup. The
  overrides are fixed when a class is created (Bokeh's metaclass sets them), so they are
  computed once per class.
- `PropertyDescriptor._get_default` prepares and validates a property's default afresh on every
  read of a property nobody set (every walk of the model graph reads them all). A default that
  is stable (not made by a function or per instance), not themed and immutable (None, a bool, a
  number or a string) is the same every time, so it is kept per class and property.
- `HasProps.__init__` builds, for every new model, every property default that is a fresh
  container (`tags`, `js_property_callbacks`, `styles`, ...: about ten per model, each a list
  or dict with its own owner set) and keeps it. Here a default that is always an empty
  container (a literal, not a function, in the class) is left to be built on first read,
  where Bokeh's descriptor builds and keeps it exactly as `__init__` would have. It also asks
  each property's descriptor, for every new model, whether its default is made per instance;
  the answer reads only the class, so it is asked once per class.
- `bokeh.model.util.visit_immediate_value_references` (every walk of the model graph: four or
  five a page build, each over every model) reads every property that may hold models through
  its descriptor, and lists those properties afresh for each model. Here the list is made once
  per class, each value is read where the descriptor would find it, and a property nobody set,
  read or themed whose default holds no model (an empty container never built, a stable
  default such as None) is passed over. Its helper for each value,
  `visit_value_and_its_immediate_references`, imported `Model` afresh at every value.
- `HasProps.themed_values`, asked at every read of a default, finds "no theme" by raising and
  catching an AttributeError; here it reads the instance's dict, where `apply_theme` keeps it.

All seven return exactly what the originals return (tests/app/test_bokeh_speedups.py compares them
over every model of a lab page). `app.patches.apply_all()` applies them when the server
starts; importing this module changes nothing. They are applied only to the Bokeh source they
were checked against (`app.patches.pins.CHECKED_AGAINST`): if Bokeh changes any of these
functions, `apply()` leaves them all alone and says so in the log. The release pin is the coarse guard, for people
(tests/app/test_patch_pins.py fails on another Bokeh in the locks); the source hashes below are
the exact one, at run time (a release that leaves these seven functions as they were keeps them).
"""

from __future__ import annotations

import functools
import logging
from types import MappingProxyType

import bokeh.model.util as model_util
from bokeh.core.has_props import HasProps
from bokeh.core.property.descriptors import PropertyDescriptor, UnsetValueError
from bokeh.core.property.singletons import Intrinsic, Undefined
from bokeh.core.property.wrappers import PropertyValueContainer
from bokeh.model import Model
from bokeh.util.dataclasses import entries, is_dataclass

from app.patches.pins import CHECKED_AGAINST, installed_version
from app.patches.replace import Replacement, guarded_replace, undo

# sha256 (first 16 hex digits) of the seven functions' source in the Bokeh release checked
# (CHECKED_AGAINST["bokeh"]; any other source is left alone).
CHECKED_SOURCE = {
    "query_properties_with_values": "e864a09d384658f4",
    "_overridden_defaults": "c3b1c82a295e3b8b",
    "_get_default": "6173b5a328b12fc3",
    "__init__": "8184f3bb9444ab37",
    "visit_immediate_value_references": "94591d886aacef72",
    "themed_values": "668c1fc00de346e8",
    "visit_value_and_its_immediate_references": "e018cc9482917eac",
}
_ORIGINALS = {
    "query_properties_with_values": HasProps.query_properties_with_values,
    "_overridden_defaults": HasProps.__dict__["_overridden_defaults"].__func__,
    "_get_default": PropertyDescriptor._get_default,
    "__init__": HasProps.__init__,
    "visit_immediate_value_references": model_util.visit_immediate_value_references,
    "themed_values": HasProps.themed_values,
    "visit_value_and_its_immediate_references": (
        model_util.visit_value_and_its_immediate_references
    ),
}
_IMMUTABLE = (type(None), bool, int, float, str)
_stable_defaults: dict[tuple[type, str], object] = {}
_MISSING = object()
_log = logging.getLogger(__name__)


@functools.lru_cache(None)
def _overrides_of(cls: type[HasProps]) -> MappingProxyType:
    # Read-only, so no caller can change the shared copy (the one caller only reads it).
    return MappingProxyType(_ORIGINALS["_overridden_defaults"](cls))


def _overridden_defaults(cls) -> MappingProxyType:
    return _overrides_of(cls)


@functools.lru_cache(None)
def _may_be_unset(cls: type[HasProps]) -> frozenset[str]:
    """Properties of `cls` without a default: reading one that was never set raises."""
    overrides = _overrides_of(cls)
    return frozenset(
        name
        for name, prop in cls.properties(_with_props=True).items()
        if overrides.get(name, prop._default) is Undefined
    )


def query_properties_with_values(
    self, query, *, include_defaults: bool = True, include_undefined: bool = False
) -> dict:
    """Bokeh's own function, less the work on defaults it would discard (see the module)."""
    if include_defaults:
        return _ORIGINALS["query_properties_with_values"](
            self, query, include_defaults=True, include_undefined=include_undefined
        )
    selected = self._property_values.keys() | self._unstable_default_values.keys()
    themed_values = self.themed_values()
    themed_keys = set(themed_values) if themed_values is not None else set()
    selected |= themed_keys
    unset = _may_be_unset(type(self))
    result = {}
    for key in self.properties(_with_props=True):
        if key not in selected and key not in unset:
            continue  # a stable default nobody set: the original computes it, then skips it
        descriptor = self.lookup(key)
        if not query(descriptor):
            continue
        try:
            value = descriptor.get_value(self)
        except UnsetValueError:
            if not include_undefined:
                raise
            value = Undefined
        else:
            if key not in selected:
                continue
            if (
                key not in themed_keys
                and isinstance(value, PropertyValueContainer)
                and key in self._unstable_default_values
            ):
                continue
        result[key] = value
    return result


def _get_default(self, obj):
    """Bokeh's own function, with an immutable stable default kept (see the module)."""
    themed = obj.themed_values()
    if themed is not None and self.name in themed:
        return _ORIGINALS["_get_default"](self, obj)
    key = (obj.__class__, self.name)
    value = _stable_defaults.get(key, _MISSING)
    if value is _MISSING:
        value = _ORIGINALS["_get_default"](self, obj)
        if type(value) in _IMMUTABLE and not self.has_unstable_default(obj):
            _stable_defaults[key] = value
    return value


@functools.lru_cache(None)
def _empty_by_default(cls: type[HasProps]) -> frozenset[str]:
    """Properties of `cls` whose default is always a new, empty container: a literal `[]`,
    `{}` or `set()` in the class (a function could return something else each time)."""
    overrides = _overrides_of(cls)
    names = []
    for name, prop in cls.properties(_with_props=True).items():
        raw = overrides.get(name, prop._default)
        if callable(raw) or not isinstance(raw, list | dict | set) or raw:
            continue
        prepared = prop.themed_default(cls, name, None)
        if isinstance(prepared, PropertyValueContainer) and len(prepared) == 0:
            names.append(name)
    return frozenset(names)


def __init__(self, **properties) -> None:  # noqa: N807 - it replaces HasProps.__init__
    """Bokeh's own constructor, less the empty containers built before anyone reads them."""
    super(HasProps, self).__init__()
    self._property_values = {}
    self._unstable_default_values = {}
    self._unstable_themed_values = {}
    for name, value in properties.items():
        if value is Undefined or value is Intrinsic:
            continue
        setattr(self, name, value)
    later = _empty_by_default(type(self)) if self.themed_values() is None else frozenset()
    for name in _unstable_by_default(type(self)):
        if name in properties or name in later:
            continue
        self.lookup(name)._get(self)  # fills in `_unstable_*_values`, as Bokeh's does
    self._initialized = True


@functools.lru_cache(None)
def _unstable_by_default(cls: type[HasProps]) -> tuple[str, ...]:
    """Properties of `cls` whose default is made per instance, in Bokeh's order. Bokeh asks each
    descriptor per new model; its answer reads only the class (its overridden defaults)."""
    return tuple(
        name
        for name in cls.properties(_with_props=True)
        if cls.lookup(name).has_unstable_default(cls)
    )


@functools.lru_cache(None)
def _walk_plan(cls: type[HasProps]) -> tuple[tuple[str, ...], frozenset[str]]:
    """The properties of `cls` that may hold models, in Bokeh's order, and those of them whose
    default, while nobody sets, reads or themes it, holds none: a stable default with no model
    in it, or an empty container not yet built."""
    overrides = _overrides_of(cls)
    empty = _empty_by_default(cls)
    names, quiet = [], set()
    for name, prop in cls.properties_with_refs().items():
        names.append(name)
        if name in empty:
            quiet.add(name)
            continue
        raw = overrides.get(name, prop._default)
        if callable(raw) or prop._may_have_unstable_default():
            continue  # built per instance: `__init__` keeps it in `_unstable_default_values`
        found = []
        model_util.visit_value_and_its_immediate_references(
            prop.themed_default(cls, name, None), found.append
        )
        if not found:
            quiet.add(name)
    return tuple(names), frozenset(quiet)


def visit_immediate_value_references(value, visitor) -> None:
    """Bokeh's own walk, reading each property's value where the descriptor would find it
    (every walk of the model graph: four or five a page build), less the defaults that hold
    no model (see `_walk_plan`)."""
    if not isinstance(value, HasProps):
        model_util.visit_value_and_its_immediate_references(value, visitor)
        return
    names, quiet = _walk_plan(type(value))
    values = value._property_values
    unstable = value._unstable_default_values
    themed = value.themed_values() or ()
    visit = model_util.visit_value_and_its_immediate_references
    for attr in names:
        if attr in values:
            visit(values[attr], visitor)
        elif attr in themed:
            visit(getattr(value, attr), visitor)  # the theme's value, as the descriptor has it
        elif attr in unstable:
            visit(unstable[attr], visitor)
        elif attr not in quiet:
            visit(getattr(value, attr), visitor)


_SCALARS = frozenset({int, float, str})


def visit_value_and_its_immediate_references(obj, visitor) -> None:
    """Bokeh's own, without importing `Model` again at every value it visits (several
    thousand a walk)."""
    typ = type(obj)
    if typ in _SCALARS:  # the common case first, as Bokeh's does
        return
    if typ is list or issubclass(typ, (list, tuple)):
        for item in obj:
            visit_value_and_its_immediate_references(item, visitor)
    elif issubclass(typ, dict):
        for key, value in obj.items():
            visit_value_and_its_immediate_references(key, visitor)
            visit_value_and_its_immediate_references(value, visitor)
    elif issubclass(typ, HasProps):
        if issubclass(typ, Model):
            visitor(obj)
        else:
            model_util.visit_immediate_value_references(obj, visitor)
    elif is_dataclass(obj):
        for _, value in entries(obj):
            visit_value_and_its_immediate_references(value, visitor)


def themed_values(self) -> dict | None:
    """Bokeh's own answer (a theme's values live in the instance's dict, set by `apply_theme`),
    without raising and catching an AttributeError in `HasProps.__getattr__` for every model
    without a theme: every read of a default asks, a few thousand times a page build."""
    return self.__dict__.get("__themed_values__")


NAME = "bokeh_speedups"  # its name in app.patches.PROCESS_WIDE and ATTENTION_LAB_PATCHES


def apply() -> bool:
    """Install the shortcuts if this Bokeh has the checked source; True when installed."""
    installed = guarded_replace(
        NAME,
        _replacement(HasProps, "query_properties_with_values", query_properties_with_values),
        _replacement(HasProps, "_overridden_defaults", classmethod(_overridden_defaults)),
        _replacement(PropertyDescriptor, "_get_default", _get_default),
        _replacement(HasProps, "__init__", __init__),
        _replacement(
            model_util, "visit_immediate_value_references", visit_immediate_value_references
        ),
        _replacement(HasProps, "themed_values", themed_values),
        _replacement(
            model_util,
            "visit_value_and_its_immediate_references",
            visit_value_and_its_immediate_references,
        ),
    )
    if not installed:
        _log.info(
            "Bokeh %s's property functions differ from those of Bokeh %s, the one checked; "
            "not shortened",
            installed_version("bokeh"),
            CHECKED_AGAINST["bokeh"],
        )
    return installed


def _replacement(owner, attribute: str, new) -> Replacement:
    # CHECKED_SOURCE is read at each call: a test changes it to see an unread Bokeh left alone.
    return Replacement(owner, attribute, new, CHECKED_SOURCE[attribute])


def remove() -> None:
    """Put Bokeh's own functions back (for the equivalence tests and tools/bench_page.py)."""
    undo(NAME)
