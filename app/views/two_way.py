"""Widgets linked to a state's settings both ways, written once for every view.

A view writes its widgets from its state, and a student's change to a widget goes to the state.
The one trap is the echo: writing a widget makes it report a change as a student's would, and
sending that back would loop or undo a newer value. An `Echo` marks the time a view writes its
own widgets; every link that shares it stays quiet meanwhile.

Panel's own `link(..., bidirectional=True)` cannot be used here: it takes no mapping between the
two values (a log scale, a sorted list) and cannot refuse a value the state rejects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import panel as pn


class Echo:
    """One guard shared by a view's links: inside `writing()`, what the widgets report is the
    echo of the view's own writes, not a student's change, and is not sent back."""

    def __init__(self):
        self._depth = 0  # a count, not a flag: a write inside a write stays quiet to the end

    @property
    def active(self) -> bool:
        return self._depth > 0

    @contextmanager
    def writing(self) -> Iterator[None]:
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1


class Sent:
    """A widget's changes sent to one setting through a mapping: `apply` takes the setting as
    one keyword argument (and shows a refusal itself). Quiet while `echo` is active, and for a
    widget emptied (None)."""

    def __init__(
        self,
        widget,
        name: str,
        apply: Callable[..., object],
        *,
        echo: Echo,
        event: str = "value",
        to_state: Callable | None = None,
    ):
        self.widget, self.name, self.echo = widget, name, echo
        self._apply = apply
        self._to_state = to_state or (lambda v: v)
        widget.param.watch(self._changed, event)

    def _changed(self, event) -> None:
        if self.echo.active or event.new is None:
            return
        with self.echo.writing():
            self._apply(**{self.name: self._to_state(event.new)})


class TwoWay:
    """Keep one widget parameter and one state parameter equal through a mapping, without echo.

    The state takes a value through `try_update`, which turns a refused value into
    `state.error`; the widget then shows the value kept."""

    def __init__(
        self,
        state,
        name,
        widget,
        *,
        event="value",
        to_widget=None,
        to_state=None,
        echo: Echo | None = None,
    ):
        self._state, self._name, self._widget = state, name, widget
        self._to_widget = to_widget or (lambda v: v)
        self.echo = echo or Echo()
        self.sent = Sent(
            widget,
            name,
            self._apply,
            echo=self.echo,
            event=event,
            to_state=to_state,
        )
        state.param.watch(self._from_state, name)

    def _apply(self, **setting) -> bool:
        # Held, so the new address and the redrawn plots leave as one message, not two.
        with pn.io.hold():
            if self._state.try_update(**setting):
                return True
            # Refused (state.error says why): the widget shows the value kept.
            self._widget.value = self._to_widget(getattr(self._state, self._name))
            return False

    def _from_state(self, event) -> None:
        if self.echo.active:
            return
        with self.echo.writing():
            self._widget.value = self._to_widget(event.new)
