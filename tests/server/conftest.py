"""Fixtures for tests that run the real lab server in a subprocess."""

from __future__ import annotations

import pytest
from labserver import LabServer, free_port, start_lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> LabServer:
    """One `attention-lab --no-show --port <free>` for the module, with default settings."""
    port = free_port()
    log = tmp_path_factory.mktemp("lab") / "server.log"
    server = start_lab(["--no-show", "--port", str(port)], port, log)
    yield server
    server.stop()
