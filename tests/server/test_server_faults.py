"""Faults a class meets: a dropped connection, and a server restart in the middle of a lesson.

Both run a real `attention-lab` and a real browser (Debian's chromium under Playwright).
"""

from __future__ import annotations

import time

import pytest
from labserver import (
    LAB_READY_JS,
    SET_TEMPERATURE_JS,
    WEIGHTS_JS,
    TcpRelay,
    free_port,
    http_get,
    open_lab_page,
    start_lab,
)

from app.server.reconnect import POLL_S, RELOAD_AFTER_S

pytestmark = [pytest.mark.server, pytest.mark.browser]

LOG10_T = 0.5  # the temperature slider is on a log10 scale: 10**0.5 = 3.162


def _wait_for_weights_change(page, old: list[float], timeout_s: float = 30.0) -> list[float]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        now = page.evaluate(WEIGHTS_JS)
        if now != old:
            return now
        page.wait_for_timeout(200)
    raise AssertionError(f"the weights never changed from {old}")


def _move_until_it_answers(
    page, before: list[float], log10_t: float, timeout_s: float = 60.0
) -> list[float]:
    """Move the slider as a student would right after a reconnect: again if nothing happens
    (a change made while the page is still reattaching may be lost, like a click during it)."""
    deadline = time.monotonic() + timeout_s
    attempt = 0
    while time.monotonic() < deadline:
        page.evaluate(SET_TEMPERATURE_JS, log10_t - 0.05 * (attempt % 2))
        attempt += 1
        try:
            return _wait_for_weights_change(page, before, timeout_s=5.0)
        except AssertionError:
            continue
    raise AssertionError(f"the lab never answered the slider after {attempt} moves")


@pytest.mark.parametrize(
    ("offline_ms", "reap_args", "reloads"),
    [
        # A Wi-Fi blip: the server still holds the session; Bokeh reattaches the page as it is.
        (3000, [], False),
        # A laptop asleep: the server has discarded the session (after ~1 s here), so the page
        # rebuilds itself from its URL (app/server/reconnect.py).
        (
            RELOAD_AFTER_S * 1000 + 3000,
            ["--", "--check-unused-sessions", "500", "--unused-session-lifetime", "1000"],
            True,
        ),
    ],
    ids=["short-drop", "session-reaped"],
)
def test_dropped_connection_reconnects_and_the_lab_keeps_working(
    chromium, tmp_path, offline_ms, reap_args, reloads
):
    port = free_port()
    args = ["--no-show", "--port", str(port), *reap_args]
    server = start_lab(args, port, tmp_path / "lab.log")
    relay = TcpRelay(port)
    # With --reuse-sessions the first visitor's session is kept as the template for later
    # first renders and never expires; take that place so the browser's session is ordinary.
    assert http_get(f"{server.base}/app")[0] == 200
    try:
        # A fresh context of the session-wide Chromium (tests/conftest.py).
        context = chromium.new_context()
        try:
            page = open_lab_page(context, f"http://localhost:{relay.port}/app?scenario=contest")
            opened = []
            page.on("console", lambda m: opened.append(m.text) if "is now open" in m.text else 0)
            start = page.evaluate(WEIGHTS_JS)
            _move_until_it_answers(page, start, -LOG10_T)
            page.wait_for_timeout(1500)  # let any late update land, then take the state
            sharp = page.evaluate(WEIGHTS_JS)
            page.evaluate("() => { window.__sameDocument = true; }")

            relay.down = True  # the Wi-Fi drops: open sockets die, new ones are refused
            assert relay.cut() > 0
            page.get_by_text("reconnect", exact=False).first.wait_for(timeout=30_000)
            page.wait_for_timeout(offline_ms)
            relay.down = False

            # Bokeh logs each websocket it opens; wait for the reconnection.
            deadline = time.monotonic() + 60
            while not opened and time.monotonic() < deadline:
                page.wait_for_timeout(200)
            assert opened, "the page never reconnected"
            if reloads:
                page.wait_for_function("() => window.__sameDocument === undefined")
                page.wait_for_function(LAB_READY_JS, timeout=90_000)
            else:
                page.wait_for_timeout(POLL_S * 1000 * 2)
                assert page.evaluate("() => window.__sameDocument") is True, "page reloaded"
            # The page shows the lab as it was, and answers the controls again.
            assert page.evaluate(WEIGHTS_JS) == pytest.approx(sharp, abs=1e-6)
            soft = _move_until_it_answers(page, sharp, LOG10_T)
            assert soft != pytest.approx(sharp, abs=1e-3)
        finally:
            context.close()
    finally:
        relay.close()
        server.stop()


def test_server_restart_then_reload_restores_the_same_lab(chromium, tmp_path):
    port = free_port()
    args = ["--no-show", "--port", str(port)]
    first = start_lab(args, port, tmp_path / "first.log")
    second = None
    try:
        # A fresh context of the session-wide Chromium (tests/conftest.py).
        context = chromium.new_context()
        try:
            page = open_lab_page(context, f"http://localhost:{port}/app?scenario=contest")
            start = page.evaluate(WEIGHTS_JS)
            _move_until_it_answers(page, start, LOG10_T)
            page.wait_for_timeout(1500)
            during_lesson = page.evaluate(WEIGHTS_JS)
            page.wait_for_function("() => location.search.includes('temperature=')")
            url = page.url

            first.stop()
            second = start_lab(args, port, tmp_path / "second.log")
            page.reload(wait_until="load", timeout=90_000)
            page.wait_for_function(
                "() => window.Bokeh && Bokeh.documents.length > 0 && "
                "Bokeh.documents[0].get_model_by_name('weights') !== null",
                timeout=90_000,
            )
            assert page.url == url
            restored = page.evaluate(WEIGHTS_JS)
            assert restored == pytest.approx(during_lesson, abs=1e-6)
            assert restored != pytest.approx(start, abs=1e-3)
        finally:
            context.close()
    finally:
        first.stop()
        if second is not None:
            second.stop()
