"""Fixtures for tests that run the real lab server in a subprocess."""

from __future__ import annotations

import pytest

from tools.harness import LabServer


@pytest.fixture(scope="session")
def lab(lab_server) -> LabServer:
    """The run's shared lab (tests/conftest.py's `lab_server`: `attention-lab --no-show --port
    <free>`, default settings), for tests that only read from it."""
    return lab_server


def pytest_collection_finish(session):
    """A run with a container test starts making its images now, in the background: on a fresh
    machine that is about three minutes, mostly downloads, which overlap the tests before it."""
    if any(item.path.name == "test_container.py" for item in session.items):
        import container_images

        container_images.start_in_background()
