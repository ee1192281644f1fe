"""Faults a class meets: a dropped connection, and a server restart in the middle of a lesson.

Both run a real `attention-lab` and a real browser (Debian's chromium under Playwright).
"""

from __future__ import annotations

import pytest
from browser.labpage import page_wait_until
from labserver import (
    LAB_READY_JS,
    WEIGHTS_JS,
    TcpRelay,
    free_port,
    http_get,
    move_temperature_until_it_answers,
    open_lab_page,
    start_lab,
)
from playwright.sync_api import Error as PlaywrightError
from waiting import wait_until

from app.server.reconnect import RELOAD_AFTER_S

pytestmark = [pytest.mark.server, pytest.mark.browser]

LOG10_T = 0.5  # the temperature slider is on a log10 scale: 10**0.5 = 3.162
# The page's reconnect watcher (app/server/reconnect.py): null once it has seen the server again.
WATCHER_DONE_JS = (
    "() => window.__labReconnect !== undefined && window.__labReconnect.watch === null"
)
OFFLINE_FOR_MS_JS = "() => window.__labReconnect ? Date.now() - window.__labReconnect.since : 0"
# Bokeh's debug log line for a session it reaps (bokeh/server/contexts.py).
DISCARDED = "Discarding session"


@pytest.mark.parametrize(
    ("reap_args", "reloads"),
    [
        # A Wi-Fi blip: the server still holds the session; Bokeh reattaches the page as it is.
        ([], False),
        # A laptop asleep: the server has discarded the session (after ~1 s here; its debug log
        # says when), so the page rebuilds itself from its URL (app/server/reconnect.py).
        (
            [
                *("--log-level", "debug", "--"),
                *("--check-unused-sessions", "500", "--unused-session-lifetime", "1000"),
            ],
            True,
        ),
    ],
    ids=["short-drop", "session-reaped"],
)
def test_dropped_connection_reconnects_and_the_lab_keeps_working(
    chromium, tmp_path, reap_args, reloads
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
            opened, navigations = [], []
            page.on("console", lambda m: opened.append(m.text) if "is now open" in m.text else 0)
            page.on(
                "request",
                lambda r: navigations.append(r.url) if r.is_navigation_request() else 0,
            )
            # The answer to this very move, drawn and in the address: the state to keep.
            sharp, _ = move_temperature_until_it_answers(page, -LOG10_T, "contest")
            page.evaluate("() => { window.__sameDocument = true; }")

            relay.down = True  # the Wi-Fi drops: open sockets die, new ones are refused
            assert relay.cut() >= 2, "the page's websocket ran through the relay"  # both ends
            page.get_by_text("reconnect", exact=False).first.wait_for(timeout=30_000)
            if reloads:
                # Down until the server has discarded the page's session (the first visitor's,
                # taken above, is never discarded: any discard is the page's) ...
                wait_until(
                    lambda: DISCARDED in server.log(), "the server to discard the session", 30
                )
                # ... and the laptop wakes: its clock has jumped on by the watcher's whole
                # threshold (the time a sleeping laptop was off the network, without sitting
                # out RELOAD_AFTER_S here).
                page.evaluate(
                    f"() => {{ window.__labReconnect.since -= {RELOAD_AFTER_S * 1000}; }}"
                )
                assert page.evaluate(OFFLINE_FOR_MS_JS) >= RELOAD_AFTER_S * 1000
            else:
                # Down until the page has tried to come back and been turned away.
                page_wait_until(page, lambda: relay.refused > 0, "a refused reconnection", 30)
            relay.down = False

            # Bokeh logs each websocket it opens; wait for the reconnection.
            page_wait_until(page, lambda: opened, "the page to reconnect", 60)
            if reloads:
                page.wait_for_function("() => window.__sameDocument === undefined")
                page.wait_for_function(LAB_READY_JS, timeout=90_000)
            else:
                # The watcher has seen the server again and decided (a reload is asked for
                # in the same step, and its request leaves before the next round trip ends),
                # or the page has been replaced by a reload already.
                page.wait_for_function(
                    f"() => ({WATCHER_DONE_JS})() || window.__sameDocument === undefined",
                    timeout=30_000,
                )
                assert page.evaluate("() => window.__sameDocument") is True, "page reloaded"
            # The page shows the lab as it was, and answers the controls again.
            assert page.evaluate(WEIGHTS_JS) == pytest.approx(sharp, abs=1e-6)
            soft, _ = move_temperature_until_it_answers(page, LOG10_T, "contest")
            assert soft != pytest.approx(sharp, abs=1e-3)
            if not reloads:
                assert navigations == [], f"the page reloaded after a short drop: {navigations}"
                assert page.evaluate("() => window.__sameDocument") is True, "page reloaded"
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
            # The answer to this very move, drawn and in the address.
            during_lesson, _ = move_temperature_until_it_answers(page, LOG10_T, "contest")
            url = page.url
            assert "temperature=" in url

            first.stop()
            second = start_lab(args, port, tmp_path / "second.log")
            try:
                page.reload(wait_until="load", timeout=90_000)
            except PlaywrightError:
                # A restart slower than the page's reconnect watcher waits (a loaded machine):
                # the page reloaded itself at the same moment, the very outcome wanted here.
                page.wait_for_load_state("load", timeout=90_000)
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
