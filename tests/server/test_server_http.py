"""The served lab over HTTP and websocket: routes, liveness, assets, origins, admin, offline."""

from __future__ import annotations

import re
import time
from pathlib import Path
from urllib.parse import urljoin

import pytest
from labserver import http_get, page_links, session_token, token_payload, websocket_handshake

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parents[2]
TITLE = "Attention Lab"


def _page(lab, path="/app") -> str:
    status, _, body = http_get(lab.base + path)
    assert status == 200, f"{path} answered {status}"
    return body.decode()


def test_liveness_answers(lab):
    status, headers, body = http_get(lab.base + "/liveness")
    assert status == 200
    assert "json" in headers.get("Content-Type", "")
    status, _, body = http_get(lab.base + "/liveness?endpoint=/app")
    assert status == 200, body
    assert b'"/app": true' in body


def test_index_redirects_to_the_lab(lab):
    status, headers, _ = http_get(lab.base + "/")
    assert status in (301, 302)
    assert headers["Location"].rstrip("/").endswith("/app")


def test_lab_page_loads_with_title_and_bokeh_document(lab):
    html = _page(lab)
    assert f"<title>{TITLE}" in html
    assert "docs_json" in html and "render_items" in html
    session_token(html)


def test_lab_page_loads_bokeh_without_its_mathjax_bundle(lab):
    """The lab shows no TeX (app/patches/panel_resources.py): 1.8 MB of script less to every student."""
    scripts = [url.rsplit("/", 1)[-1].split("?")[0] for url in page_links(_page(lab))]
    assert "bokeh.min.js" in scripts and "panel.min.js" in scripts
    assert not [name for name in scripts if "mathjax" in name], scripts


def test_page_needs_nothing_from_the_internet(lab):
    html = _page(lab)
    urls = page_links(html)
    external = [url for url in urls if re.match(r"(?i)^(https?:)?//", url)]
    assert not external, f"the page loads resources from elsewhere: {external}"
    assert not re.search(r"(?i)cdn\.|unpkg|jsdelivr|googleapis", html)
    scripts = [url for url in urls if url.endswith((".js", ".css")) or ".js?" in url]
    assert scripts, "expected the page to load Bokeh/Panel scripts from this server"
    for url in scripts:
        status, _, _ = http_get(urljoin(lab.base + "/app", url))
        assert status == 200, f"{url} is not served locally ({status})"


def test_static_assets_are_served(lab):
    assets = sorted(p for p in (ROOT / "assets").iterdir() if p.is_file())
    assert assets, "the repository's assets/ folder is empty"
    for asset in assets:
        status, _, body = http_get(f"{lab.base}/assets/{asset.name}")
        assert status == 200, f"/assets/{asset.name} answered {status}"
        assert body == asset.read_bytes()
    status, _, _ = http_get(f"{lab.base}/assets/../pyproject.toml")
    assert status in (403, 404)


def test_admin_page_is_off(lab):
    for path in ("/admin", "/admin/"):
        status, _, _ = http_get(lab.base + path)
        assert status == 404, f"{path} answered {status}"


def test_foreign_websocket_origin_is_refused_and_localhost_accepted(lab):
    token = session_token(_page(lab))
    ws = f"ws://localhost:{lab.port}/app/ws"
    for foreign in ("http://evil.example.com", f"http://evil.example.com:{lab.port}"):
        assert websocket_handshake(ws, token, foreign) == 403, foreign
    # Tornado admits a page talking to its own host without asking the allowlist, so the
    # allowlist itself is exercised by a request addressed to 127.0.0.1.
    ws_by_ip = f"ws://127.0.0.1:{lab.port}/app/ws"
    assert websocket_handshake(ws_by_ip, token, f"http://localhost:{lab.port}") == 101
    assert websocket_handshake(ws_by_ip, token, "http://127.0.0.2:80") == 403


def test_session_token_outlives_an_hour_of_sleep(lab):
    payload = token_payload(session_token(_page(lab)))
    assert payload["session_expiry"] - time.time() > 3600
