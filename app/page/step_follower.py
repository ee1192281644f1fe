"""What a lab page does as its lesson moves on: the sidebar shows and outlines the controls a
step names, "More settings" opens when a step or a link needs what is behind it, and Measure's
verdict and a counted vote are told to a screen reader.

`Lab` (app/page/lab_page.py) makes one per page and hands it the parts it follows.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from app.i18n.markers import N_
from app.lessons.lab_lessons import control_names
from app.state.route_news import vote_counted
from app.state.settings_schema import FIELDS

# The sidebar button that opens "More settings", by the name the pointer finds it by.
MORE_SETTINGS = N_("More settings: candidates, engine, key/value pairs")
MORE_SETTINGS_BUTTON = MORE_SETTINGS.split(":")[0]
# What the sidebar's pointer says (app/js/control_pointer.js), {names} the controls' labels.
POINTER_WORDS = {
    # TRANSLATORS: a line in the header while the sidebar is folded; {names} are controls.
    "cue": N_("☰ Open the sidebar for {names}"),
    # TRANSLATORS: told to a screen reader when a lesson step opens with the sidebar folded.
    "folded": N_(
        "In the sidebar (open it with the menu button), the controls this step uses: {names}."
    ),
    # TRANSLATORS: told to a screen reader when the sidebar outlines a step's controls.
    "highlighted": N_("Highlighted in the sidebar, the controls this step uses: {names}."),
}


def pointer_words(tr) -> dict[str, str]:
    """`POINTER_WORDS` in `tr`'s language, for the pointer's `words` (its script's own)."""
    return {key: tr.gettext(text) for key, text in POINTER_WORDS.items()}


# The settings' labels, by which a step's bold names are known whatever the page's language.
LABELS = tuple(field.label for field in FIELDS.values() if field.label)


def shown_name(name: str, tr) -> str:
    """A control a step names in English, as the page labels it in `tr`'s language.

    A step's bold name is a control's English label, or a setting's label without its bracketed
    note ("Temperature τ" for "Temperature τ (log scale)"): the label is the catalogue's id, so
    its translation is what the sidebar shows, and the pointer finds the control in any
    language by the text the browser has (app/js/control_pointer.js)."""
    for label in LABELS:
        if name == label:
            return tr.gettext(label)
        if name == label.split(" (")[0].strip():
            # Without its bracketed note, as the step wrote it (Chinese brackets "（").
            return re.split(r" \(|（", tr.gettext(label))[0].strip()
    if name == MORE_SETTINGS_BUTTON:
        return re.split(r":|：", tr.gettext(MORE_SETTINGS))[0]
    return tr.gettext(name)


class StepFollower:
    """Follows one page's lesson steps, settings and votes (watchers set up here)."""

    def __init__(
        self,
        *,
        state,
        lessons,
        pointer,
        more_settings,
        status,
        session,
        settings_built: Callable[[], bool],
        watched_settings: tuple[str, ...],
        behind_more_settings: frozenset[str],
        later: Callable[[Callable[[], None]], None],
    ):
        self.state, self.lessons, self.pointer = state, lessons, pointer
        self.more_settings, self.status, self.session = more_settings, status, session
        self.settings_built = settings_built
        self.behind_more_settings = behind_more_settings
        # Work for a later turn of the server's loop (the page's choice: see Lab).
        self.later = later
        for name in watched_settings:
            state.param.watch(self.setting_moved, name)
        lessons.param.watch(self.lesson_opened, "lesson")
        lessons.param.watch(self.measured, "outcome")
        more_settings.button.param.watch(self.more_settings_opened, "open")
        session.param.watch(self.vote_counted, "my_vote")

    def setting_moved(self, event) -> None:
        # A link, an import, a scenario or a lesson moved a setting that is behind "More
        # settings": show its control, so the page never hides what it is using.
        if not self.settings_built() and event.new != self.state.param[event.name].default:
            self.more_settings.show()

    def names_hidden_settings(self, step) -> bool:
        return bool(set(control_names(step)) & self.behind_more_settings)

    def lesson_opened(self, event) -> None:
        """A step that names a control behind "More settings" opens it; the sidebar scrolls to
        the controls the step names and outlines them."""
        step = self.lessons.step
        if self.names_hidden_settings(step) and not self.more_settings.button.open:
            if self.session.role == "student":
                # A class's Next opens this step on every student's page at once, and building
                # these controls on each held up the next Next and the votes
                # (docs/performance.md). So a student opens them with one press, and the
                # pointer shows that button first.
                self.pointer.point(self.shown([MORE_SETTINGS_BUTTON, *control_names(step)]))
                return
            # Built once the server's loop has nothing else waiting: a class's Next reaches
            # the teacher's page first, and its settings after it.
            self.later(lambda: self.open_settings_for(step))
            return
        self.point_at(step)

    def open_settings_for(self, step) -> None:
        if self.lessons.step is step:  # unless a newer step was opened meanwhile
            self.more_settings.show()  # which points at them (more_settings_opened)

    def more_settings_opened(self, event) -> None:
        """Opened, by the page or the student: outline the ones the step names, now drawn."""
        step = self.lessons.step
        if event.new and step is not None and self.names_hidden_settings(step):
            self.point_at(step)

    def point_at(self, step) -> None:
        names = control_names(step)
        # The ones the action asks for first: the sidebar scrolls to the first found.
        acted = [n for n in names if f"**{n}**" in step.action]
        self.pointer.point(self.shown(dict.fromkeys(acted + names)))

    def shown(self, names) -> list[str]:
        """The controls named, as this page labels them (its language's labels)."""
        return [shown_name(name, self.lessons.tr) for name in names]

    def measured(self, event) -> None:
        """Measure's verdict, told to a screen reader (the status's live region) and scrolled
        into view."""
        if event.new is not None:
            self.status.news.say(self.lessons.verdict)
            self.pointer.show_verdict()

    def vote_counted(self, event) -> None:
        """A student's prediction reached the class: say so (not on a rejoin's first drawing)."""
        # The vote is the answer's index; the page says the answer as it showed it.
        choices = self.lessons.choice_texts()
        if event.new is not None and event.new != event.old and 0 <= event.new < len(choices):
            self.status.news.say(vote_counted(choices[event.new]))
