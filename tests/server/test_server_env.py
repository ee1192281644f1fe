"""A lab configured only through ATTENTION_LAB_* variables, as a container would be."""

from __future__ import annotations

import time

import pytest
from labserver import (
    clean_env,
    free_port,
    http_get,
    session_token,
    start_lab,
    token_payload,
    websocket_handshake,
)

pytestmark = pytest.mark.server


def test_environment_alone_configures_the_server(tmp_path):
    port = free_port()
    env = clean_env(
        {
            "ATTENTION_LAB_PORT": str(port),
            "ATTENTION_LAB_SHOW": "0",
            "ATTENTION_LAB_ALLOWED_ORIGINS": "lab.example.org",
            "ATTENTION_LAB_SESSION_TOKEN_EXPIRATION": "4000",
            "ATTENTION_LAB_LOG_LEVEL": "warning",
        }
    )
    server = start_lab([], port, tmp_path / "env.log", env=env)
    try:
        status, _, body = http_get(f"{server.base}/app")
        assert status == 200
        token = session_token(body.decode())
        expiry = token_payload(token)["session_expiry"] - time.time()
        assert 3900 < expiry <= 4000
        ws = f"ws://localhost:{port}/app/ws"
        assert websocket_handshake(ws, token, "https://lab.example.org") == 101
        assert websocket_handshake(ws, token, "https://other.example.org") == 403
        # The allowlist replaced the localhost default rather than adding to it. (Tornado lets a
        # page reach its own host, so the request goes to 127.0.0.1 to make the check apply.)
        ws_by_ip = f"ws://127.0.0.1:{port}/app/ws"
        refused = websocket_handshake(ws_by_ip, token, f"http://localhost:{port}")
        assert refused == 403
    finally:
        server.stop()
