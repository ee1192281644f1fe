"""A hostile room against one real lab process on loopback (issue #45): what one student on the
school's shared address can try with HTTP and websockets, and what must still hold for the
rest of the class. Each test bounds its attempts in count and time; the browser's side of the
same (typing codes, another site's page) is tests/browser/test_abuse_browser.py, and the
balancer's and Redis's side is tests/server/test_deploy_security.py."""

from __future__ import annotations

import asyncio
import http.cookiejar
import os
import re
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import psutil
import pytest
from labserver import http_get, session_token, websocket_handshake
from waiting import wait_until

from app.classroom import store as rules
from app.server.guard import SECURITY_HEADERS
from tools.harness import serve_lab

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def room_lab(tmp_path_factory):
    """A lab of its own: the limits below are per process, and the suite's shared lab must
    not inherit one test's spent allowance."""
    server = serve_lab(tmp_path_factory.mktemp("abuse") / "server.log")
    yield server
    server.stop()


class Browser:
    """One device: its own cookie jar, redirects not followed."""

    def __init__(self, base: str):
        self.base = base
        self.jar = http.cookiejar.CookieJar()

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):
                return None

        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), NoRedirect
        )

    def request(self, path: str, *, method: str = "GET", headers=None):
        req = urllib.request.Request(
            self.base + path, data=b"" if method == "POST" else None, method=method
        )
        for name, value in (headers or {}).items():
            req.add_header(name, value)
        try:
            with self.opener.open(req, timeout=60) as response:
                return response.status, response.headers, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.headers, error.read().decode(errors="replace")

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.jar if c.name == name), None)

    def open_lab(self) -> str:
        status, _, body = self.request("/app")
        assert status == 200
        return body

    def start_class(self) -> str:
        status, headers, _ = self.request("/class/new", method="POST")
        assert status == 303, status
        return headers["Location"].rsplit("class=", 1)[1]


def assert_key_in_no_token_or_page(teacher: Browser, code: str) -> str:
    """The class's page as its teacher gets it holds the key neither in its text nor in the
    session token (whose cookies Bokeh copies from the request); returns the key."""
    from bokeh.util.token import get_token_payload

    key = teacher.cookie(f"alab_teach_{code}")
    status, _, page = teacher.request(f"/app?class={code}")
    assert status == 200 and key and key not in page
    payload = get_token_payload(session_token(page))
    assert f"alab_teach_{code}" not in payload.get("cookies", {})
    assert key not in repr(payload)
    return key


def test_one_browser_starting_classes_never_stops_the_teacher_next_door(room_lab):
    eager = Browser(room_lab.base)
    eager.open_lab()
    statuses = [
        eager.request("/class/new", method="POST")[0] for _ in range(rules.CREATES_PER_BROWSER + 3)
    ]
    assert statuses[: rules.CREATES_PER_BROWSER] == [303] * rules.CREATES_PER_BROWSER
    assert statuses[rules.CREATES_PER_BROWSER :] == [429] * 3
    teacher = Browser(room_lab.base)  # the same address, another browser
    teacher.open_lab()
    code = teacher.start_class()
    assert teacher.cookie(f"alab_teach_{code}")


def test_a_client_sending_its_own_address_changes_nothing(room_lab):
    # No cookie, so one bucket per address; a new X-Real-IP per request must not open a new
    # one when the lab trusts no proxy.
    spoofer = Browser(room_lab.base)
    statuses = []
    for n in range(rules.CREATES_PER_BROWSER + 2):
        forged = f"10.9.{n}.1"
        headers = {"X-Real-IP": forged, "X-Forwarded-For": forged}
        statuses.append(spoofer.request("/class/new", method="POST", headers=headers)[0])
        spoofer.jar.clear()  # and a fresh cookie-less client each time
    assert statuses[-2:] == [429, 429], statuses


def test_behind_a_trusted_balancer_each_forwarded_address_is_its_own(tmp_path):
    lab = serve_lab(tmp_path / "server.log", "--trusted-proxy", "127.0.0.1/32")
    try:
        client = Browser(lab.base)
        statuses = []
        for n in range(rules.CREATES_PER_BROWSER + 2):
            forged = f"10.8.{n}.1"
            headers = {"X-Real-IP": forged}
            statuses.append(client.request("/class/new", method="POST", headers=headers)[0])
            client.jar.clear()
        assert statuses == [303] * len(statuses)
    finally:
        lab.stop()


def test_the_teachers_key_is_in_no_token_no_page_and_no_script_route(room_lab):
    teacher = Browser(room_lab.base)
    teacher.open_lab()
    key = assert_key_in_no_token_or_page(teacher, teacher.start_class())
    # The embedding route that handed any website a token is gone; no answer opens to all.
    status, headers, body = teacher.request(
        "/app/autoload.js?bokeh-autoload-element=x", headers={"Origin": "http://evil.test"}
    )
    assert status == 404 and key not in body
    assert headers.get("Access-Control-Allow-Origin") is None
    status, headers, _ = teacher.request("/app", headers={"Origin": "http://evil.test"})
    assert headers.get("Access-Control-Allow-Origin") is None


def test_the_student_id_is_an_httponly_cookie_the_server_sets(room_lab):
    status, headers, _ = http_get(room_lab.url)
    cookie = headers.get("Set-Cookie", "")
    assert status == 200 and cookie.startswith("alab_student=")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_a_forged_or_expired_token_is_refused_with_a_plain_403(room_lab):
    from bokeh.util.token import generate_jwt_token, generate_session_id

    ws = room_lab.url.replace("http://", "ws://") + "/ws"
    origin = room_lab.base
    page = http_get(room_lab.url)[2].decode()
    assert websocket_handshake(ws, session_token(page), origin) == 101
    secret = os.environ["BOKEH_SECRET_KEY"].encode()  # the lab's too (tools/__init__.py)
    session_id = generate_session_id(secret_key=secret, signed=True)
    unsigned = generate_jwt_token(session_id, secret_key=None, signed=False)
    wrong_secret = generate_jwt_token(session_id, secret_key=b"x" * 48, signed=True)
    expired = generate_jwt_token(session_id, secret_key=secret, signed=True, expiration=-60)
    for token in (unsigned, wrong_secret, expired, "not-a-token"):
        assert websocket_handshake(ws, token, origin) == 403
    # A page request naming a session is refused too, never a traceback.
    for query in ("?bokeh-session-id=" + session_id, "?bokeh-token=" + unsigned):
        status, _, body = http_get(room_lab.url + query)
        assert status == 403 and b"Traceback" not in body
    assert http_get(room_lab.url, headers={"Bokeh-Session-Id": session_id})[0] == 403
    assert "Traceback" not in room_lab.log()


def test_no_log_line_carries_a_whole_session_id(room_lab):
    http_get(room_lab.url)
    page = http_get(room_lab.url)[2].decode()
    token = session_token(page)
    from bokeh.util.token import get_session_id

    session_id = get_session_id(token)
    websocket_handshake(room_lab.url.replace("http://", "ws://") + "/ws", token, room_lab.base)

    def session_logged() -> str:  # the page-built line is written as the session opens
        log = room_lab.log()
        return log if session_id[:6] in log or "page built" in log else ""

    log = wait_until(session_logged, "the session's line in the log")
    assert session_id not in log and token not in log
    assert not re.search(r"[A-Za-z0-9_\-]{40,}", log), "a long id in the log"


def test_new_theme_values_build_and_keep_no_new_pages(room_lab):
    process = psutil.Process(room_lab.pid)
    for _ in range(3):
        http_get(room_lab.url)
    before = process.memory_info().rss
    for n in range(40):
        assert http_get(f"{room_lab.url}?theme=t{n}")[0] == 200
    grown = (process.memory_info().rss - before) / 2**20
    # Each page kept was about 1.8 MB (40 pages: ~70 MB); one cached page serves every value.
    assert grown < 20, f"{grown:.1f} MB kept for 40 theme values"


def test_an_oversized_websocket_message_is_cut_off_and_the_server_carries_on(room_lab):
    page = http_get(room_lab.url)[2].decode()
    ws = room_lab.url.replace("http://", "ws://") + "/ws"

    async def send_big() -> object:
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        request = HTTPRequest(ws, headers={"Origin": room_lab.base}, request_timeout=30)
        connection = await websocket_connect(request, subprotocols=["bokeh", session_token(page)])
        await connection.write_message("x" * (3 * 2**20))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            message = await connection.read_message()
            if message is None:
                return connection.close_code
        return "still open"

    with ThreadPoolExecutor(max_workers=1) as pool:
        closed = pool.submit(asyncio.run, send_big()).result()
    assert closed == 1009  # "message too big"
    assert http_get(room_lab.base + "/liveness")[0] == 200


def test_the_component_route_serves_the_labs_packages_only(room_lab):
    page = http_get(room_lab.url)[2].decode()
    used = re.findall(r'(?:href|src)="([^"]*components/[^"]+)"', page)
    for path in (
        "/components/os/path/_css/x.css",
        "/components/subprocess/Popen/_css/x.css",
        "/components/antigravity/x/_css/y.css",
    ):
        assert http_get(room_lab.base + path)[0] == 404
    for link in used[:3]:  # whatever the page itself asks for still comes
        path = link if link.startswith("/") else "/" + link.split("/", 3)[-1]
        assert http_get(room_lab.base + path.replace("./", "/"))[0] == 200, link


def test_every_answer_carries_the_security_headers(room_lab):
    page = http_get(room_lab.url)[2].decode()
    static = next(u for u in re.findall(r'src="([^"]+\.js[^"]*)"', page) if "static" in u)
    for path in ("/app", "/liveness", static if static.startswith("/") else "/" + static):
        _, headers, _ = http_get(room_lab.base + path)
        for name, value in SECURITY_HEADERS.items():
            assert headers.get(name) == value, (path, name)
    assert "frame-ancestors 'self'" in SECURITY_HEADERS["Content-Security-Policy"]
    assert "Strict-Transport-Security" not in http_get(room_lab.url)[1]  # plain HTTP here


def test_the_per_address_ceilings_count_and_give_back():
    # The served ceilings are far above a class (1200 page loads a minute, 1500 open sockets);
    # the counters behind them, in-process.
    from app.server import guard

    window = guard.Window(limit=3, window_s=60, clock=lambda: 0.0)
    assert [window.allow("10.0.0.1") for _ in range(4)] == [True, True, True, False]
    assert window.allow("10.0.0.2")
    gauge = guard.Gauge(limit=2)
    assert gauge.enter("a") and gauge.enter("a") and not gauge.enter("a")
    gauge.leave("a")
    assert gauge.enter("a") and gauge.count("a") == 2
