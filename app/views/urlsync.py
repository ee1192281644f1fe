"""Two-way sync between the lab and the page address, in the state's own URL text format.

Panel's `location.sync` would write every parameter as JSON; the state instead writes only the
settings that differ from the scenario (`state.query_params()`), and reads links back through
`state.apply_query_params`, which validates each value, falls back to the default for a bad one
and names it. Each warning becomes a notification; the page always loads.
"""

from __future__ import annotations

from app import urlstate

from .notify import notify


class UrlSync:
    def __init__(self, state, location, inputs, *, notify=None):
        self._state = state
        self._location = location
        self._notify = notify or _notify_warning
        self._written: str | None = None
        self._busy = False
        location.param.watch(self._from_url, "search")
        state.param.watch(self._to_url, list(inputs))
        self._from_url()

    def _from_url(self, *events) -> None:
        if self._busy:
            return
        search = self._location.search or ""
        if search == self._written:
            return  # our own write coming back
        warnings: list[str] = []
        try:
            params = urlstate.split_query_string(search)
        except ValueError as exc:
            params, warnings = {}, [str(exc)]
        if params:
            self._busy = True
            try:
                warnings += self._state.apply_query_params(params)
            finally:
                self._busy = False
        for text in warnings:
            self._notify(f"Link: {text}")
        self._to_url()

    def write(self) -> None:
        """Bring the address up to date now (the lab calls this inside its redraw)."""
        self._to_url()

    def _to_url(self, *events) -> None:
        if self._busy:
            return
        search = urlstate.query_string(self._state.query_params())
        if search == (self._location.search or "") and search == self._written:
            return
        self._written = search
        self._busy = True
        try:
            self._location.search = search
        finally:
            self._busy = False


def _notify_warning(text: str) -> None:
    notify("warning", text)
