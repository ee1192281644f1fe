"""Who a page's browser is in classes, as the server read it from the real HTTP request.

The lab's handlers (app/server/guard.py) read the browser's class cookies from the request
that opens the page or its websocket, attach a `Visitor` to that request, and strip the
teacher's key from what goes into Bokeh's session token: a token travels in the page and in
`autoload.js`, so a key inside it would leave the teacher's browser. A page's session reads
its visitor from the request it was built for (`of_request`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from app.classroom import codes
from app.classroom.session import STUDENT_COOKIE, teacher_keys

ATTRIBUTE = "lab_visitor"


@dataclass(frozen=True)
class Visitor:
    student: str  # the browser's anonymous class id (an HttpOnly cookie)
    teacher_keys: Mapping[str, str] = field(default_factory=dict)  # class code -> key
    client: str = ""  # the address the lab trusts (the balancer's word only)


def read_visitor(cookies: Mapping[str, str], client: str, minted: str = "") -> Visitor:
    """A visitor from a request's cookies; `minted` is the id the response is giving a
    browser that came without one."""
    student = cookies.get(STUDENT_COOKIE, "")
    if not codes.is_student_id(student):
        student = minted
    return Visitor(student=student, teacher_keys=teacher_keys(cookies), client=client[:64])


def of_request(request) -> Visitor | None:
    """The visitor the lab's handlers attached to a page's request, if any (a page built in
    a test, or under a bare `panel serve`, has none)."""
    visitor = getattr(request, ATTRIBUTE, None)
    return visitor if isinstance(visitor, Visitor) else None
