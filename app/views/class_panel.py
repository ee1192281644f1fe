"""A class on the page: joining, the teacher's pacing and the class's predictions.

Built per session above the lesson stepper. Not in a class, it is one folded "Join a class"
line. The teacher gets the join code (projector-size, with a QR code drawn here by segno),
Lock, Reveal and the live chart of the class's votes; a student gets "Follow the teacher",
whether their prediction is counted, and the chart once the teacher reveals it. What the
store says arrives through the page's ClassSession (app/classroom/session.py) on this
session's own thread.
"""

from __future__ import annotations

import html
import textwrap

import numpy as np
import panel as pn
import param
import segno
from bokeh.models import AdaptiveTicker, ColumnDataSource, Range1d
from bokeh.models.glyphs import HBar, Text

from app.classroom.session import DEVICE_ROUTE, NEW_ROUTE, ClassSession, in_language
from app.i18n.said import Said
from app.i18n.translator import ENGLISH, Translator
from app.state.chart_tables import votes_table
from app.views.lesson_panel import ALL_LESSONS, LessonsView

from .class_parts import CLASS_CSS, ClassParts, JoinForm, TeacherControls
from .headings import card_header
from .plot_text import PlotText
from .style import OKABE_ITO, add_glyph, assign, f32, make_figure

NEUTRAL = OKABE_ITO["blue"]
RIGHT = OKABE_ITO["green"]
WRONG_AFTER_REVEAL = "#b9c3cc"
# A choice's text above its bar, wrapped to two lines that fit a phone's chart.
CAPTION_LINE = 40
ROW_PX = 80


def choices_of(step: int) -> tuple[str, ...]:
    if 1 <= step <= len(ALL_LESSONS):
        return tuple(ALL_LESSONS[step - 1].choices)
    return ()


def answer_of(step: int) -> int | None:
    return ALL_LESSONS[step - 1].answer if 1 <= step <= len(ALL_LESSONS) else None


def shown_choice(choice, tr: Translator) -> str:
    """A step's answer in `tr`'s language (the lesson declares it in English, `N_`)."""
    return choice.text(tr) if isinstance(choice, Said) else tr.gettext(choice)


def vote_rows(step: int, tally, *, mark_answer: bool, tr: Translator = ENGLISH) -> dict:
    """The chart's columns: one row per choice of the step, in the lesson's order. The store
    counts a choice by its index, whatever language each student saw it in; the rows write
    it in the language of the page that draws the chart."""
    texts = [shown_choice(choice, tr) for choice in choices_of(step)]
    counts = [int(tally.counts.get(i, 0)) if tally else 0 for i in range(len(texts))]
    answer = answer_of(step) if mark_answer else None
    correct = [i == answer for i in range(len(texts))]
    if answer is None:
        colors = [NEUTRAL] * len(texts)
    else:
        colors = [RIGHT if ok else WRONG_AFTER_REVEAL for ok in correct]
    captions = [caption(("✓ " if ok else "") + t) for t, ok in zip(texts, correct, strict=True)]
    return {
        "choice": list(texts),
        "count": counts,
        "row": f32(np.arange(len(texts))),
        "correct": correct,
        "color": colors,
        "caption": captions,
        "caption_y": f32(np.arange(len(texts)) - 0.1),
        "bar_y": f32(np.arange(len(texts)) + 0.12),
        "shown": [str(c) for c in counts],
    }


def caption(text: str, width: int = CAPTION_LINE) -> str:
    """At most two lines of about `width` characters, broken between words."""
    lines = textwrap.wrap(text, width) or [""]
    if len(lines) > 2:
        lines = [lines[0], textwrap.shorten(" ".join(lines[1:]), width, placeholder=" …")]
    return "\n".join(lines)


class VotesChart:
    """The class's predictions for one step: a bar per choice, its text above it."""

    def __init__(self, tr: Translator = ENGLISH):
        self.tr = tr
        _ = tr.gettext
        self.source = ColumnDataSource(
            name="class_votes", data=vote_rows(0, None, mark_answer=False)
        )
        # TRANSLATORS: the title of the chart of the class's votes (the teacher's screen).
        fig = make_figure(
            _("The class's predictions"), height=260, x_range=Range1d(0, 1), y_range=Range1d(1, -1)
        )
        fig.width = None  # the lesson column's width, not Bokeh's default 600 px
        fig.name = "class_votes_plot"
        fig.yaxis.visible = False
        # TRANSLATORS: the axis of the class's votes chart: how many students chose an answer.
        fig.xaxis.axis_label = _("students")
        fig.xaxis.ticker = AdaptiveTicker(min_interval=1, num_minor_ticks=0)  # whole students
        fig.ygrid.visible = False
        add_glyph(
            fig,
            HBar,
            y="bar_y",
            right="count",
            left=0,
            height=0.42,
            source=self.source,
            fill_color="color",
            line_color=None,
        )
        self.captions = Text(
            x=0,
            y="caption_y",
            text="caption",
            text_font_size="15px",
            text_baseline="bottom",
            text_line_height=1.15,
            text_color="#1f2a33",
        )
        fig.add_glyph(self.source, self.captions)
        self.counts = Text(
            x="count",
            y="bar_y",
            text="shown",
            x_offset=6,
            text_font_size="15px",
            text_baseline="middle",
            text_font_style="bold",
            text_color="#1f2a33",
        )
        fig.add_glyph(self.source, self.counts)
        self.figure = fig
        self.text = PlotText(_("The class's predictions in words"), tr)

    def update(self, step: int, tally, *, mark_answer: bool) -> None:
        rows = vote_rows(step, tally, mark_answer=mark_answer, tr=self.tr)
        assign(self.source, rows)
        self.text.show((votes_table(step, rows, revealed=mark_answer),))
        n = len(rows["choice"])
        top = max([1, *rows["count"]])
        self.figure.x_range.update(start=0, end=top * 1.25 + 0.5)
        self.figure.y_range.update(start=n - 0.45, end=-0.75)
        height = 70 + ROW_PX * max(n, 1)
        if self.figure.height != height:
            self.figure.height = height


def refusals_html(counts: dict[str, int], tr: Translator = ENGLISH) -> str:
    """What the class's door and the code limits refused lately, in words."""
    _, ngettext = tr.gettext, tr.ngettext
    wrong, closed = counts.get("wrong codes", 0), counts.get("closed", 0)
    full, seats = counts.get("full", 0), counts.get("seats", 0)
    # TRANSLATORS: the teacher's More card: refusals lately. {wrong_codes} is "N wrong code(s)",
    # {joins} is "N join(s)" (both translated below), {full} and {seats} are numbers.
    sentence = _(
        "Refused lately: {wrong_codes} from this network (last 10 minutes, each browser is "
        "limited on its own); in the last hour {joins} while the door was shut, {full} while "
        "the class was full, {seats} for too many new seats from one network."
    )
    # TRANSLATORS: part of "Refused lately: ...": codes typed that name no class.
    wrong_codes = ngettext("{n} wrong code", "{n} wrong codes", wrong).format(n=wrong)
    # TRANSLATORS: part of "Refused lately: ...": students refused at the class's door.
    joins = ngettext("{n} join", "{n} joins", closed).format(n=closed)
    return (
        f'<p class="lab-class-refused" data-refused-wrong="{wrong}" '
        f'data-refused-closed="{closed}">'
        + html.escape(sentence.format(wrong_codes=wrong_codes, joins=joins, full=full, seats=seats))
        + "</p>"
    )


def seat_label(seat, n: int, tr: Translator = ENGLISH) -> str:
    """A seat in the teacher's list: its number, nickname and whether it is active (the
    number tells two seats without a nickname apart; no id is shown)."""
    _ = tr.gettext
    name = seat.nickname or _("no nickname")
    if seat.active:
        # TRANSLATORS: a seat in the teacher's list: its number, the student's nickname.
        return _("{number}. {name} · active").format(number=n, name=name)
    return _("{number}. {name} · idle").format(number=n, name=name)


def devices_html(devices, tr: Translator = ENGLISH) -> str:
    _ = tr.gettext
    items = "".join(
        "<li>{}</li>".format(
            # TRANSLATORS: the teacher's device list: the device this page runs on.
            _("{device} (this one)").format(device=html.escape(d.label.text(tr)))
            if d.mine
            else html.escape(d.label.text(tr))
        )
        for d in devices
    )
    lead = _(
        'Devices that teach this class (another device joins as a student, then presses "I '
        'teach this class"; you approve it here):'
    )
    return (
        f'<p class="lab-class-devices-lead">{html.escape(lead, quote=False)}</p>'
        f'<ul class="lab-class-devices">{items}</ul>'
    )


def join_html(code: str, address: str, link: str, tr: Translator = ENGLISH) -> str:
    """The projector's join panel: the code huge, where to type it, and a QR of the link."""
    _ = tr.gettext
    qr = segno.make(link, error="m").svg_inline(scale=7, border=2, dark="#000000")
    shown = html.escape(code)
    # TRANSLATORS: what a screen reader says of the projected code, letter by letter.
    code_name = html.escape(_("class code {letters}").format(letters=" ".join(code)))
    # TRANSLATORS: the projector's join panel; {address} is the lab's address, in bold.
    how = html.escape(_("Open {address} and type the code, or scan:"), quote=False).format(
        address=f"<b>{html.escape(address)}</b>"
    )
    qr_name = html.escape(_("QR code of {link}").format(link=link))
    # TRANSLATORS: the projector's join panel's heading, above the code.
    lead = html.escape(_("Join the class"))
    return (
        '<div class="lab-join">'
        f'<p class="lab-join-lead">{lead}</p>'
        f'<p class="lab-join-code" data-class-code="{shown}" aria-label="{code_name}">'
        f'{shown[:3]}<span class="lab-join-gap"></span>{shown[3:]}</p>'
        f'<p class="lab-join-how">{how}</p>'
        f'<div class="lab-join-qr" role="img" aria-label="{qr_name}" dir="ltr">'
        f"{qr}</div>"
        f'<p class="lab-join-link" dir="ltr">{html.escape(link)}</p>'
        "</div>"
    )


class ClassView(pn.viewable.Viewer):
    session = param.ClassSelector(class_=ClassSession, constant=True, doc="this page's part")
    lessons = param.ClassSelector(class_=LessonsView, constant=True, doc="the steps it paces")

    def __init__(
        self,
        session: ClassSession,
        lessons,
        *,
        page_address,
        style_figure=None,
        tr: Translator = ENGLISH,
        **params,
    ):
        super().__init__(session=session, lessons=lessons, **params)
        self.tr = tr
        _ = tr.gettext
        join = _("Join a class")
        self._address = page_address  # () -> (origin, path) of this page, e.g. http://h:5006, /app
        self._template = self._link = None
        self._loaded = False
        pn.state.onload(self._page_loaded)
        # Each group of widgets is built whole the first time a page needs it (app/views/
        # class_parts.py): most pages never join, and these were a tenth of a page.
        self.join_form: JoinForm | None = None  # when "Join a class" is first unfolded
        self.parts: ClassParts | None = None  # when the page first joins, or tries to
        self.teacher: TeacherControls | None = None  # when the page first teaches
        self.chart: VotesChart | None = None  # when the page first shows the class's votes
        self._asking_devices = 0
        # Folded; its form goes into a box that is there from the start: filling the card itself
        # would redraw its header and drop the keyboard focus that unfolded it. A plain Column
        # until then: the form's wrapping row (a FlexBox, a ReactiveHTML of its own) would cost
        # every page's build.
        self._join_holder = pn.Column(sizing_mode="stretch_width", margin=0)
        self.join_box = pn.Card(
            self._join_holder,
            title=join,
            header=card_header(join),
            collapsed=True,
            sizing_mode="stretch_width",
            margin=(0, 10, 6, 10),
            css_classes=["lab-class-join"],
        )
        self.join_box.param.watch(self._join_box_opened, "collapsed")
        self._style_figure = style_figure or (lambda fig: None)
        # Watchers, not dependencies: each must run after the watchers registered before it (a
        # dependency runs first), e.g. the page's own reaction to a lesson opened.
        session.param.watch(
            self._changed,
            [
                "code",
                "role",
                "step",
                "locked",
                "tally",
                "my_vote",
                "joined",
                "connected",
                "problem",
                "open",
                "asking",
                "devices_changed",
            ],
        )
        session.param.watch(self._device_approved, "approved")
        lessons.param.watch(self._lesson_moved, "lesson")
        lessons.param.watch(self._measured, "outcome")
        lessons.param.watch(self._predicted, "prediction")
        self._layout = pn.Column(
            self.join_box, sizing_mode="stretch_width", margin=0, css_classes=["lab-class"]
        )
        self._modal = None  # the template's modal holds the join panel, once built
        self._changed()

    def _join_box_opened(self, event) -> None:
        if event.new or self.join_form is not None:
            return
        form = self.join_form = JoinForm.build(self.tr)
        form.button.on_click(lambda e: self.join(form.code.value, form.nickname.value))
        self._join_holder.objects = [form.row()]

    def _build_class_parts(self) -> ClassParts:
        parts = self.parts = ClassParts.build(self.tr)
        parts.follow.param.watch(self._follow_changed, "value")
        parts.ask_button.on_click(lambda e: self.session.ask_to_teach())
        parts.close_join.on_click(lambda e: self._template and self._template.close_modal())
        # The votes sit in the step, under its question.
        self.lessons.show_class_votes(parts.chart_pane, parts.outcome)
        if self._modal is not None:
            self._modal.objects = [parts.join_panel, parts.close_join]
        self._layout.extend(parts.in_layout())
        return parts

    def _build_teacher_controls(self, parts: ClassParts) -> None:
        s = self.session
        t = self.teacher = TeacherControls.build(self.tr, locked=s.locked, open_door=s.open)
        t.show_code.on_click(lambda e: self.open_join_panel())
        t.lock.param.watch(lambda e: s.set_locked(e.new), "value")
        t.reveal_button.on_click(lambda e: s.reveal())
        t.end_button.on_click(lambda e: s.end())
        t.door.param.watch(lambda e: s.set_open(e.new), "value")
        t.seat_reload.on_click(lambda e: self._draw_seats())
        t.seat_remove.on_click(self._remove_seat)
        t.device_revoke.on_click(self._revoke_device)
        parts.teacher_more.param.watch(self._more_opened, "collapsed")
        parts.teacher_row.objects = t.row()
        parts.teacher_more.objects = t.more(parts.asks_box)

    def _more_opened(self, event) -> None:
        if not event.new:
            self._draw_more()

    def _draw_more(self) -> None:
        """The door, what was refused, the seats and the devices, read when the card opens."""
        s, t = self.session, self.teacher
        if t.door.value != s.open:
            t.door.value = s.open
        refused = s.refusals()
        t.refused.object = refusals_html(refused, self.tr)
        self._draw_seats()
        self._draw_devices()

    def _draw_seats(self) -> None:
        seats = self.session.seats()
        options = {seat_label(seat, n, self.tr): seat.ref for n, seat in enumerate(seats, 1)}
        self.teacher.seat_list.options = options
        if self.teacher.seat_list.value not in options.values():
            self.teacher.seat_list.value = next(iter(options.values()), None)
        active, _ = sum(seat.active for seat in seats), self.tr.gettext
        # TRANSLATORS: the name of the teacher's list of seats; {active} is a number.
        self.teacher.seat_list.name = _("Seats ({active} active)").format(active=active)
        self.teacher.seat_remove.disabled = not options

    def _remove_seat(self, _event=None) -> None:
        if self.teacher.seat_list.value and self.session.remove_seat(self.teacher.seat_list.value):
            self._draw_seats()

    def _draw_devices(self) -> None:
        devices = self.session.devices()
        self.teacher.device_list.object = devices_html(devices, self.tr)
        others = {d.label.text(self.tr): d.ref for d in devices if not d.mine}
        self.teacher.device_pick.options = others
        if self.teacher.device_pick.value not in others.values():
            self.teacher.device_pick.value = next(iter(others.values()), None)
        self.teacher.device_pick.visible = self.teacher.device_revoke.visible = bool(others)

    def _revoke_device(self, _event=None) -> None:
        if self.teacher.device_pick.value and self.session.revoke_device(
            self.teacher.device_pick.value
        ):
            self._draw_devices()

    def _draw_asks(self) -> None:
        """A device asking to teach: its pairing number with Approve and Refuse."""
        _ = self.tr.gettext
        asks = self.session.asks() if self.session.role == "teacher" else []
        rows = []
        for ask in asks:
            approve = pn.widgets.Button(label=_("Approve"), color="primary", min_width=110)
            refuse = pn.widgets.Button(label=_("Refuse"), min_width=90)
            approve.on_click(lambda e, ref=ask.ref: self._answer(ref, True))
            refuse.on_click(lambda e, ref=ask.ref: self._answer(ref, False))
            # TRANSLATORS: {pairing} is the four-digit number the asking device shows, in bold.
            said = _("A device asks to teach this class. Approve it only if it shows {pairing}.")
            pairing = f'<b dir="ltr">{html.escape(ask.pairing)}</b>'
            text = pn.pane.HTML(
                '<p class="lab-class-ask" role="status">'
                f"{html.escape(said, quote=False).format(pairing=pairing)}</p>",
                stylesheets=[CLASS_CSS],
                margin=(0, 5),
            )
            rows.append(pn.FlexBox(text, approve, refuse, flex_wrap="wrap", margin=0))
        self.parts.asks_box.objects = rows
        self.parts.asks_box.visible = bool(rows)
        self._asking_devices = len(rows)

    def _answer(self, ref: str, approve: bool) -> None:
        self.session.answer_ask(ref, approve)
        self._draw_asks()
        if not self.parts.teacher_more.collapsed:
            self._draw_devices()

    def _build_chart(self) -> None:
        self.chart = VotesChart(self.tr)
        self._style_figure(self.chart.figure)  # the page's type sizes, presenter mode included
        self.parts.chart_pane.objects = [
            pn.pane.Bokeh(self.chart.figure, sizing_mode="stretch_width"),
            self.chart.text,  # the votes in words, out of sight
        ]

    # -- wiring ----------------------------------------------------------------------------

    def attach(self, template, link) -> None:
        """The page's template (its modal shows the join panel) and header link."""
        self._template, self._link = template, link
        # The template draws its modal's contents once, with the page: a holder, filled when
        # the class parts are built.
        self._modal = pn.Column(sizing_mode="stretch_width")
        if self.parts is not None:
            self._modal.objects = [self.parts.join_panel, self.parts.close_join]
        template.modal.append(self._modal)

    def join(self, code: str, nickname: str = "") -> bool:
        if not self._loaded:
            # Only a page that has drawn joins. Bokeh also builds sessions no page adopts (a
            # reconnect that lands on another replica, from the original request's cookies):
            # joining then would count a student who is not there.
            pn.state.onload(lambda: self.join(code, nickname))
            return True
        joined = self.session.join(code, nickname)
        if joined and self.session.is_teacher and self.session.step == 0:
            self.open_join_panel()  # a new class: the projector shows how to join first
        return joined

    def _page_loaded(self) -> None:
        self._loaded = True

    def start_new(self) -> None:
        """/app?teach=new: go to the route that starts a class and sets the teacher's key."""
        self._link.navigate = in_language(NEW_ROUTE, self.tr.code)

    def open_join_panel(self) -> None:
        s = self.session
        if not s.code or self._template is None or self.parts is None:
            return
        origin, path = self._address()
        link = f"{origin}{path}?class={s.code}"
        self.parts.join_panel.object = join_html(
            s.code, f"{origin}{path}".split("://", 1)[-1], link, self.tr
        )
        if self._loaded:
            self._template.open_modal()
        else:  # a modal opened before the page has drawn never shows: open it once it has
            pn.state.onload(self._template.open_modal)

    def _device_approved(self, _event=None) -> None:
        """The teacher approved this device: its own request to the class route turns the
        approval into the teacher's cookie on this browser, and brings the page back."""
        s = self.session
        if s.approved and s.code and self._link is not None:
            self._link.navigate = in_language(f"{DEVICE_ROUTE}?code={s.code}", self.tr.code)

    def _lesson_moved(self, event) -> None:
        step = event.new
        if self.session.is_teacher:
            self.session.teach_step(step)
        self.session.show_step(step)
        self._set_waiting()

    def _set_waiting(self) -> None:
        """A student's page on the class's step holds the step's answer back until the
        teacher's Reveal, Measure or not (docs/teaching.md): the vote measures thinking, and
        no neighbour's screen shows the numbers early. Off the class's step, or teaching, a
        page holds it back until its own Measure, as any page does."""
        s, lesson = self.session, self.lessons.lesson
        tally = s.tally
        revealed = bool(tally and tally.revealed and tally.step == lesson)
        waiting = bool(s.code) and s.role == "student" and lesson == s.step != 0 and not revealed
        if self.lessons.class_waiting != waiting:
            self.lessons.class_waiting = waiting

    def _predicted(self, event) -> None:
        if event.new is not None and event.new != self.session.my_vote:
            self.session.vote(self.lessons.lesson, event.new)

    def _measured(self, event) -> None:
        if event.new is None:
            return
        step, choice, right, confirmed = event.new
        if choice is not None:
            self.session.report_measured(step, right and confirmed)

    def _follow_changed(self, event) -> None:
        self.session.follow = event.new
        if event.new:
            self._go_to_class_step()

    def _go_to_class_step(self) -> None:
        s = self.session
        if s.role == "student" and s.step and (s.follow or s.locked):
            if self.lessons.lesson != s.step:
                self.lessons.open(s.step)

    # -- drawing ----------------------------------------------------------------------------

    def _changed(self, *events) -> None:
        s = self.session
        names = {e.name for e in events}
        in_class = bool(s.code) and s.role != ""
        teacher, student = s.role == "teacher", s.role == "student"
        parts = self.parts
        if parts is None:
            if not (s.code or s.problem):
                if self._link is not None:
                    self._link.in_class = False
                return
            parts = self._build_class_parts()
        with pn.io.hold():
            if teacher and self.teacher is None:
                self._build_teacher_controls(parts)
            self.join_box.visible = not s.code
            parts.teacher_row.visible = parts.teacher_more.visible = teacher
            parts.follow.visible = student
            parts.ask_button.visible = student and not s.asking
            parts.follow.disabled = s.locked
            if student and s.locked and not parts.follow.value:
                parts.follow.value = True
            self.lessons.pinned = student and s.locked
            if teacher and self.teacher.lock.value != s.locked:
                self.teacher.lock.value = s.locked
            if teacher and (not names or names & {"devices_changed", "role", "code"}):
                self._draw_asks()
                if not parts.teacher_more.collapsed:
                    self._draw_more()
            elif not teacher and parts.asks_box.visible:
                parts.asks_box.objects, parts.asks_box.visible = [], False
                self._asking_devices = 0
            parts.status.object = self._status_html() if s.code else ""
            parts.status.visible = bool(s.code)
            parts.problem.object = self._problem_html()
            parts.problem.visible = bool(s.problem)
            self._draw_chart(parts)
            if self._link is not None:
                self._link.in_class = in_class
            if student and (not names or names & {"step", "locked", "role"}):
                self._go_to_class_step()
            if student and s.my_vote is not None and self.lessons.lesson == s.shown_step:
                if self.lessons.prediction is None:
                    self.lessons.predict(s.my_vote)  # a rejoin shows the vote kept
            self._set_waiting()

    def _problem_html(self) -> str:
        s = self.session
        if not s.problem:
            return ""
        said = s.problem_said.text(self.tr) if s.problem_said is not None else s.problem
        return f'<p class="lab-class-problem" role="alert">{html.escape(said)}</p>'

    def _status_html(self) -> str:
        s, _ = self.session, self.tr.gettext
        code = f'<b data-class-code="{html.escape(s.code)}">{html.escape(s.code)}</b>'
        if not s.connected:
            lost = html.escape(_("connection lost, retrying"))
            live = f'<span class="lab-class-lost">{lost}</span>'
        else:
            # TRANSLATORS: the class's status line: the page hears the class as it happens.
            hearing = html.escape(_("live"))
            live = f'<span class="lab-class-live">{hearing}</span>'
        if s.role == "teacher":
            # TRANSLATORS: the teacher's status line; {code} is the class's code.
            teaching = self._words(_("You teach class {code}"), code=code)
            return (
                f'<p class="lab-class-status lab-class-teaching">{teaching} · '
                f"{self._teacher_facts()} · {live}</p>"
            )
        if s.my_vote is not None:
            counted = html.escape(_("your prediction is counted"))
            counted = f'<span class="lab-class-counted" data-vote-counted="1">{counted}</span>'
        else:
            counted = html.escape(_("predict below: your answer goes to the class"))
        pace = (
            " · " + html.escape(_("the teacher keeps the class on this step")) if s.locked else ""
        )
        asking = ""
        if s.asking:
            pairing = html.escape(s.asking)
            # TRANSLATORS: a device's status line while it asks to teach.
            words = html.escape(_("asking to teach"))
            # TRANSLATORS: a device that asked to teach; {asking} is "asking to teach" in bold,
            # {pairing} the four-digit number the teacher's screen must show.
            asking = " · " + self._words(
                _("{asking}: the teacher's screen must show {pairing}"),
                asking=f"<b>{words}</b>",
                pairing=f"<b data-pairing='{pairing}' dir='ltr'>{pairing}</b>",
            )
        # TRANSLATORS: a student's status line; {code} is the class's code.
        in_class = self._words(_("In class {code}"), code=code)
        return f'<p class="lab-class-status">{in_class}{pace} · {counted}{asking} · {live}</p>'

    @staticmethod
    def _words(template: str, **parts: str) -> str:
        """A translated sentence as HTML, its `parts` (HTML already) put in its places."""
        return html.escape(template, quote=False).format(**parts)

    def _teacher_facts(self) -> str:
        """How many joined, answered and are on the step, and devices asking to teach."""
        s, _, ngettext = self.session, self.tr.gettext, self.tr.ngettext
        tally = s.tally
        joined = s.joined
        answered = tally.answered if tally else 0
        step = _("step {number}").format(number=s.step) if s.step else _("no step yet")
        # TRANSLATORS: the teacher's status line; {joined} and {answered} are numbers in bold.
        facts = self._words(
            _("{joined} joined · {answered} answered ({step})"),
            joined=f"<b data-class-joined='{joined}'>{joined}</b>",
            answered=f"<b data-class-answered='{answered}'>{answered}</b>",
            step=html.escape(step),
        )
        if s.step and tally is not None and tally.step == s.step:
            # Who sees the step now: the rest are still loading it or not following.
            here = tally.arrived
            share = _("{here} of {joined}").format(here=here, joined=joined)
            # TRANSLATORS: students whose page shows the class's step; {students} is "N of M".
            on_it = ngettext("{students} is on it", "{students} are on it", here)
            facts += " · " + self._words(
                on_it, students=f"<b data-class-arrived='{here}'>{html.escape(share)}</b>"
            )
        if self._asking_devices:
            n = self._asking_devices
            asks = ngettext("{n} device asks to teach", "{n} devices ask to teach", n)
            facts += " · " + self._words(
                _("{devices} (open More to answer)"),
                devices=f"<b data-class-asking='{n}'>{html.escape(asks.format(n=n))}</b>",
            )
        return facts

    def _draw_chart(self, parts: ClassParts) -> None:
        s, _ = self.session, self.tr.gettext
        tally = s.tally
        step = s.shown_step or s.step
        revealed = bool(tally and tally.revealed)
        show = bool(step) and (s.role == "teacher" or (s.role == "student" and revealed))
        parts.chart_pane.visible = show
        parts.outcome.visible = show and revealed
        if not show:
            return
        if self.chart is None:
            self._build_chart()
        self.chart.update(step, tally, mark_answer=revealed)
        # TRANSLATORS: the title of the chart of the class's votes on step {step}.
        self.chart.figure.title.text = _("The class's predictions, step {step}").format(step=step)
        if revealed:
            parts.outcome.object = self._outcome_html(tally)
        elif s.role == "teacher":
            parts.outcome.object = ""

    def _outcome_html(self, tally) -> str:
        """Under the revealed chart: how many who measured saw their prediction borne out."""
        _ = self.tr.gettext
        if tally.measured:
            share = _("{borne_out} of {measured}").format(
                borne_out=tally.borne_out, measured=tally.measured
            )
            measured = self._words(
                # TRANSLATORS: under the revealed votes; {share} is "N of M", in bold.
                _("{share} students who measured saw the result bear their prediction out."),
                share=f"<b>{html.escape(share)}</b>",
            )
        else:
            measured = html.escape(_("Nobody has measured yet: press Measure after you act."))
        ticked = html.escape(_("The right answer is ticked."))
        return (
            f'<p class="lab-class-outcome" data-borne-out="{tally.borne_out}" '
            f'data-measured="{tally.measured}">{ticked} {measured}</p>'
        )

    def __panel__(self):
        return self._layout
