"""Suite-wide rules.

In CI (CI=true) a skipped test is a failure: the browser and torch tests must really run there,
so a missing Chromium or torch wheel turns CI red instead of silently shrinking the suite.
"""

import os

import pytest

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, which must run every test: {report.longrepr}"


@pytest.fixture(scope="session")
def chromium():
    """One headless Debian Chromium (Playwright, no browser download) for the whole run.

    Playwright's sync API keeps an event loop running while it is open, and a second
    sync_playwright() in the same process refuses to start: every test shares this one.
    """
    from browser.labpage import CHROMIUM_ARGS, chromium_path

    path = chromium_path()
    if path is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()
