"""The two HTTP routes of a class: start one, and make an approved device a teacher's.

The teacher's right to pace and reveal is a key in an HttpOnly cookie set here, on the
teacher's own browser: never in an address, never in the page's text or its session token
(app/server/guard.py strips it), so a projector shows nothing that would let a student pace.
A second device asks from its own page and the teacher approves it there; its request here
is then bound to its own student id (another HttpOnly cookie), so no link or QR code that
would make anyone a teacher is ever shown. Both routes redirect to the class's page.
"""

from __future__ import annotations

import html

from tornado.web import RequestHandler

from app.classroom import shared
from app.classroom.session import (
    DEVICE_ROUTE,
    LANG_ARGUMENT,
    NEW_ROUTE,
    STUDENT_COOKIE,
    TEACHER_COOKIE_PREFIX,
    in_language,
    told,
)
from app.classroom.store import ClassError, RateLimited, StoreUnavailable, check_code
from app.i18n.languages import SOURCE
from app.i18n.negotiation import MAX_HEADER_CHARS, MAX_QUERY_CHARS, choose
from app.i18n.translator import Translator
from app.server.guard import set_class_cookie

# Both routes sit one folder below the lab's page (/class/... beside /app).
PAGE = "../app"


class _ClassHandler(RequestHandler):
    def _client(self) -> str:
        return (self.request.remote_ip or "")[:64]

    def _browser(self) -> str:
        """This browser's student id (the lab's HttpOnly cookie), '' if it has none."""
        return (self.get_cookie(STUDENT_COOKIE, "") or "")[:64]

    def _language(self) -> tuple[str, bool]:
        """This request's language (its `?lang=`, then its Accept-Language) and whether the
        address named it: the page it redirects to keeps a language the address named."""
        asked = self.get_argument(LANG_ARGUMENT, "")[: MAX_QUERY_CHARS + 1]
        header = self.request.headers.get("Accept-Language", "")[:MAX_HEADER_CHARS]
        choice = choose(asked, header)
        return choice.code, choice.from_link

    def _page(self, address: str = PAGE) -> str:
        code, from_link = self._language()
        return in_language(address, code if from_link else SOURCE)

    def _refuse(self, exc: ClassError) -> None:
        if isinstance(exc, RateLimited):
            self.set_status(429)
        else:
            self.set_status(503 if isinstance(exc, StoreUnavailable) else 403)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        tr = Translator(self._language()[0])
        _ = tr.gettext
        # TRANSLATORS: the title of the page that says why a class could not start.
        title = html.escape(_("Attention Lab: class"))
        back = html.escape(_("Back to the lab"))
        self.write(
            f"<!doctype html><html lang='{tr.lang}' dir='{tr.dir}'>"
            f"<meta name=viewport content='width=device-width'><title>{title}</title>"
            f"<p>{html.escape(told(exc).text(tr))}</p>"
            f"<p><a href='{html.escape(self._page())}'>{back}</a></p>"
        )

    def _teach(self, code: str, key: str) -> None:
        set_class_cookie(self, TEACHER_COOKIE_PREFIX + code, key)
        self.set_header("Cache-Control", "no-store")
        self.redirect(self._page(f"{PAGE}?class={code}"), status=303)


class NewClassHandler(_ClassHandler):
    """POST (the header's button) or GET (/app?teach=new) /class/new: a class, and its key."""

    def post(self) -> None:
        self._start()

    def get(self) -> None:
        self._start()

    def _start(self) -> None:
        try:
            code, key = shared.current().create(client=self._client(), browser=self._browser())
        except ClassError as exc:
            self._refuse(exc)
            return
        self._teach(code, key)


class DeviceHandler(_ClassHandler):
    """GET /class/device?code=C: this browser asked to teach class C from its page and the
    teacher approved it there; the approval, bound to this browser's id, is spent for a key."""

    def get(self) -> None:
        code = self.get_argument("code", "")[:32]
        try:
            key = shared.current().take_approval(code, self._browser())
        except ClassError as exc:
            self._refuse(exc)
            return
        self._teach(check_code(code), key)


ROUTES = [(rf"/{NEW_ROUTE}", NewClassHandler), (rf"/{DEVICE_ROUTE}", DeviceHandler)]
