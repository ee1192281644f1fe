"""Pages built here are built in-process, without a server: they get the process-wide patches
the server applies when it starts (app.patches.apply_all)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def process_wide_patches():
    from app.patches import apply_all

    return apply_all()
