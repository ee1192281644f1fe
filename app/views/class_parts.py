"""The widgets of a class on the page, in the groups `ClassView` builds them in, each in one go.

Most pages never join a class, so none of these is made with the page: the join form when "Join
a class" is first unfolded, the class's parts when the page first joins (or tries to), the
teacher's controls when it first teaches. Each group is made whole by its `build`, so a part of
it is never missing; `ClassView` wires them to its session.
"""

from __future__ import annotations

from dataclasses import dataclass

import panel as pn

import attention_lab_assets
from app.i18n.translator import ENGLISH, Translator

from .headings import card_header

CLASS_CSS = attention_lab_assets.read_text("components", "classroom.css")


@dataclass(frozen=True)
class JoinForm:
    """The join form's fields (a student types the code the projector shows)."""

    code: pn.widgets.TextInput
    nickname: pn.widgets.TextInput
    button: pn.widgets.Button

    @classmethod
    def build(cls, tr: Translator = ENGLISH) -> JoinForm:
        _ = tr.gettext
        return cls(
            code=pn.widgets.TextInput(
                # TRANSLATORS: the join form's example keeps the code's letters (ACE F47).
                label=_("Class code"),
                placeholder=_("e.g. ACE F47"),
                max_length=16,
                width=140,
            ),
            nickname=pn.widgets.TextInput(
                label=_("Nickname (optional; only your teacher sees it)"), max_length=24, width=230
            ),
            # TRANSLATORS: the join form's button.
            button=pn.widgets.Button(label=_("Join"), color="primary", min_width=90),
        )

    def row(self) -> pn.FlexBox:
        # Wraps on a phone: a row of fixed widths would widen the whole page.
        return pn.FlexBox(
            self.code,
            self.nickname,
            self.button,
            flex_wrap="wrap",
            align_items="flex-end",
            margin=0,
        )


def _class_html(**params) -> pn.pane.HTML:
    return pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[CLASS_CSS], **params)


@dataclass(frozen=True)
class ClassParts:
    """What a page in a class shows: its status, the teacher's row and More card (filled by
    `TeacherControls`), the student's switch and ask button, the chart's place and the join
    panel the projector shows."""

    status: pn.pane.HTML
    problem: pn.pane.HTML
    teacher_row: pn.FlexBox
    teacher_more: pn.Card
    follow: pn.widgets.Checkbox
    ask_button: pn.widgets.Button
    # A device asking to teach, answered in the teacher's More card (the status line says one
    # is waiting): a student pressing the button for fun does not fill the projector.
    asks_box: pn.Column
    chart_pane: pn.Column
    outcome: pn.pane.HTML
    join_panel: pn.pane.HTML
    close_join: pn.widgets.Button

    @classmethod
    def build(cls, tr: Translator = ENGLISH) -> ClassParts:
        _ = tr.gettext
        # TRANSLATORS: the teacher's folded card of the class's less used controls.
        more = _("More: the door, seats, devices, end the class")
        return cls(
            status=_class_html(margin=(0, 10)),
            problem=_class_html(margin=(0, 10), visible=False),
            teacher_row=pn.FlexBox(
                visible=False,
                sizing_mode="stretch_width",
                margin=(0, 5),
                css_classes=["lab-class-tools"],
                flex_wrap="wrap",
            ),
            teacher_more=pn.Card(
                title=more,
                header=card_header(more),
                collapsed=True,
                visible=False,
                sizing_mode="stretch_width",
                margin=(0, 10, 6, 10),
            ),
            follow=pn.widgets.Checkbox(
                label=_("Follow the teacher"), value=True, visible=False, margin=(0, 10)
            ),
            # The way a teacher's second device asks to teach.
            ask_button=pn.widgets.Button(
                label=_("I teach this class: pace from this device"),
                button_type="light",
                visible=False,
                margin=(0, 10),
                css_classes=["lab-class-ask-to-teach"],  # wraps in a long language
                stylesheets=[CLASS_CSS],
                description=_(
                    "Asks the teacher's screen to approve this device; nothing secret is shown"
                ),
            ),
            asks_box=pn.Column(visible=False, sizing_mode="stretch_width", margin=(0, 0)),
            chart_pane=pn.Column(sizing_mode="stretch_width", visible=False, margin=0),
            outcome=_class_html(margin=(0, 10), visible=False),
            join_panel=pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[CLASS_CSS]),
            close_join=pn.widgets.Button(
                # TRANSLATORS: closes the projector's join panel.
                label=_("Start the lesson"),
                color="primary",
                min_width=260,
                height=52,
                align="center",
                css_classes=["lab-join-start"],
                stylesheets=[CLASS_CSS],
            ),
        )

    def in_layout(self) -> list:
        """The parts that sit under the join box, in their order (the chart and the outcome
        sit in the lesson step; the join panel in the template's modal)."""
        return [
            self.status,
            self.problem,
            self.teacher_row,
            self.follow,
            self.ask_button,
            self.teacher_more,
        ]


@dataclass(frozen=True)
class TeacherControls:
    """A teacher's pacing (the row) and the More card's door, seats and devices."""

    show_code: pn.widgets.Button
    lock: pn.widgets.Toggle
    reveal_button: pn.widgets.Button
    end_button: pn.widgets.Button
    door: pn.widgets.Checkbox
    refused: pn.pane.HTML
    seat_list: pn.widgets.Select
    seat_remove: pn.widgets.Button
    seat_reload: pn.widgets.Button
    device_list: pn.pane.HTML
    device_pick: pn.widgets.Select
    device_revoke: pn.widgets.Button

    @classmethod
    def build(cls, tr: Translator = ENGLISH, *, locked: bool, open_door: bool) -> TeacherControls:
        _ = tr.gettext
        return cls(
            show_code=pn.widgets.Button(label=_("Show the join code"), min_width=170),
            lock=pn.widgets.Toggle(label=_("Lock to this step"), min_width=160, value=locked),
            reveal_button=pn.widgets.Button(
                label=_("Reveal to the class"), color="warning", min_width=170
            ),
            end_button=pn.widgets.Button(
                label=_("End the class"), color="danger", variant="outline", min_width=140
            ),
            door=pn.widgets.Checkbox(
                label=_("Let newcomers join (seated students always come back)"), value=open_door
            ),
            refused=pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[CLASS_CSS]),
            seat_list=pn.widgets.Select(
                name=_("Seats"),
                options={},
                sizing_mode="stretch_width",
                max_width=360,
                min_width=200,
            ),
            seat_remove=pn.widgets.Button(label=_("Remove this seat"), min_width=160),
            seat_reload=pn.widgets.Button(label=_("List the seats"), min_width=140),
            device_list=pn.pane.HTML("", sizing_mode="stretch_width", stylesheets=[CLASS_CSS]),
            device_pick=pn.widgets.Select(
                name=_("Your other devices"),
                options={},
                sizing_mode="stretch_width",
                max_width=360,
                min_width=200,
            ),
            device_revoke=pn.widgets.Button(label=_("Stop it teaching"), min_width=160),
        )

    def row(self) -> list:
        return [self.show_code, self.lock, self.reveal_button]

    def more(self, asks_box: pn.Column) -> list:
        """The More card's contents, the devices asking to teach first."""
        return [
            asks_box,
            self.door,
            self.refused,
            pn.FlexBox(
                self.seat_list,
                self.seat_remove,
                self.seat_reload,
                flex_wrap="wrap",
                align_items="flex-end",
                margin=0,
            ),
            self.device_list,
            pn.FlexBox(
                self.device_pick,
                self.device_revoke,
                flex_wrap="wrap",
                align_items="flex-end",
                margin=0,
            ),
            self.end_button,
        ]
