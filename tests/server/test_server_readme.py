"""The README's promises that a test can hold: commands, configuration table, notebook example."""

from __future__ import annotations

import re
import subprocess
import sys

from labserver import ROOT, clean_env

from app.server import cli

README = (ROOT / "README.md").read_text()


def test_readme_test_command_is_the_one_ci_runs():
    ci_commands = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    assert ci_commands[-1] == "python3 -m pytest"
    assert "```bash\npython3 -m pytest\n```" in README


def test_readme_run_commands():
    assert "```bash\npip install -e .\nattention-lab\n```" in README
    assert "http://localhost:5006/app" in README


def test_readme_documents_every_flag_and_environment_variable():
    help_text = cli.build_parser().format_help()
    flags = set(re.findall(r"--[a-z][a-z-]+", help_text)) - {"--help"}
    missing = sorted(f for f in flags if f"`{f}" not in README)
    missing += sorted(v for v in cli.ENV.values() if f"`{v}`" not in README)
    assert not missing, f"README's configuration table lacks {missing}"


def test_readme_notebook_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    assert blocks, "README has no Python example"
    for block in blocks:
        result = subprocess.run(
            [sys.executable, "-c", block],
            cwd=ROOT,
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        if "is_causal" in block:  # the engine's batched example prints its shapes
            assert "(2, 4, 5, 8) (2, 4, 5, 7)" in result.stdout
        if "trained.load" in block:  # the binding model's swap sends the other value
            assert "5" in lines and "the model answers 5" in result.stdout


def test_readme_shows_the_screenshot():
    assert "](docs/images/screenshot.png)" in README
    assert (ROOT / "docs" / "images" / "screenshot.png").is_file(), "the screenshot is missing"
