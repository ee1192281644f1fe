"""Fuzzed links against the served lab: every page opens as a valid lab, the server stays up.

Each example opens a real websocket session (Bokeh's client, as a browser would) with a random
query string made of the lab's own keys and junk, full of bad numbers, markup, odd Unicode and
oversized values. The state-level caps and messages are tested in tests/app/; this test holds
the whole path: URL -> server session -> page.
"""

from __future__ import annotations

import math
from urllib.parse import parse_qsl

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from labserver import http_get, open_session

from app.state.lab_state import INPUTS

pytestmark = pytest.mark.server

JUNK_KEYS = ["zzz", "__proto__", "bokeh-session-id", "<script>", ""]
NASTY_VALUES = [
    "nan",
    "inf",
    "-inf",
    "1e309",
    "-0",
    "",
    "[[1e308, 1e308], [1e308, -1e308]]",
    "[" * 200,
    '["<b id=x>A</b>", "B"]',
    "<img src=x onerror=alert(1)>",
    "x" * 3000,
    "4096",
    "100000000",
    "torch-cuda",
    "true",
    "[true, false, true, false, true, false, true, false, true]",
]
values = st.one_of(st.sampled_from(NASTY_VALUES), st.text(max_size=60))
queries = st.dictionaries(
    st.one_of(st.sampled_from(INPUTS), st.sampled_from(JUNK_KEYS)), values, max_size=6
)


def _open_session(url: str, arguments: dict[str, str]) -> dict:
    """What the page for a link with these arguments would show: its weights and address."""

    def read(doc) -> dict:
        weights = doc.select_one({"name": "weights"})
        locations = [m for m in doc.models if type(m).__name__ == "Location"]
        return {
            "weights": None if weights is None else list(weights.data["weight"]),
            "search": locations[0].search if locations else None,
        }

    return open_session(url, arguments, read)


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(arguments=queries)
def test_any_link_opens_a_valid_lab(lab, arguments):
    shown = _open_session(f"{lab.base}/app", arguments)
    assert shown["connected"]
    weights = shown["weights"]
    assert weights, "the page has no weights"
    assert all(math.isfinite(w) and -1e-6 <= w <= 1 + 1e-6 for w in weights), weights
    assert sum(weights) <= 1 + 1e-5
    # The address bar is rewritten to the lab's own, valid settings: junk keys are dropped.
    kept = {key for key, _ in parse_qsl((shown["search"] or "").lstrip("?"))}
    assert kept <= set(INPUTS), kept


@pytest.fixture(scope="module", autouse=True)
def log_mark(lab) -> int:
    """Where the shared lab's log stood before this module's fuzzing."""
    return lab.log_mark()


def test_server_kept_serving_and_logged_no_traceback(lab, log_mark):
    # Runs after the fuzzing in this module (same server): still alive, still building pages.
    shown = _open_session(f"{lab.base}/app", {"scenario": "contest"})
    assert shown["connected"] and len(shown["weights"]) == 3
    status, _, body = http_get(f"{lab.base}/liveness?endpoint=/app")
    assert status == 200, body
    written = lab.log_since(log_mark)
    assert "Traceback" not in written, written[-3000:]
