"""The browser suite's pages. The lab server (`lab_server`) and Chromium (`chromium`) are
session-wide fixtures in tests/conftest.py, shared with the rest of the run (2 cores: keep it
lean)."""

from __future__ import annotations

import pytest

from .labpage import page_opener


@pytest.fixture(scope="session")
def problems():
    """Console errors, page errors and off-machine requests seen by any page."""
    return []


@pytest.fixture
def open_lab(chromium, lab_server, problems):
    opener, close_all = page_opener(chromium, lab_server, problems)
    yield opener
    close_all()
