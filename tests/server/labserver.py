"""Start a real `attention-lab` process for a test and stop it afterwards.

The process is the installed console script when present (what a user runs), else
`python -m app` (the same entry point). Its output goes to a log file, never a pipe that could
fill up and stall the server; the log is shown when start-up fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 120.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def lab_command() -> list[str]:
    script = shutil.which("attention-lab")
    return [script] if script else [sys.executable, "-m", "app"]


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The test's environment without any lab or Bokeh origin settings leaking in."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("ATTENTION_LAB_") and key != "BOKEH_ALLOW_WS_ORIGIN"
    }
    env.update(extra or {})
    return env


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


@dataclass
class LabServer:
    process: subprocess.Popen
    port: int
    log_path: Path

    @property
    def base(self) -> str:
        return f"http://localhost:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)


def start_lab(
    args: Sequence[str],
    port: int,
    log_path: Path,
    env: Mapping[str, str] | None = None,
    command: Sequence[str] | None = None,
) -> LabServer:
    """Run the lab and wait until /liveness answers; the caller must stop() it."""
    log_file = open(log_path, "wb")  # noqa: SIM115 - kept open for the process's lifetime
    process = subprocess.Popen(
        [*(command or lab_command()), *args],
        cwd=ROOT,
        env=dict(env) if env is not None else clean_env(),
        stdout=log_file,
        stderr=subprocess.STDOUT,
    )
    log_file.close()
    server = LabServer(process, port, log_path)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the lab exited with {process.returncode}:\n{server.log()}")
        try:
            status, _, _ = http_get(f"{server.base}/liveness", timeout=2)
            if status == 200:
                return server
        except OSError:
            pass
        time.sleep(0.3)
    server.stop()
    raise RuntimeError(f"the lab did not answer /liveness in {START_TIMEOUT_S} s:\n{server.log()}")


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


async def websocket_handshake(url: str, token: str, origin: str | None) -> int:
    """Open the app's websocket with the given Origin; 101 if accepted, else the HTTP status."""
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
