"""The lesson pane while the student explores a sentence of their own on a model step.

A model step asks about its own sentence (step 19 about 'was' and 'loan'). When the student
types another sentence, or opens the other model, the step's question no longer fits what is on
screen: the pane then says the student is exploring, holds the question, its answers, the action
and Measure back, and offers a button that puts the step's own sentence back (the step loaded
again). The step's title and introduction stay, so the student still sees what it was about.
"""

from __future__ import annotations

import html

import panel as pn

from app.i18n.translator import ENGLISH, Translator
from app.state.model_state import short_title


def exploring(step, model: str, text: str) -> bool:
    """Is a model step's model source showing something else than the step's sentence?"""
    return getattr(step, "source", "") == "model" and (model != step.model or text != step.text)


def exploring_words(step, model: str, text: str, tr: Translator = ENGLISH) -> str:
    """What the pane says instead of the step's question, as Markdown, in `tr`'s language."""
    _ = tr.gettext
    shown = text if len(text) <= 80 else text[:77] + "..."
    # The sentences and the models' names are data: escaped, never translated.
    values = {
        "sentence": html.escape(shown),
        "step_sentence": html.escape(step.text),
        "step_model": html.escape(short_title(step.model)),
    }
    if model == step.model:
        template = _(
            "**You are exploring your own sentence**: “{sentence}”. This step asks about "
            "“{step_sentence}” on {step_model}, so its question waits until that sentence is "
            "back."
        )
        return template.format(**values)
    template = _(
        "**You are exploring your own sentence** on {model}: “{sentence}”. This step asks "
        "about “{step_sentence}” on {step_model}, so its question waits until that sentence "
        "is back."
    )
    return template.format(model=html.escape(short_title(model)), **values)


class ExploringNote:
    """The note and the button of one `LessonsView`; `check()` after anything that may change
    whether the student explores (a step shown or loaded, the model source's text or model)."""

    def __init__(self, lessons):
        self._lessons = lessons
        _ = lessons.tr.gettext
        self._watched = None
        self.active = False
        self.note = pn.pane.Markdown("", visible=False, sizing_mode="stretch_width")
        self.back = pn.widgets.Button(
            label=_("Put the step's sentence back"),
            color="primary",
            visible=False,
            width=240,
        )
        self.back.on_click(lambda _e: self.put_back())

    def watch(self, mstate) -> None:
        """Follow a model source (once): the page makes it only when a model is first opened."""
        if self._watched is mstate:
            return
        self._watched = mstate
        mstate.param.watch(lambda *_e: self.check(), ["model", "text"])

    def put_back(self) -> None:
        self._lessons.open(self._lessons.lesson or 1)

    def _asking(self) -> list:
        """The parts of the pane that ask the step's question."""
        lessons = self._lessons
        # The result line too: "Loaded. Predict, act..." or a verdict is about the step's sentence.
        parts = [lessons.choices, lessons.action, lessons.do_it, lessons.measure, lessons.result]
        question = getattr(lessons, "question", None)  # the question's own pane, where it has one
        return [question, *parts] if question is not None else parts

    def check(self) -> None:
        lessons, m = self._lessons, self._watched
        step = lessons.step
        now = (
            m is not None
            and lessons.ready  # a step being set up changes the sentence on its way
            and exploring(step, m.model, m.text)
        )
        if now:
            self.note.object = exploring_words(step, m.model, m.text, lessons.tr)
        if now == self.active:
            return
        self.active = now
        self.note.visible = self.back.visible = now
        for part in self._asking():
            part.visible = not now
        if not now:
            # The step's own "nothing to do" rule for its button (a step without an action).
            lessons.do_it.visible = getattr(step, "act", None) is not None
        lessons.update_hold()  # the student's own sentence is not held back; the step's is
