"""The lint step lives inside the test command, so CI and a developer run the same checks."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True
    )


def test_ruff_check_is_clean():
    result = _ruff("check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean():
    result = _ruff("format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_engine_never_imports_the_app_or_panel():
    offenders = []
    for path in (ROOT / "engine").rglob("*.py"):
        text = path.read_text()
        for banned in ("import panel", "from panel", "import bokeh", "from bokeh", "from app"):
            if banned in text:
                offenders.append(f"{path.relative_to(ROOT)}: {banned}")
    assert not offenders, offenders
