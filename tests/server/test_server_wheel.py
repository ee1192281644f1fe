"""The lab installed from its wheel into a fresh virtual environment, started from another
directory, serves its own CSS and opens the shipped binding model: the assets travel as package
data and are found through importlib.resources, not through the checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from labserver import (
    ROOT,
    build_wheel,
    clean_env,
    free_port,
    http_get,
    open_session,
    start_lab,
)

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A venv that sees the machine's packages (panel, numpy...) but holds its own lab."""
    tmp = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(tmp)
    env_dir = tmp / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", str(env_dir)],
        check=True,
        timeout=120,
    )
    pip = [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps"]
    result = subprocess.run(
        [*pip, "--no-index", str(wheel)], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return env_dir


def _outside_env() -> dict[str, str]:
    env = clean_env()
    env.pop("PYTHONPATH", None)  # nothing may point back at the checkout
    return env


def test_the_installed_lab_imports_from_the_venv_not_the_checkout(venv, tmp_path):
    probe = (
        "import app, engine, attention_lab_assets as a; "
        "print(app.__file__); print(engine.__file__); print(a.folder())"
    )
    result = subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe],
        cwd=tmp_path,
        env=_outside_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    for line in result.stdout.split():
        assert Path(line).resolve().is_relative_to(venv.resolve()), line
        assert not Path(line).resolve().is_relative_to(ROOT.resolve()), line


def test_the_installed_lab_serves_its_css_and_the_binding_model(venv, tmp_path):
    port = free_port()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    server = start_lab(
        ["--no-show", "--port", str(port)],
        port,
        tmp_path / "server.log",
        env=_outside_env(),
        command=[str(venv / "bin" / "attention-lab")],
        cwd=elsewhere,
    )
    try:
        for name in ("lab.css", "lab-widgets.css"):
            status, _, body = http_get(f"{server.base}/assets/{name}")
            assert status == 200, (name, status)
            assert body == (ROOT / "assets" / name).read_bytes()
        status, _, page = http_get(f"{server.base}/app")
        assert status == 200
        # The page's own stylesheet is inlined into the template.
        assert b"html.lab-presenter" in page
        shown = open_session(
            f"{server.base}/app",
            {"model": "binding"},
            lambda doc: {"labels": list(doc.select_one({"name": "weights"}).data["label"])},
        )
        # The shipped model's tokens, read from its weights in the venv's package data.
        assert shown["connected"] and shown["labels"][0] == "<bos> @0", shown
        assert "Traceback" not in server.log(), server.log()
    finally:
        server.stop()
