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
