"""Param's value check, used on its own and extended.

The lab's states take a batch of settings (a link, an import, a lesson step) and refuse the
whole batch, with the reason shown, if any value is out of range or of the wrong type, before
any of them is set. Param checks a value only as it sets it; its check alone is the private
`Parameter._validate`, which raises the same ValueError a refused set raises
(`check_value`). A list-valued setting also passes the lab's own rules for a URL or JSON
import wherever Param checks it, through the same private hook (`CheckedParameter`).
"""

from __future__ import annotations

import param


def check_value(parameterized, name: str, value) -> None:
    """Raise ValueError, as setting it would, if `value` does not fit parameter `name`."""
    parameterized.param[name]._validate(value)


class CheckedParameter(param.Parameter):
    """A Parameter whose every checked value (on set, and by `check_value`) also passes
    `self.check(value)`, which raises ValueError to refuse it."""

    __slots__ = []

    def check(self, val) -> None:
        raise NotImplementedError

    def _validate(self, val):
        super()._validate(val)
        self.check(val)
