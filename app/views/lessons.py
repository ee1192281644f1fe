"""The lessons stepper: load a step, predict, act (by hand or with one button), measure.

The steps themselves (text, action, measurement) live in app/lessons.py; this is only their page.
"""

from __future__ import annotations

import html

import panel as pn

from app.lessons import LESSONS


class LessonsView(pn.viewable.Viewer):
    def __init__(self, state, **params):
        super().__init__(**params)
        self._state = state
        self._index = 0
        self._before = None
        self.position = pn.pane.Markdown("", margin=(0, 10, -8, 10), css_classes=["lab-lesson-pos"])
        self.previous = pn.widgets.Button(label="◀ Previous", width=110)
        self.next = pn.widgets.Button(label="Next ▶", width=110)
        self.load = pn.widgets.Button(label="Load this step", button_type="primary", width=150)
        self.text = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.choices = pn.widgets.RadioBoxGroup(
            options=[], value=None, inline=False, label="Your prediction"
        )
        self.action = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.do_it = pn.widgets.Button(label="Do it for me", width=140)
        self.measure = pn.widgets.Button(label="Measure", button_type="success", width=140)
        self.result = pn.pane.Markdown(
            "", sizing_mode="stretch_width", css_classes=["lab-lesson-result"]
        )
        self.previous.on_click(lambda e: self._go(self._index - 1))
        self.next.on_click(lambda e: self._go(self._index + 1))
        self.load.on_click(self._load)
        self.do_it.on_click(self._act)
        self.measure.on_click(self._measure)
        self._show()

    @property
    def step(self):
        return LESSONS[self._index]

    def _go(self, index: int) -> None:
        self._index = max(0, min(len(LESSONS) - 1, index))
        self._before = None
        self._show()

    def _show(self) -> None:
        step = self.step
        self.position.object = (
            f"**Step {self._index + 1} of {len(LESSONS)}** · {html.escape(step.part)}"
        )
        self.previous.disabled = self._index == 0
        self.next.disabled = self._index == len(LESSONS) - 1
        self.text.object = (
            f"### {html.escape(step.title)}\n\n{html.escape(step.setup)}\n\n"
            f"**Predict:** {html.escape(step.question)}"
        )
        self.choices.options = {text: i for i, text in enumerate(step.choices)}
        self.choices.value = None
        self.action.object = f"**Then act:** {html.escape(step.action)}"
        self.result.object = "Load the step, make your prediction, act, then press Measure."
        self._set_ready(False)

    def _set_ready(self, ready: bool) -> None:
        self.do_it.disabled = not ready
        self.measure.disabled = not ready

    def _load(self, _event=None) -> None:
        try:
            self._before = self.step.start(self._state)
        except Exception as exc:  # noqa: BLE001 - a message in the page, never a traceback
            self.result.object = html.escape(f"This step could not start: {exc}")
            return
        self.result.object = "Loaded. Predict, act, then press Measure."
        self._set_ready(True)

    def _act(self, _event=None) -> None:
        try:
            self.step.act(self._state)
        except Exception as exc:  # noqa: BLE001
            self.result.object = html.escape(f"The action failed: {exc}")

    def _measure(self, _event=None) -> None:
        if self._before is None:
            return
        step, after = self.step, self._state.snapshot
        try:
            measured = step.measure(self._before, after)
            confirmed = step.confirms(self._before, after)
        except Exception as exc:  # noqa: BLE001
            self.result.object = html.escape(f"Could not measure: {exc}")
            return
        choice = self.choices.value
        if choice is None:
            verdict = "You made no prediction this time."
        elif step.is_right(choice):
            verdict = "Your prediction was right."
        else:
            verdict = f"The expected answer was: *{html.escape(step.choices[step.answer])}*."
        outcome = (
            "The measurement bears it out."
            if confirmed
            else "The measurement does not show it yet: did you do the action exactly?"
        )
        self.result.object = (
            f"**Measured:** {html.escape(measured)}\n\n{verdict} {outcome}\n\n"
            f"{html.escape(step.takeaway)}"
        )

    def __panel__(self):
        return pn.Column(
            pn.Row(self.previous, self.next, self.load),
            self.position,
            self.text,
            self.choices,
            self.action,
            pn.Row(self.do_it, self.measure),
            self.result,
            sizing_mode="stretch_width",
            css_classes=["lab-lessons"],
        )
