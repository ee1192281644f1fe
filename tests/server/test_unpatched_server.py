"""The served lab with none of its process-wide patches (ATTENTION_LAB_PATCHES=none): Panel,
Bokeh and Param as they ship, as a newcomer reads them in their documentation. The HTTP smoke
checks of test_server_http.py run again against such a server, and a page is built over its
websocket: slower, never wrong (docs/patches.md, "Choosing the patches")."""

from __future__ import annotations

import pytest
from labserver import clean_env, http_get, open_session
from test_server_http import (  # noqa: F401 - collected here again, against this module's `lab`
    test_foreign_websocket_origin_is_refused_and_localhost_accepted,
    test_index_redirects_to_the_lab,
    test_lab_page_loads_with_title_and_bokeh_document,
    test_liveness_answers,
    test_page_needs_nothing_from_the_internet,
)

from tools.harness import serve_lab

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """`attention-lab` with no patch applied, for this module alone."""
    log = tmp_path_factory.mktemp("unpatched") / "server.log"
    server = serve_lab(log, env=clean_env({"ATTENTION_LAB_PATCHES": "none"}))
    yield server
    server.stop()


def test_the_start_up_log_says_no_patch_is_applied(lab):
    assert "patches: none" in lab.log()


def test_a_page_is_built_and_drawn_without_patches(lab):
    def read(doc) -> dict:
        weights = doc.select_one({"name": "weights"})
        return {"weights": None if weights is None else list(weights.data["weight"])}

    shown = open_session(lab.url, {"scenario": "contest"}, read)
    assert shown["connected"]
    assert len(shown["weights"]) == 3 and abs(sum(shown["weights"]) - 1) < 1e-6
    status, _, body = http_get(f"{lab.base}/liveness?endpoint=/app")
    assert status == 200, body
    assert "Traceback" not in lab.log(), lab.log()[-3000:]
