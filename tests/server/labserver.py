"""Helpers for tests that talk to a real `attention-lab` process: HTTP, sessions, websockets,
a cuttable relay, the wheel, and the page's slider.

Starting and stopping processes (lab servers, replicas, HAProxy, Redis) is tools/harness.py's,
shared with the tools; its names are re-exported here for the tests that import them from here.
The suite's shared lab is the session fixture `lab_server` (tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from html.parser import HTMLParser
from pathlib import Path

from tools.harness import (
    ROOT,
    START_TIMEOUT_S,
    LabServer,
    clean_env,
    free_port,
    lab_command,
    start_lab,
)

__all__ = [
    "ROOT",
    "START_TIMEOUT_S",
    "LabServer",
    "clean_env",
    "free_port",
    "lab_command",
    "start_lab",
]


def page_links(html: str) -> list[str]:
    """Every src and href a page asks the browser to load, in order."""

    class Links(HTMLParser):
        def __init__(self):
            super().__init__()
            self.urls: list[str] = []

        def handle_starttag(self, tag, attrs):
            self.urls.extend(value for name, value in attrs if name in {"src", "href"} and value)

    links = Links()
    links.feed(html)
    return links.urls


def http_get(url: str, timeout: float = 30.0, headers: Mapping[str, str] | None = None):
    """(status, headers, body) without following redirects."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(url, headers=dict(headers or {}))
    try:
        with opener.open(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def open_session(url: str, arguments: Mapping[str, str], read) -> dict:
    """Pull the lab's document for a link with these arguments, as a browser would get it, and
    return ``read(document)`` plus "connected". Runs on a thread: Bokeh's client runs its own IO
    loop, and a test process may already run Playwright's."""
    out: dict = {}

    def run():
        from bokeh.client import pull_session
        from tornado.ioloop import IOLoop

        from tools.classload import register_models

        register_models()  # Panel's models (some load lazily) and the lab's own
        session = pull_session(url=url, io_loop=IOLoop(), arguments=dict(arguments))
        try:
            out["connected"] = session.connected
            out.update(read(session.document))
        finally:
            session.close()

    def capture():
        try:
            run()
        except Exception as exc:  # re-raised on the test's thread
            out["error"] = exc

    worker = threading.Thread(target=capture, daemon=True)
    worker.start()
    worker.join(120)
    assert not worker.is_alive(), "opening the session hung"
    if "error" in out:
        raise out["error"]
    return out


def build_wheel(tmp_path: Path) -> Path:
    """The project's wheel, built from a copy of what the image build copies (no tests)."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for folder in ("engine", "app", "assets"):
        shutil.copytree(
            ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["-w", str(tmp_path / "wheels"), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (wheel,) = (tmp_path / "wheels").glob("attention_lab-*.whl")
    return wheel


def session_token(page_html: str) -> str:
    """The Bokeh session token embedded in a served page."""
    match = re.search(r'"token"\s*:\s*"([^"]+)"', page_html)
    if not match:
        raise AssertionError("the page carries no Bokeh session token")
    return match.group(1)


def token_payload(token: str) -> dict:
    """The JSON payload of a Bokeh session token (its first dot-separated part)."""
    import base64

    part = token.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def websocket_handshake(url: str, token: str, origin: str | None) -> int:
    """Open the app's websocket with the given Origin; 101 if accepted, else the HTTP status.

    Runs its own event loop in a worker thread: Playwright's sync API keeps a loop running in
    the main thread for the whole session, and asyncio.run() refuses to nest inside it.
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, _websocket_handshake(url, token, origin)).result()


async def _websocket_handshake(url: str, token: str, origin: str | None) -> int:
    from tornado.httpclient import HTTPClientError, HTTPRequest
    from tornado.websocket import websocket_connect

    headers = {"Origin": origin} if origin else {}
    request = HTTPRequest(url, headers=headers, request_timeout=30)
    try:
        connection = await websocket_connect(request, subprotocols=["bokeh", token])
    except HTTPClientError as error:
        return error.code
    connection.close()
    return 101


class TcpRelay:
    """A loopback TCP relay in front of the lab, whose open connections a test can cut.

    Cutting every connection is what a Wi-Fi drop or a sleeping laptop looks like to the server
    and the browser; the relay keeps listening, so the page can reconnect through it.
    """

    def __init__(self, upstream_port: int):
        import threading

        self.upstream_port = upstream_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.down = False  # while True, new connections are refused (closed at once)
        self.refused = 0  # connections refused while down: the page trying to come back
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import threading

        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self.down or self._closed:
                client.close()
                with self._lock:
                    self.refused += 1
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=10)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open.update((client, upstream))
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                self._drop(sock)

    def _drop(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.discard(sock)
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()

    def cut(self) -> int:
        """Drop every open connection (both directions); returns how many sockets were cut."""
        with self._lock:
            victims = list(self._open)
        for sock in victims:
            self._drop(sock)
        return len(victims)

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        self.cut()


# The session's document (a reconnect may register a second, scratch one after it).
DOC_JS = "Bokeh.documents[0]"
WEIGHTS_JS = f"() => Array.from({DOC_JS}.get_model_by_name('weights').data.weight)"
# Drawn: the weights, or, on a lesson step that holds its numbers until Measure (issue 40,
# app/page/held.py), the headline that says so (tests/browser/labpage.py's LOADED reads the same).
LAB_READY_JS = """() => {
  if (!window.Bokeh || Bokeh.documents.length === 0) return false;
  const doc = Bokeh.documents[0], weights = doc.get_model_by_name('weights');
  if (weights === null) return false;
  return weights.data.weight.length > 0 || [...doc._all_models.values()].some(
    m => typeof m.encoded_text === 'string' && m.encoded_text.startsWith('Predict first'));
}"""
# Moves the temperature slider the way a drag does: by setting the Bokeh model's value.
SET_TEMPERATURE_JS = (
    f"v => {{ const models = [...{DOC_JS}._all_models.values()];"
    " const s = models.find(m => typeof m.title === 'string' && m.title.startsWith('Temperature'));"
    " s.value = v; }"
)


def temperature_state(log10_t: float, scenario: str | None = None):
    """The lab's state after the temperature slider moves to `log10_t` (its log10 scale; the
    lab keeps 4 significant digits, app/views/controls.py) in a fresh `scenario`."""
    from app.state.lab_state import LabState

    state = LabState(scenario=scenario) if scenario else LabState()
    state.temperature = float(f"{10**log10_t:.4g}")
    return state


# The page draws `weights` (within `tol`) and its address holds `temperature` (null: none).
SHOWS_JS = f"""([weights, temperature, tol]) => {{
  const w = ({WEIGHTS_JS})();
  return new URLSearchParams(location.search).get('temperature') === temperature &&
    w.length === weights.length && w.every((x, i) => Math.abs(x - weights[i]) <= tol);
}}"""


def move_temperature(page, log10_t: float, scenario: str | None = None, timeout_s: float = 30.0):
    """Move the slider to `log10_t` and wait until the page shows what the engine computes for
    that temperature, drawn and in its address: the answer to this very move, not an earlier
    one still on its way. Returns the weights drawn."""
    state = temperature_state(log10_t, scenario)
    want = [float(w) for w in state.snapshot.weights]
    page.evaluate(SET_TEMPERATURE_JS, log10_t)
    page.wait_for_function(
        SHOWS_JS,
        arg=[want, state.query_params().get("temperature"), 1e-6],
        timeout=timeout_s * 1000,
    )
    return page.evaluate(WEIGHTS_JS)


def move_temperature_until_it_answers(
    page, log10_t: float, scenario: str | None = None, attempts: int = 12
):
    """As move_temperature, moving again (to `log10_t` and 0.05 below it in turn) when a move
    gets no answer within 5 s, as a student would right after a reconnect: a change made while
    the page is still reattaching may be lost, like a click during it. Returns (weights, the
    slider position that answered)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(attempts):
        position = log10_t - 0.05 * (attempt % 2)
        try:
            return move_temperature(page, position, scenario, timeout_s=5.0), position
        except PlaywrightTimeout:
            continue
    raise AssertionError(f"the lab never answered the slider after {attempts} moves")


# What a page that never showed its lab had got to: BokehJS, its documents, its address.
_PAGE_STAGE_JS = """() => ({href: location.href, bokeh: !!window.Bokeh,
  documents: window.Bokeh ? Bokeh.documents.length : 0})"""


def open_lab_page(context, url: str, timeout_s: float = 90.0):
    """A page (in a browser context) showing the lab at `url`, once its weights have arrived.
    If they never arrive, the failure says how far the page got and what its console said."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
    page.on("websocket", lambda ws: console.append(f"websocket opened: {ws.url}"))
    try:
        page.goto(url, wait_until="load", timeout=timeout_s * 1000)
    except PlaywrightError as error:
        # The network changed under the navigation itself (see below): go there again, once.
        if "ERR_NETWORK_CHANGED" not in str(error):
            raise
        console.append("(navigated again after ERR_NETWORK_CHANGED)")
        page.goto(url, wait_until="load", timeout=timeout_s * 1000)
    deadline = time.monotonic() + timeout_s
    reloaded = False
    while True:
        try:
            page.wait_for_function(LAB_READY_JS, timeout=5000)
            return page
        except PlaywrightTimeout:
            pass
        # The machine's network changed under the page (podman sets up the container test's
        # bridge beside these tests): Chromium aborted its script loads with
        # ERR_NETWORK_CHANGED and the page can never draw. A person would reload; so do we, once.
        if not reloaded and any("ERR_NETWORK_CHANGED" in line for line in console):
            reloaded = True
            console.append("(reloaded after ERR_NETWORK_CHANGED)")
            page.reload(wait_until="load", timeout=timeout_s * 1000)
            continue
        if time.monotonic() > deadline:
            stage = page.evaluate(_PAGE_STAGE_JS)
            raise AssertionError(
                f"the lab at {url} never showed its weights: {stage}; console: {console[-20:]}"
            )
