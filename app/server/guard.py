"""The served lab's guard against a hostile room: what every request and websocket passes.

A class reaches the lab from one school address on a shared Wi-Fi, and everything a client
sends is untrusted. This module holds the server's side of that (docs/deployment.md,
"Security", gives the whole threat model):

- **The teacher's key never enters a session token.** Bokeh copies a request's cookies into
  the token it embeds in the page (and `autoload.js` hands that token to any website). The
  page handler reads the class cookies itself, attaches them to the request as a `Visitor`
  (app/classroom/visitor.py), and strips the teacher's from what Bokeh sees; the websocket
  handler does the same for a session built when the page connects.
- **The student's id is an HttpOnly cookie** set with the page, out of every script's reach.
- **Closed or narrowed routes**: `autoload.js` (an embedding route the lab never uses) is
  gone; a request carrying its own session id or token is refused with a plain 403; Panel's
  component route serves only the lab's own packages' files; `/liveness?endpoint=` (which
  builds a whole page) answers only to this machine.
- **Per-address ceilings**, sized for a school behind one NAT address: page loads and
  websocket opens per minute, open websockets at once.
- **Forwarded addresses from trusted proxies only** (`--trusted-proxy`; the Tornado patch is
  app/patches/forwarded.py): Tornado's `--use-xheaders` believes any client's X-Real-IP.
- **Security headers** on every HTTP answer: a Content-Security-Policy that the page passes
  (nothing from another origin, no framing), nosniff, a referrer policy, HSTS under HTTPS.
"""

from __future__ import annotations

import ipaddress
import logging
import threading
import time
from collections.abc import Iterable

from tornado.web import HTTPError, OutputTransform, RequestHandler

from app.classroom import codes
from app.classroom.session import STUDENT_COOKIE, TEACHER_COOKIE_PREFIX
from app.classroom.store import IDLE_S
from app.classroom.visitor import ATTRIBUTE, read_visitor
from app.patches.server_routes import edit_app_routes

log = logging.getLogger("attention_lab.guard")

# What a page of the lab needs, and nothing else: its scripts and styles from this origin
# (Bokeh builds its CustomJS callbacks with `new Function`, Panel inlines styles and a
# bootstrapping script, and loads some of its modules as blobs it makes), images drawn inline (the QR code, Bokeh's canvas exports), the
# websocket back to this origin. No framing by another site, no form posted elsewhere.
# No other origin at all: every script, stylesheet, font and image is the lab's own (a lecture
# hall has no internet; tests/browser/test_offline_walk.py, tests/app/test_page_resources.py).
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline' 'unsafe-eval' blob:",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "worker-src 'self' blob:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'self'",
    )
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "SAMEORIGIN",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}
HSTS = "max-age=31536000"

# Per address, sized for a whole school behind one NAT: a class of 200 opening the lab at once
# is 200 pages and 200 websockets, each reconnecting after a Wi-Fi drop.
PAGES_PER_ADDRESS_PER_MINUTE = 1200
SOCKETS_PER_ADDRESS_PER_MINUTE = 1200
OPEN_SOCKETS_PER_ADDRESS = 1500
# The component route's files come from these packages only (Panel's own resources, Bokeh's,
# the lab's); Panel would otherwise import any installed module a URL names.
COMPONENT_PACKAGES = frozenset({"panel", "bokeh", "app", "attention_lab_assets"})
LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))


class Window:
    """Counts per key in fixed windows, bounded in size; thread-safe."""

    def __init__(self, limit: int, window_s: float, clock=time.monotonic, max_keys: int = 50_000):
        self.limit, self.window_s, self.clock, self.max_keys = limit, window_s, clock, max_keys
        self._counts: dict[str, tuple[float, int]] = {}
        self._lock = threading.Lock()

    def allow(self, key: str) -> bool:
        with self._lock:
            now = self.clock()
            if len(self._counts) >= self.max_keys:
                self._counts = {k: v for k, v in self._counts.items() if now - v[0] < self.window_s}
            start, count = self._counts.get(key, (now, 0))
            if now - start >= self.window_s:
                start, count = now, 0
            if count >= self.limit:
                return False
            self._counts[key] = (start, count + 1)
            return True


class Gauge:
    """Open things per key (websockets per address), with a ceiling."""

    def __init__(self, limit: int):
        self.limit = limit
        self._open: dict[str, int] = {}
        self._lock = threading.Lock()

    def enter(self, key: str) -> bool:
        with self._lock:
            if self._open.get(key, 0) >= self.limit:
                return False
            self._open[key] = self._open.get(key, 0) + 1
            return True

    def leave(self, key: str) -> None:
        with self._lock:
            left = self._open.get(key, 0) - 1
            if left > 0:
                self._open[key] = left
            else:
                self._open.pop(key, None)

    def count(self, key: str) -> int:
        with self._lock:
            return self._open.get(key, 0)


PAGES = Window(PAGES_PER_ADDRESS_PER_MINUTE, 60)
SOCKET_OPENS = Window(SOCKETS_PER_ADDRESS_PER_MINUTE, 60)
OPEN_SOCKETS = Gauge(OPEN_SOCKETS_PER_ADDRESS)


# -- cookies ------------------------------------------------------------------------------------


def without_teacher_keys(cookie_header: str) -> str:
    """A Cookie header with every teacher's key left out (the rest as the browser sent it)."""
    kept = []
    for part in cookie_header.split(";"):
        name = part.split("=", 1)[0].strip()
        if name and not name.startswith(TEACHER_COOKIE_PREFIX):
            kept.append(part.strip())
    return "; ".join(kept)


def set_class_cookie(handler: RequestHandler, name: str, value: str) -> None:
    """A class cookie (the student's id, a teacher's key): HttpOnly, same-site, Secure under
    HTTPS, as long as an idle class lives."""
    handler.set_cookie(
        name,
        value,
        path="/",
        httponly=True,
        samesite="Lax",
        secure=handler.request.protocol == "https",
        max_age=IDLE_S,
    )


def attach_visitor(handler: RequestHandler, *, mint: bool) -> None:
    """Read the class cookies of the handler's request into a Visitor on the request, strip
    the teacher keys from its Cookie header (so no token carries them), and, with `mint`,
    give a browser that came without one its student id as an HttpOnly cookie."""
    # Tornado's parse (a malformed header reads as no cookies; Tornado bounds its size).
    cookies = {name: morsel.value for name, morsel in handler.request.cookies.items()}
    minted = ""
    if mint and not codes.is_student_id(cookies.get(STUDENT_COOKIE, "")):
        minted = codes.new_student_id()
        set_class_cookie(handler, STUDENT_COOKIE, minted)
    setattr(handler.request, ATTRIBUTE, read_visitor(cookies, client_of(handler), minted))
    header = handler.request.headers.get("Cookie")
    if header is not None and TEACHER_COOKIE_PREFIX in header:
        stripped = without_teacher_keys(header)
        del handler.request.headers["Cookie"]
        if stripped:
            handler.request.headers["Cookie"] = stripped
        handler.request.__dict__.pop("_cookies", None)  # Tornado's parsed copy


def client_of(handler: RequestHandler) -> str:
    """The client's address as the lab trusts it (a trusted balancer's word, else the peer)."""
    return str(handler.request.remote_ip or "")[:64]


def _refuse(handler: RequestHandler, status: int, text: str) -> None:
    handler.set_status(status)
    handler.set_header("Content-Type", "text/plain; charset=utf-8")
    handler.set_header("Cache-Control", "no-store")
    if status == 429:
        handler.set_header("Retry-After", "60")
    handler.finish(text)


# -- the handlers ---------------------------------------------------------------------------------


def page_handler(base: type) -> type:
    """Panel's page handler with the guard in front of it."""

    class LabPageHandler(base):
        guarded = True

        def prepare(self):
            arguments = self.request.arguments
            if (
                "bokeh-token" in arguments
                or "bokeh-session-id" in arguments
                or "Bokeh-Session-Id" in self.request.headers
            ):
                # The lab makes every session itself: a request naming one is someone
                # trying to attach to another's page.
                return _refuse(self, 403, "This address does not accept a session id or token.")
            if not PAGES.allow(client_of(self)):
                return _refuse(self, 429, "Too many pages opened from this network; wait a minute.")
            attach_visitor(self, mint=True)
            return super().prepare()

    return LabPageHandler


def websocket_handler(base: type) -> type:
    """The page's websocket handler with the guard in front of it: the visitor read from the
    websocket's own request (a session built now reads it), and ceilings per address."""

    class LabWebSocketHandler(base):
        guarded = True
        _counted = ""

        def prepare(self):
            if not token_is_good(self):
                # Bokeh would accept the handshake and then close it; a refusal is a 403.
                raise HTTPError(403, "invalid or expired session token")
            attach_visitor(self, mint=False)
            client = client_of(self)
            if not SOCKET_OPENS.allow(client):
                raise HTTPError(429, "too many connections opened from this network")
            if not OPEN_SOCKETS.enter(client):
                raise HTTPError(429, "too many open connections from this network")
            self._counted = client
            return super().prepare()

        def on_close(self):
            self._release()
            return super().on_close()

        def on_finish(self):
            # Called at the handshake too (Tornado finishes a websocket's request early): a
            # refused handshake gives its count back here, an open socket in on_close.
            if self.get_status() != 101:
                self._release()
            return super().on_finish()

        def _release(self):
            if self._counted:
                OPEN_SOCKETS.leave(self._counted)
                self._counted = ""

        def open(self, *args, **kwargs):
            try:
                return super().open(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - a bad token is the client's problem
                # Bokeh raises after closing a websocket whose token is forged, unsigned or
                # expired; that is a refusal, not a server error with a traceback.
                log.info("websocket refused: %s", str(exc)[:120])
                self._release()
                return None

    return LabWebSocketHandler


def token_is_good(handler: RequestHandler) -> bool:
    """Is the token a websocket offers (its second subprotocol) signed by this deployment's
    secret and unexpired? Checked before the handshake, so a forged one gets a plain 403."""
    from bokeh.util.token import check_token_signature, get_token_payload

    offered = handler.request.headers.get("Sec-WebSocket-Protocol", "")[:16384]
    parts = [p.strip() for p in offered.split(",")]
    if len(parts) != 2 or parts[0] != "bokeh":
        return True  # Bokeh refuses a handshake without its subprotocol itself
    token, app = parts[1], handler.application
    try:
        if not check_token_signature(token, secret_key=app.secret_key, signed=app.sign_sessions):
            return False
        expiry = get_token_payload(token).get("session_expiry")
    except Exception:  # noqa: BLE001 - a token that does not even parse
        return False
    return isinstance(expiry, int | float) and expiry > time.time()


def liveness_handler(base: type) -> type:
    """Panel's liveness check; its `?endpoint=` form builds a whole page, so only this machine
    (a container's health check, an operator's shell) may ask for it."""

    class LabLivenessHandler(base):
        async def get(self):
            if self.get_argument("endpoint", None) is not None and not is_loopback(
                _peer(self.request)
            ):
                raise HTTPError(403, "the endpoint check answers only on this machine")
            return await super().get()

    return LabLivenessHandler


def component_handler(base: type) -> type:
    """Panel's component resource route, for the lab's own packages only."""

    class LabComponentHandler(base):
        def parse_url_path(self, path: str) -> str:
            module = path.split("/", 1)[0]
            if module.split(".", 1)[0] not in COMPONENT_PACKAGES:
                raise HTTPError(404, "not a component of this lab")
            return super().parse_url_path(path)

    return LabComponentHandler


def _peer(request) -> str:
    """The connection's own address, before any forwarded header was applied."""
    context = getattr(getattr(request, "connection", None), "context", None)
    return str(getattr(context, "_orig_remote_ip", None) or request.remote_ip or "")


def is_loopback(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in LOOPBACK)


class SecurityHeaders(OutputTransform):
    """The headers every HTTP answer of the lab carries."""

    def __init__(self, request):
        super().__init__(request)
        self._https = request.protocol == "https"

    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        for name, value in SECURITY_HEADERS.items():
            headers.setdefault(name, value)
        if self._https:
            headers.setdefault("Strict-Transport-Security", HSTS)
        return super().transform_first_chunk(status_code, headers, chunk, finishing)


# -- installing -----------------------------------------------------------------------------------


def guard_routes() -> None:
    """Put the guarded page and websocket handlers into Bokeh's per-application route table
    (Panel's own handlers are there already) and take `autoload.js` out of it."""

    def edit(pattern: str, handler: type) -> type | None:
        if pattern == r"/autoload.js":
            return None
        if getattr(handler, "guarded", False):
            return handler
        if pattern == r"/ws":
            return websocket_handler(handler)
        if pattern == r"/?":
            return page_handler(handler)
        return handler

    edit_app_routes(edit)


def guard_extra_patterns(patterns: list) -> None:
    """The liveness and component routes Panel adds, narrowed (in place)."""
    from panel.io.liveness import LivenessHandler
    from panel.io.server import ComponentResourceHandler

    for index, pattern in enumerate(patterns):
        handler = pattern[1]
        if handler is LivenessHandler:
            patterns[index] = (pattern[0], liveness_handler(handler), *pattern[2:])
        elif handler is ComponentResourceHandler:
            patterns[index] = (pattern[0], component_handler(handler), *pattern[2:])


# -- forwarded addresses ------------------------------------------------------------------------


def parse_networks(texts: Iterable[str]) -> list:
    """CIDRs or addresses ("10.0.0.0/8", "127.0.0.1") as networks; ValueError names a bad one."""
    networks = []
    for text in texts:
        try:
            networks.append(ipaddress.ip_network(text.strip(), strict=False))
        except ValueError:
            raise ValueError(
                f"{text!r} is not an address or a network such as 10.0.0.0/8"
            ) from None
    return networks
