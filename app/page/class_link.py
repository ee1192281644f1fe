"""A page's part in classes: the header's "Teach a class" button, the cookie that keeps a
student the same student, and the class view above the lessons (`join_classes`).

A plain HTML form posts to /class/new (app/server/class_routes.py), which sets the teacher's
HttpOnly cookie and redirects to the class's page: the key never passes through the page.
"""

from __future__ import annotations

import panel as pn
import param
from panel.reactive import ReactiveHTML

import attention_lab_assets
from app import js
from app.classroom import codes, shared
from app.classroom.session import NEW_ROUTE, ClassSession, in_language
from app.classroom.visitor import of_request, read_visitor
from app.i18n.translator import ENGLISH
from app.page.session_thread import on_session_thread
from app.views.class_panel import ClassView


class ClassLink(ReactiveHTML):
    navigate = param.String(default="", doc="an address the page goes to when set")
    in_class = param.Boolean(default=False, doc="the page is in a class: no Teach button")
    # The route that starts a class, with the page's language: the teacher's page comes back
    # from it speaking the language it was in.
    action = param.String(default=NEW_ROUTE)
    # The button's text and tooltip in the session's language (app/i18n/; English by default).
    teach_text = param.String(default="Teach a class")
    teach_title = param.String(
        default="Start a class: students join with a code and follow your steps"
    )

    _template = (
        '<form id="teach_form" method="post" action="{{action}}" class="lab-teach-form">'
        '<button id="teach_btn" type="submit" class="lab-teach" '
        'title="{{teach_title}}">{{teach_text}}</button></form>'
    )
    _scripts = js.sections("class_link.js")  # noqa: RUF012 - Panel reads this class attribute
    _stylesheets = [attention_lab_assets.read_text("components", "page-tools.css")]  # noqa: RUF012


def join_classes(doc, lessons, *, style_figure, tr=ENGLISH) -> tuple[ClassLink, ClassView]:
    """This page's part in classes: its student id and the teacher keys its browser holds, as
    the lab's server read them from the page's own request (app/classroom/visitor.py), and the
    view above the lessons."""
    request = getattr(getattr(doc, "session_context", None), "request", None)
    served = doc is not None and doc.session_context is not None
    visitor = of_request(request)
    if visitor is None:  # built in-process, or under a bare `panel serve`: the token's cookies
        cookies = dict(pn.state.cookies or {}) if doc is not None else {}
        client = str(getattr(request, "remote_ip", "") or "")
        visitor = read_visitor(cookies, client)
    session = ClassSession(
        shared.current(),
        student_id=visitor.student or codes.new_student_id(),
        teacher_keys=visitor.teacher_keys,
        client=visitor.client,
        deliver=on_session_thread(doc) if served else None,
    )
    view = ClassView(session, lessons, page_address=page_address, style_figure=style_figure, tr=tr)
    return ClassLink(margin=0, action=in_language(NEW_ROUTE, tr.code)), view


def page_address() -> tuple[str, str]:
    """This page's origin and path, as the browser sees them (the balancer's host)."""
    loc = pn.state.location
    if loc is None or not loc.hostname:
        return "http://localhost:5006", "/app"
    port = f":{loc.port}" if loc.port and loc.port not in ("80", "443") else ""
    # Read from the websocket's request under session reuse: /app/ws is the page's /app.
    path = (loc.pathname or "/app").removesuffix("/ws")
    return f"{loc.protocol or 'http:'}//{loc.hostname}{port}", path
