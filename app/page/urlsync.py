"""Two-way sync between the lab and the page address, in the state's own URL text format.

Panel's `location.sync` would write every parameter as JSON; the state instead writes only the
settings that differ from the scenario (`state.query_params()`), and reads links back through
`state.apply_query_params`, which validates each value, falls back to the default for a bad one
and names it. Each warning becomes a notification; the page always loads.

The lesson step travels as `lesson=N` (1-based) beside the settings. A link with the step alone
sets the lab up for that step; a link that also carries settings restores those settings (the
student's work in progress) and shows the step.

`lang=CODE` is the page's language (app/i18n/), chosen when the page was built: it is kept in
the address when a link chose it, so a teacher can hand out a Spanish link, and never reaches
the state. The language menu changes it by opening this address with another `lang=`.

`presenter=1` is a display flag (large type, sidebar folded: app/page/a11y.py's PageTools);
it is kept in the address while presenter mode is on and never reaches the state.

Each address is read once. When the page connects, the browser reports the address it was
opened with; reading it again showed every warning twice.
"""

from __future__ import annotations

import panel as pn

from app.i18n.markers import N_
from app.page.session_language import LANG_PARAM
from app.state import settings_schema
from app.views.notify import notify
from engine.wording import Phrase

PRESENTER_PARAM = "presenter"
# A class: `class=CODE` joins it (and stays in the address, so a reload rejoins);
# `teach=new` starts one (app/views/class_panel.py).
CLASS_PARAM = "class"
TEACH_PARAM = "teach"


class UrlSync:
    def __init__(
        self,
        state,
        location,
        inputs,
        *,
        notify=None,
        lessons=None,
        tools=None,
        classroom=None,
        language=None,
        notices=(),
    ):
        self._state = state
        self._location = location
        self._notify = notify or _notify_warning
        self._lessons = lessons  # a LessonsView (its `lesson` and `open`), or None
        self._tools = tools  # a PageTools (its `presenter`), or None
        self._classroom = classroom  # a ClassView (its `session.code`, `join`), or None
        self._inputs = frozenset(inputs)
        self._language = language  # the `lang=` the address keeps, or None
        self._notices = list(notices)  # said with the first reading's warnings
        self._written: str | None = None
        self._read: str | None = None
        self._busy = False
        location.param.watch(self._from_url, "search")
        state.param.watch(self._to_url, list(inputs))
        if lessons is not None:
            lessons.param.watch(self._to_url, "lesson")
        if tools is not None:
            tools.param.watch(self._to_url, "presenter")
        if classroom is not None:
            classroom.session.param.watch(self._to_url, "code")
        self._from_url()

    def _from_url(self, *events) -> None:
        if self._busy:
            return
        search = self._location.search or ""
        if search == self._written or search == self._read:
            # Our own write coming back, or the browser echoing the address already read.
            self._to_url()
            return
        self._read = search
        warnings, self._notices = self._notices, []
        try:
            params = settings_schema.split_query_string(search)
        except ValueError as exc:
            params, warnings = {}, [*warnings, str(exc)]
        params.pop(LANG_PARAM, None)  # read once, when the page was built
        lesson = (
            params.pop(settings_schema.LESSON_PARAM, None) if self._lessons is not None else None
        )
        presenter = params.pop(PRESENTER_PARAM, None) if self._tools is not None else None
        in_class = self._classroom is not None
        class_code = params.pop(CLASS_PARAM, None) if in_class else None
        teach = params.pop(TEACH_PARAM, None) if in_class else None
        self._busy = True
        try:
            if presenter is not None:
                self._tools.presenter = presenter.strip().lower() not in ("", "0", "false", "no")
            if params:
                warnings += self._state.apply_query_params(params)
            if lesson is not None:
                number, problem = settings_schema.parse_lesson(
                    lesson, self._lessons.param.lesson.bounds[1]
                )
                warnings += [problem] if problem else []
                # Only the lab's own settings count: a display flag must not stop the set-up.
                self._lessons.open(number, load=not self._inputs.intersection(params))
            if teach is not None:
                if teach.strip().lower() == "new":
                    self._classroom.start_new()
                else:
                    warnings.append(f"teach={teach!r}: only teach=new starts a class")
            elif class_code is not None:
                self._classroom.join(class_code)  # a refusal shows in the class panel
        finally:
            self._busy = False
        for text in warnings:
            # TRANSLATORS: one of a link's warnings under the headline; {warning} says which.
            self._notify(Phrase(N_("Link: {warning}"), {"warning": text}))
        self._to_url()

    def write(self) -> None:
        """Bring the address up to date now (the lab calls this inside its redraw)."""
        self._to_url()

    def _to_url(self, *events) -> None:
        if self._busy:
            return
        params = {LANG_PARAM: self._language} if self._language else {}
        if self._lessons is not None and self._lessons.lesson:
            params[settings_schema.LESSON_PARAM] = str(self._lessons.lesson)
        if self._tools is not None and self._tools.presenter:
            params[PRESENTER_PARAM] = "1"
        if self._classroom is not None and self._classroom.session.code:
            params[CLASS_PARAM] = self._classroom.session.code
        search = settings_schema.query_string(params | self._state.query_params())
        if search == (self._location.search or "") and search == self._written:
            return
        self._written = search
        self._busy = True
        try:
            self._location.search = search
        finally:
            self._busy = False


def _notify_warning(text: str) -> None:
    # The link is read while the page is built; a toast raised then never reached the browser
    # (Panel's notification area shows only what arrives after it has drawn), so it waits for
    # the page to load. Once loaded, or outside a server, it shows at once.
    pn.state.onload(lambda: notify("warning", text))
