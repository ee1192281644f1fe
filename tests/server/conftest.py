"""Fixtures for tests that run the real lab server in a subprocess."""

from __future__ import annotations

import pytest

from tools.harness import LabServer


@pytest.fixture(scope="session")
def lab(lab_server) -> LabServer:
    """The run's shared lab (tests/conftest.py's `lab_server`: `attention-lab --no-show --port
    <free>`, default settings), for tests that only read from it."""
    return lab_server
