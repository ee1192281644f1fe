"""One lab server and one headless Chromium for the whole browser suite (2 cores: keep it lean)."""

from __future__ import annotations

import pytest

from .labpage import CHROMIUM_ARGS, LabPage, LabServer, chromium_path


@pytest.fixture(scope="session")
def lab_server():
    server = LabServer()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def chromium():
    path = chromium_path()
    if path is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def problems():
    """Console errors, page errors and off-machine requests seen by any page."""
    return []


@pytest.fixture
def open_lab(chromium, lab_server, problems):
    pages = []

    def _open(query: str = "") -> LabPage:
        page = LabPage(chromium, lab_server.url + query, problems)
        pages.append(page)
        return page

    yield _open
    for page in pages:
        page.close()
