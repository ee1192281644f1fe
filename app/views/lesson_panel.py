"""The lessons stepper: load a step, predict, act (by hand or with one button), measure.

The steps themselves (text, action, measurement) live in app/lessons/lab_lessons.py; this is only their page.
The step shown is `lesson` (1-based), which the address carries (app/page/urlsync.py), so a
link or a reload opens the same step with its set-up.
"""

from __future__ import annotations

import html

import panel as pn
import param

import attention_lab_assets
from app import js
from app.i18n.markers import N_
from app.i18n.said import Said, shown_value
from app.i18n.translator import ENGLISH
from app.lessons.lab_lessons import LESSONS
from app.lessons.model_lessons import MODEL_LESSONS, ModelStillLoading, reading
from app.patches.bokeh_walks import walk_once
from app.state.lab_state import LabState
from app.state.model_state import short_title
from app.state.sources import SourceSwitch
from app.views.group_name import name_group
from app.views.headings import TITLE_CSS
from app.views.lesson_exploring import ExploringNote

# The hand-made parts, then "A trained head", whose steps open the model source.
ALL_LESSONS = (*LESSONS, *MODEL_LESSONS)
FIRST_MODEL_STEP = len(LESSONS) + 1  # 1-based, as in the address
_ONWARD_FOCUS = js.source("onward_focus.js")
# The question, its answers, the action and Measure stick to the bottom of the lesson column
# while the step's introduction scrolls above them: on a 720p projector in presenter mode they
# fell below the fold (assets/components/lesson-ask.css).
ASK_CSS = attention_lab_assets.read_text("components", "lesson-ask.css")
# The step's buttons as wide as their labels: presenter type ran "◀ Previous" under "Next ▶".
FIT_CSS = attention_lab_assets.read_text("components", "fit-button.css")


# TRANSLATORS: the lesson's result line on a student's page in a class, after Measure and
# before the teacher reveals the step.
WAITING_FOR_REVEAL = N_(
    "Measured and counted for the class. The numbers, and whether your prediction held, "
    "appear when your teacher reveals the answer."
)


def first_step_of(model: str) -> int:
    """The first step (1-based) on the named model: a model's page offers its own lessons."""
    for number, step in enumerate(ALL_LESSONS, start=1):
        if is_model_step(step) and step.model == model:
            return number
    return FIRST_MODEL_STEP


def _text(source: str) -> str:
    """A step's text as Markdown, escaped; its **control names** stay bold (no '*' is escaped)."""
    return html.escape(source)


class LessonsView(pn.viewable.Viewer):
    lesson = param.Integer(
        default=0,
        bounds=(0, len(ALL_LESSONS)),
        doc="the step in the address, 1-based; 0 until a step is loaded or linked",
    )
    pinned = param.Boolean(
        default=False, doc="Previous and Next are off: a class's teacher keeps the page here"
    )
    outcome = param.Parameter(
        default=None, doc="the last Measure: (step, choice or None, prediction right, confirmed)"
    )
    prediction = param.Integer(
        default=None,
        allow_None=True,
        doc="the answer the radio shows as chosen (its index in the step's choices), or None",
    )
    held = param.Parameter(
        default=frozenset(),
        doc="what the open step holds back until it is measured (app/lessons/reveals.py); the "
        "page draws those views neutral meanwhile",
    )
    class_waiting = param.Boolean(
        default=False,
        doc="a student's page on its class's step before the teacher's Reveal: a Measure "
        "then is counted, and shown once the teacher reveals",
    )

    state = param.ClassSelector(class_=LabState, constant=True, doc="the lab the steps set")
    # The source switch lets the trained-head steps open the model; without it only the
    # hand-made steps are offered.
    sources = param.ClassSelector(class_=SourceSwitch, constant=True, allow_None=True)

    def __init__(self, state, *, sources=None, show_ghost=None, tr=ENGLISH, **params):
        super().__init__(state=state, sources=sources, **params)
        # The session's language: the panel's own words and each step's (app/lessons/__init__.py).
        self._tr = tr
        _ = tr.gettext
        self._steps = ALL_LESSONS if sources is not None else LESSONS
        # Draws (or, given None, removes) a faded 'before' output arrow; optional.
        self._show_ghost = show_ghost
        self._index = 0
        self._before = None
        self.verdict = ""  # the last Measure's result in plain words
        # A Measure taken while the class waits for its teacher's Reveal: (result, verdict).
        self._pending: tuple[str, str] | None = None
        self._opened = self._measured = False  # the step shown is set up; it was measured
        # A step waiting for its model to load: ("load" or "restore", its index), or None.
        self._waiting: tuple[str, int] | None = None
        self._watching_loads = False
        # While the student explores a sentence of their own, the step's question waits.
        self.exploring = ExploringNote(self)
        self.position = pn.pane.Markdown("", margin=(0, 10, -8, 10), css_classes=["lab-lesson-pos"])
        self.previous = pn.widgets.Button(label=_("◀ Previous"), width=110, stylesheets=[FIT_CSS])
        self.next = pn.widgets.Button(label=_("Next ▶"), width=110, stylesheets=[FIT_CSS])
        self.load = pn.widgets.Button(
            label=_("Load this step"), color="primary", width=150, stylesheets=[FIT_CSS]
        )
        # The step's title is an h2, the size of the h3 it was (app/views/headings.py).
        self.text = pn.pane.Markdown(
            "", sizing_mode="stretch_width", stylesheets=[TITLE_CSS], disable_anchors=True
        )
        self.question = pn.pane.Markdown("", sizing_mode="stretch_width", margin=(0, 10))
        self.choices = pn.widgets.RadioBoxGroup(
            options=[], value=None, inline=False, label=_("Your prediction")
        )
        # The radio's value is the answer's index as built here, but the answer's text once
        # Panel 1.9.4 has taken its own update of the labels for one from the browser (a step
        # opened inside `pn.io.hold` in the page's onload, as a late class join does): so the
        # prediction is read through `prediction`, whatever form the value has, and the
        # options are put back.
        self.choices.param.watch(self._choice_moved, "value")
        self.choices.param.watch(self._options_moved, "options")
        # What the class answered (app/views/class_panel.py puts its chart here when the page
        # joins a class, `show_class_votes`): under the question it counts, and below the
        # step's buttons, so that a chart appearing or changing height never moves Next or
        # Load under a teacher's pointer. Parts, not a Column: every page would pay for it.
        # Under Measure, not beside the answers: the question's block sticks to the bottom of
        # the lesson column, and a chart in it would push the question off a 720p screen.
        self.class_votes: tuple = ()
        self._layout = self._ask = None
        self.action = pn.pane.Markdown("", sizing_mode="stretch_width")
        self.do_it = pn.widgets.Button(label=_("Do it for me"), width=140, stylesheets=[FIT_CSS])
        self.measure = pn.widgets.Button(
            # TRANSLATORS: the lesson's button that checks the prediction against the lab.
            label=_("Measure"),
            color="success",
            width=140,
            stylesheets=[FIT_CSS],
        )
        self.result = pn.pane.Markdown(
            "", sizing_mode="stretch_width", css_classes=["lab-lesson-result"]
        )
        # After a Measure, the way on sits under the verdict: by keyboard one Tab from Measure
        # (Next above was many Tabs on, or four back), on a phone no scroll back up.
        self.onward = pn.widgets.Button(
            label=_("On to the next step ▶"), width=150, visible=False, stylesheets=[FIT_CSS]
        )
        self.onward.js_on_click(code=_ONWARD_FOCUS)
        self.previous.on_click(self._go_back)
        self.next.on_click(self._go_on)
        self.onward.on_click(self._go_on)
        self.load.on_click(lambda e: self.open(self._index + 1))
        self.do_it.on_click(self._act)
        self.measure.on_click(self._measure)
        self._show()

    def _go_on(self, _event=None) -> None:
        # A pinned page (a locked class) refuses a click its disabled buttons should not have
        # sent: the browser's `disabled` is no guard against a crafted message.
        if not self.pinned:
            self.open(self._index + 2)  # 1-based: the step after this one

    def _go_back(self, _event=None) -> None:
        if not self.pinned:
            self.open(self._index)  # 1-based: one back

    @property
    def step(self):
        return self._steps[self._index]

    def _target(self):
        """The state this step works on, with the page switched to its source."""
        if is_model_step(self.step):
            self.sources.source = "model"
            return self.sources.model
        if self.sources is not None:
            self.sources.source = "scenarios"
        return self.state

    def _scratch(self):
        """A fresh state of the step's kind, to compute its set-up aside."""
        if is_model_step(self.step):
            from app.state.model_state import ModelState

            return ModelState()
        return LabState(backend=self.state.backend)

    @property
    def tr(self):
        """The session's translator: the language this panel and its steps are shown in."""
        return self._tr

    @property
    def ready(self) -> bool:
        """Has the shown step a 'before' to measure against?"""
        return self._before is not None

    def open(self, number: int, *, load: bool = True) -> None:
        """Show step `number` (1-based, clamped) and set the lab up for it.

        With `load=False` the lab keeps its settings (a link that carries the student's own
        settings); the 'before' is then the step's set-up, computed aside, so Measure still
        compares against where the step starts.
        """
        self._index = max(0, min(len(self._steps) - 1, int(number) - 1))
        self._before = None
        self._pending = None
        self._stop_waiting()
        self._ghost(None)
        # The new address and the new set-up leave as one message; and Bokeh walks the page's
        # model graph at most once for the step (app/patches/bokeh_walks.py): after a layout
        # change the step's texts swap their stylesheets, and that was a walk per text pane.
        with pn.io.hold(), walk_once(pn.state.curdoc):
            # Held back before the set-up draws: what the step asks about is never on the page
            # before Measure, not even for one message.
            self._opened, self._measured = True, False
            self._hold(self.step.reveals)
            self.lesson = self._index + 1
            # The result line and the buttons are set once, by the set-up below: a follower's
            # page then sends them only if they differ from the last step's.
            self._show(idle=False)
            if load:
                self._load()
            else:
                self._restore()

    def show(self, number: int) -> None:
        """Show step `number` (1-based) without setting the lab up or changing the address."""
        self._index = max(0, min(len(self._steps) - 1, int(number) - 1))
        self._before = None
        self._pending = None
        self._stop_waiting()
        self._opened = False
        self._hold(())  # the lab is not set up for it: nothing of the step to hold
        self._show()

    def _ghost(self, point) -> None:
        if self._show_ghost is not None:
            self._show_ghost(point)

    def _show(self, *, idle: bool = True) -> None:
        """The step's texts and choices; with `idle`, the result line and buttons of a step not
        yet loaded too (a step that loads now sets those itself)."""
        step = self.step
        _ = self._tr.gettext
        where = _("Step {number} of {total}").format(number=self._index + 1, total=len(self._steps))
        self.position.object = f"**{where}** · {html.escape(_(step.part))}"
        self._set_nav()
        self.text.object = f"## {html.escape(_(step.title))}\n\n{_text(_(step.setup))}"
        predict, act = _("Predict:"), _("Then act:")
        self.question.object = f"**{predict}** {_text(_(step.question))}"
        self.choices.options = self._options()
        self.choices.value = None
        # TRANSLATORS: the name a screen reader gives the answers' group: "Predict: " and the
        # step's question.
        name_group(self.choices, _("Predict: {question}").format(question=_(step.question)))
        self.action.object = f"**{act}** {_text(_(step.action))}"
        # A step with nothing to do (its act is None) offers no button to do it.
        self.do_it.visible = step.act is not None
        if idle:
            self._not_ready(_("Load the step, make your prediction, act, then press Measure."))

    def _not_ready(self, result: str) -> None:
        self.result.object = result
        self._set_ready(False)

    def choice_texts(self) -> list[str]:
        """The step's answers as this page shows them, in its language, in their order."""
        return [self._tr.gettext(text) for text in self.step.choices]

    def _options(self) -> dict[str, int]:
        return {text: i for i, text in enumerate(self.choice_texts())}

    def choice_index(self, value) -> int | None:
        """The answer a radio value names: its index (as the options are built) or its text
        (as a browser's echo leaves them, in the page's language); None for no answer or one
        not in this step."""
        choices = self.choice_texts()
        if isinstance(value, int) and not isinstance(value, bool):
            return value if 0 <= value < len(choices) else None
        if isinstance(value, str) and value in choices:
            return choices.index(value)
        return None

    def predict(self, index: int | None) -> None:
        """Show `index` as the chosen answer (a class seat restored), in the radio's own form."""
        if index is not None and self.choice_index(index) is None:
            return
        options = self.choices.options
        if index is not None and not isinstance(options, dict):
            index = self.choice_texts()[index]
        self.choices.value = index

    def _choice_moved(self, event) -> None:
        if event.new is None and self.choices.options != self._options():
            return  # Panel cleared the choice for the echoed labels: _options_moved restores it
        self.prediction = self.choice_index(event.new)

    def _options_moved(self, event) -> None:
        if event.new == self._options():
            return
        # The labels, echoed: the answers' indices (and the choice Panel cleared for them) go
        # back in, once Panel has finished with the echo: a change made while it syncs the
        # options from the browser is not sent back to the browser.
        doc = pn.state.curdoc
        if doc is not None and doc.session_context is not None:
            pn.state.execute(self._put_options_back, schedule=True)
        else:
            self._put_options_back()

    def _put_options_back(self) -> None:
        wanted = self._options()
        if self.choices.options != wanted:
            shown = self.choice_index(self.choices.value)
            self.choices.param.update(
                options=wanted, value=self.prediction if shown is None else shown
            )

    @param.depends("pinned", watch=True)
    def _set_nav(self) -> None:
        self.previous.disabled = self.pinned or self._index == 0
        self.next.disabled = self.pinned or self._index == len(self._steps) - 1
        self._set_onward()

    def _set_onward(self, measured: bool = False) -> None:
        """The way on under the verdict: shown once a step is measured, while Next is on."""
        last = self._index == len(self._steps) - 1
        if measured and not self.pinned and not last:
            _ = self._tr.gettext
            label = _("On to step {number} ▶").format(number=self._index + 2)
            self.onward.param.update(visible=True, label=label)
        elif self.onward.visible:  # a follower's step change sends nothing more
            self.onward.visible = False

    def _set_ready(self, ready: bool) -> None:
        self.do_it.disabled = not ready
        self.measure.disabled = not ready
        if ready and is_model_step(self.step):
            self.exploring.watch(self.sources.model)
        self.exploring.check()

    def _load(self) -> None:
        try:
            self._before = self.step.start(self._target())
        except ModelStillLoading as exc:
            self._wait_for_model("load", exc)
            return
        except Exception as exc:  # noqa: BLE001 - a message in the page, never a traceback
            self._not_ready(html.escape(self._could_not_start(exc)))
            return
        _ = self._tr.gettext
        self.result.object = _("Loaded. Predict, act, then press Measure.")
        self._set_ready(True)

    def _restore(self) -> None:
        try:
            self._target()  # the link already restored this source's settings
            self._before = self.step.start(self._scratch())
        except ModelStillLoading as exc:
            self._wait_for_model("restore", exc)
            return
        except Exception as exc:  # noqa: BLE001
            self._not_ready(html.escape(self._could_not_start(exc)))
            return
        _ = self._tr.gettext
        self.result.object = _(
            "Restored from the link with its settings. Predict, act, then press Measure "
            "(or Load this step to start it afresh)."
        )
        self._set_ready(True)

    def _could_not_start(self, exc: Exception) -> str:
        # The error itself stays as raised (English, as logged): it names what failed.
        _ = self._tr.gettext
        return _("This step could not start: {error}").format(error=exc)

    def _wait_for_model(self, how: str, exc: ModelStillLoading) -> None:
        """The step's model loads in the background: say so, and start the step (or restore
        it, for a link with settings) by itself once the model source has the model."""
        self._waiting = (how, self._index)
        if not self._watching_loads:
            self.sources.model.param.watch(self._model_loaded, "loading")
            self._watching_loads = True
        waiting = Said(
            "{model} is still loading: this step starts by itself once it is ready (the bar "
            "above the plots shows how far it is).",
            model=short_title(exc.model),
        )
        self._not_ready(html.escape(waiting.text(self._tr)))

    def _stop_waiting(self) -> None:
        """Another step is shown: the one that waited for its model no longer does, and the
        model source no longer switches to that model when it is in."""
        if self._waiting is not None:
            self._waiting = None
            self.sources.model.cancel_loading()

    def _model_loaded(self, event) -> None:
        if event.new or self._waiting is None:
            return
        how, index = self._waiting
        self._waiting = None
        if index == self._index:
            self._load() if how == "load" else self._restore()

    def _act(self, _event=None) -> None:
        if self.step.act is None:
            return
        try:
            self.step.act(self._target())
        except Exception as exc:  # noqa: BLE001
            _ = self._tr.gettext
            failed = _("The action failed: {error}").format(error=exc)
            self.result.object = html.escape(failed)

    def _measure(self, _event=None) -> None:
        if self._before is None:
            return
        step, target = self.step, self._target()
        after = reading(target) if is_model_step(step) else target.snapshot
        try:
            measured = step.measure(self._before, after)
            confirmed = step.confirms(self._before, after)
        except Exception as exc:  # noqa: BLE001
            _ = self._tr.gettext
            failed = _("Could not measure: {error}").format(error=exc)
            self.result.object = html.escape(failed)
            return
        # The reveal: the output before the action stays on the payload plane, faded. A trained
        # head's payload plane turns with its output, so an old output has no place in it.
        if not is_model_step(step):
            self._ghost((float(self._before.output[0]), float(self._before.output[1])))
        choice = self.prediction
        result, spoken = self._verdict(shown_value(measured, self._tr), choice, confirmed)
        if self.class_waiting:
            # Counted for the class now (the outcome below), shown when the teacher reveals:
            # until then this page, and the neighbour who reads it, sees no number.
            self._pending = (result, spoken)
            self.result.object = self.verdict = self._tr.gettext(WAITING_FOR_REVEAL)
        else:
            self._reveal(result, spoken)
        self.outcome = (
            self._index + 1,
            choice,
            choice is not None and step.is_right(choice),
            confirmed,
        )

    def _verdict(self, measured: str, choice: int | None, confirmed: bool) -> tuple[str, str]:
        """Measure's result as Markdown, and as a screen reader is told it (the page's live
        region, app/views/announcer.py), in the page's language."""
        step, _ = self.step, self._tr.gettext
        if choice is None:
            verdict = plain = _("You made no prediction this time.")
        elif step.is_right(choice):
            verdict = plain = _("Your prediction was right.")
        else:
            expected = self.choice_texts()[step.answer]
            verdict = _("**Not this time:** the expected answer was *{answer}*.").format(
                answer=html.escape(expected)
            )
            plain = _("Not this time: the expected answer was {answer}.").format(answer=expected)
        outcome = (
            _("The measurement bears it out.")
            if confirmed
            else _(
                "The measurement does not show it yet: compare the numbers with the action "
                "above, then press Measure again."
            )
        )
        # TRANSLATORS: the start of Measure's result; {measured} is the measured numbers.
        measured_line = _("**Measured:** {measured}.").format(measured=html.escape(measured))
        result = f"{measured_line}\n\n{verdict} {outcome}\n\n{_text(_(step.takeaway))}"
        spoken_measured = _("Measured: {measured}.").format(measured=measured)
        return result, f"{spoken_measured} {plain} {outcome}"

    def update_hold(self) -> None:
        """Hold the step's views back while it is set up and not yet measured, unless the
        student explores a sentence of their own (nothing of the step's is on screen then)."""
        shown = self._opened and not self._measured and not self.exploring.active
        self._hold(self.step.reveals if shown else ())

    def _hold(self, names) -> None:
        # Only a change: Param cannot compare sets, and each assignment redraws the page.
        if frozenset(names) != self.held:
            self.held = frozenset(names)

    def _reveal(self, result: str, spoken: str) -> None:
        # One message: the verdict never reaches the page ahead of the numbers it speaks of.
        with pn.io.hold():
            self.result.object, self.verdict = result, spoken
            self._set_onward(measured=True)
            self._measured = True
            self._hold(())  # every view drawn again, the measured state on them

    @param.depends("class_waiting", watch=True)
    def _class_revealed(self) -> None:
        """The teacher revealed the class's step: a Measure taken before it is shown now."""
        if not self.class_waiting and self._pending is not None:
            result, spoken = self._pending
            self._pending = None
            self._reveal(result, spoken)

    def show_class_votes(self, *views) -> None:
        """Put the class's chart and outcome under the question, once (a page in a class)."""
        if self.class_votes:
            return
        self.class_votes = views
        if self._layout is not None:
            objects = list(self._layout.objects)
            at = objects.index(self._ask) + 1
            self._layout.objects = [*objects[:at], *views, *objects[at:]]

    def __panel__(self):
        if self._layout is None:
            self._ask = pn.Column(
                self.question,
                self.choices,
                self.action,
                pn.Row(self.do_it, self.measure),
                sizing_mode="stretch_width",
                margin=0,
                css_classes=["lab-lesson-ask"],
                stylesheets=[ASK_CSS],
            )
            self._layout = pn.Column(
                pn.Row(self.previous, self.next, self.load),
                self.position,
                self.text,
                self.exploring.note,
                self.exploring.back,
                self._ask,
                *self.class_votes,
                self.result,
                self.onward,
                sizing_mode="stretch_width",
                css_classes=["lab-lessons"],
            )
        return self._layout


def is_model_step(step) -> bool:
    return getattr(step, "source", "scenarios") == "model"
