"""The browser suite's pages. The lab server (`lab_server`) and Chromium (`chromium`) are
session-wide fixtures in tests/conftest.py, shared with the rest of the run (2 cores: keep it
lean)."""

from __future__ import annotations

import pytest

from .labpage import LabPage


@pytest.fixture(scope="session")
def problems():
    """Console errors, page errors and off-machine requests seen by any page."""
    return []


@pytest.fixture
def open_lab(chromium, lab_server, problems):
    pages = []

    def _open(query: str = "", *, more_settings: bool = True) -> LabPage:
        page = LabPage(chromium, lab_server.url + query, problems, more_settings=more_settings)
        pages.append(page)
        return page

    yield _open
    for page in pages:
        page.close()
