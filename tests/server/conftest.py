"""Fixtures for tests that run the real lab server in a subprocess."""

from __future__ import annotations

import pytest
from labserver import LabServer, free_port, start_lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> LabServer:
    """One `attention-lab --no-show --port <free>` for the module, with default settings."""
    port = free_port()
    log = tmp_path_factory.mktemp("lab") / "server.log"
    import os
    import sys

    cmd = None
    if os.environ.get("E_STANDIN"):  # DEV-ONLY
        cmd = [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; import app.cli as c; c.SERVE_SCRIPT=Path('/tmp/e_stand/serve.py'); c.main(sys.argv[1:])",
        ]
    server = start_lab(["--no-show", "--port", str(port)], port, log, command=cmd)
    yield server
    server.stop()
