"""The states' parameters, made from the settings' declarations (`settings_schema.Field`).

`LabState` and `ModelState` declare each setting's parameter with `parameter_for`, so its kind
and bounds are the field's: a setting's limits are written once, in settings_schema, and the
parameter, the address and an import refuse the same values. No Panel import.
"""

from __future__ import annotations

import numpy as np
import param

from app.patches.param_values import CheckedParameter
from app.state import settings_schema
from app.state.settings_schema import Field


def plain(val):
    """Tuples, NumPy arrays and NumPy scalars -> the JSON-shaped Python values the checks expect."""
    if isinstance(val, np.ndarray):
        return val.tolist()
    if isinstance(val, list | tuple):
        return [plain(v) for v in val]
    if isinstance(val, np.bool_):
        return bool(val)
    if isinstance(val, np.integer):
        return int(val)
    if isinstance(val, np.floating):
        return float(val)
    return val


class ListSetting(CheckedParameter):
    """A list-valued setting checked with the same rules as a URL or JSON import."""

    __slots__ = ["field"]

    def __init__(self, default, *, field: Field, **kw):
        self.field = field
        super().__init__(default=default, instantiate=True, **kw)

    def check(self, val) -> None:
        try:
            settings_schema.check_json(self.field, plain(val))
        except ValueError as exc:
            raise ValueError(f"Parameter {self.name!r}: {exc}") from None


def parameter_for(field: Field, default, **kw) -> param.Parameter:
    """The parameter of one setting: the field's kind and bounds, `default`, and `kw` (doc,
    allow_None)."""
    if field.kind == "float":
        return param.Number(default=default, bounds=field.bounds, **kw)
    if field.kind == "int":
        return param.Integer(default=default, bounds=field.bounds, **kw)
    if field.kind == "bool":
        return param.Boolean(default=default, **kw)
    if field.kind == "choice" and field.choices:
        return param.Selector(default=default, objects=list(field.choices), **kw)
    if field.kind in ("choice", "text"):
        # A choice whose options are known only later (the installed models) is checked where
        # they are; a text's length is checked with the rest of the program.
        return param.String(default=default, **kw)
    if field.kind == "positions":
        return param.List(default=default, item_type=int, **kw)
    if field.kind == "heads":
        return param.List(default=default, item_type=str, **kw)
    return ListSetting(default, field=field, **kw)  # pairs, bools, labels
