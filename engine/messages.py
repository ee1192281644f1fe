"""`Problem`: a ValueError whose message can be shown in any language.

The engine speaks English (its messages are what a notebook prints), but the lab shows its
errors to students in theirs. A `Problem` keeps its English template and the values of its
placeholders beside the message, so the app translates the template and formats the values
where it shows the error (app/i18n/said.py); `str(problem)` is the English, as any ValueError's.

    raise Problem("the temperature must be > 0, got {value}", value=t)

`pybabel extract` finds the template through the keyword `Problem` (tools/translations.py).
"""

from __future__ import annotations

from typing import Any


class Problem(ValueError):
    """A ValueError with its English `template` and the `values` of its placeholders."""

    def __init__(self, template: str, /, **values: Any):
        self.template = template
        self.values = values
        super().__init__(template.format(**values))
