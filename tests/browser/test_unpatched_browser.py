"""The lab in headless Chromium with none of its process-wide patches
(ATTENTION_LAB_PATCHES=none): Panel, Bokeh and Param as they ship. The browser smoke checks of
test_lab_browser.py run again against such a server (its page drawn, controls and a drag moving
the route, no console error): slower, never wrong (docs/patches.md, "Choosing the patches")."""

from __future__ import annotations

import pytest

from tools.harness import clean_env, serve_lab

from . import test_lab_browser
from .test_lab_browser import (  # noqa: F401 - collected here again, against this `lab_server`
    test_dragging_a_key_tip_moves_the_key_and_the_route,
    test_every_named_source_is_drawn,
    test_rotating_the_query_changes_the_weights,
    test_swap_values_keeps_weights_and_moves_contributions,
)

pytestmark = pytest.mark.browser
# test_lab_browser.py's page and its reset, made here on this module's server.
shared_page = test_lab_browser.shared_page
lab = test_lab_browser.lab


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    """`attention-lab` with no patch applied, in place of the run's shared lab."""
    log = tmp_path_factory.mktemp("unpatched") / "server.log"
    server = serve_lab(log, env=clean_env({"ATTENTION_LAB_PATCHES": "none"}))
    yield server
    server.stop()


def test_a_lab_without_patches_answers_a_control_with_no_error_anywhere(lab_server, lab, problems):
    assert "patches: none" in lab_server.log()
    lab.show_analysis()
    before = lab.data("contributions")
    lab.click_button("Swap values")
    lab.wait_for_change("contributions", before)
    lab.server_round_trip()
    assert problems == []  # no console error, page error or outside request on any page
    assert "Traceback" not in lab_server.log(), lab_server.log()[-3000:]
