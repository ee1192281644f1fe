"""The header's "Teach a class" button, and the cookie that keeps a student the same student.

A plain HTML form posts to /class/new (app/server/class_routes.py), which sets the teacher's
HttpOnly cookie and redirects to the class's page: the key never passes through the page.
"""

from __future__ import annotations

import param
from panel.reactive import ReactiveHTML

import attention_lab_assets
from app import js
from app.classroom.session import NEW_ROUTE


class ClassLink(ReactiveHTML):
    student = param.String(default="", doc="this browser's class id, kept as a cookie")
    navigate = param.String(default="", doc="an address the page goes to when set")
    in_class = param.Boolean(default=False, doc="the page is in a class: no Teach button")

    _template = (
        f'<form id="teach_form" method="post" action="{NEW_ROUTE}" class="lab-teach-form">'
        '<button id="teach_btn" type="submit" class="lab-teach" '
        'title="Start a class: students join with a code and follow your steps">'
        "Teach a class</button></form>"
    )
    _scripts = js.sections("class_link.js")  # noqa: RUF012 - Panel reads this class attribute
    _stylesheets = [attention_lab_assets.read_text("components", "page-tools.css")]  # noqa: RUF012
