"""The README's and docs' promises that a test can hold: commands, the configuration table, the
notebook examples, the screenshots and every relative link."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from labserver import ROOT, clean_env

from app.server import cli

README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"
CONFIGURATION = (DOCS / "configuration.md").read_text()
ENGINE = (DOCS / "engine.md").read_text()
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


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


def _configuration_rows() -> list[tuple[str, str]]:
    """(flag cell, variable cell) of each row of configuration.md's flag table."""
    lines = CONFIGURATION.splitlines()
    start = lines.index("| Flag | Environment variable | Default | What it does |")
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        assert len(cells) == 4, f"a configuration row without four cells: {line}"
        rows.append((cells[0], cells[1]))
    return rows


def _ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def test_configuration_table_documents_every_flag_and_environment_variable():
    parser = cli.build_parser()
    flags = {name for action in parser._actions for name in action.option_strings} - {
        "-h",
        "--help",
    }
    rows = _configuration_rows()
    documented = {word.split()[0] for cell, _ in rows for word in _ticked(cell)} - {"--"}
    assert documented == flags, (
        f"configuration.md's table lacks {sorted(flags - documented)} "
        f"and lists flags the CLI lacks: {sorted(documented - flags)}"
    )
    variables = {word for _, cell in rows for word in _ticked(cell) if word.isupper()}
    expected = set(cli.ENV.values()) | {
        cli.BOKEH_ORIGIN_ENV,
        cli.SECRET_ENV,  # no flag: a secret on the command line shows in `ps`
        cli.BOKEH_SECRET_ENV,
    }
    assert variables == expected, (
        f"configuration.md's table lacks {sorted(expected - variables)} "
        f"and lists variables the CLI lacks: {sorted(variables - expected)}"
    )
    # Each variable sits in the row of the flag it stands for.
    for dest, variable in cli.ENV.items():
        flag = "--" if dest == "panel_args" else "--" + dest.replace("_", "-")
        (row,) = [v for f, v in rows if any(word.split()[0] == flag for word in _ticked(f))] or [""]
        assert f"`{variable}`" in row, f"{variable} is not in the row of {flag}"


def test_configuration_table_rows_are_the_options_own():
    """docs/configuration.md's rows for the options are made from app/server/options.py: a
    changed option shows here with the rows to paste."""
    from app.server.options import markdown_rows

    assert markdown_rows() in CONFIGURATION, "paste these rows into the table:\n" + markdown_rows()


def test_configuration_says_flags_win():
    assert "overrides its variable" in CONFIGURATION
    assert "a flag replaces is ignored" in CONFIGURATION


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_notebook_examples_run():
    assert _python_blocks(ENGINE), "docs/engine.md has no Python example"
    blocks = [block for page in PAGES for block in _python_blocks(page.read_text())]
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
        if 'trained.load("binding")' in block:  # the binding model's swap sends the other value
            assert "5" in lines and "the model answers 5" in result.stdout
        if "write_random" in block:  # a model file opened by its path: its run printed
            assert "tiny-gpt2" in result.stdout and "answers" in result.stdout
        if "LabState()" in block:  # the state without the page: the contest at T = 0.5
            assert "{'scenario': 'contest', 'temperature': '0.5'}" in result.stdout
    assert any("is_causal" in b for b in blocks)
    assert any('trained.load("binding")' in b for b in blocks)
    assert any("write_random" in b for b in blocks)


def test_readme_shows_the_screenshots():
    for name in ("screenshot.png", "screenshot-model.png"):
        assert f"](docs/images/{name})" in README, f"the README does not show {name}"
        assert (DOCS / "images" / name).is_file(), f"docs/images/{name} is missing"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return {_slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def _links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # code blocks hold no links
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.findall(r"\]\(([^)\s]+)\)", text)


def test_every_relative_link_points_to_an_existing_file():
    broken = []
    checked = 0
    for page in PAGES:
        for target in _links(page):
            if re.match(r"[a-z]+:", target):
                continue  # http://, https://, mailto: ...
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            checked += 1
            where = f"{page.relative_to(ROOT)}: {target}"
            if not dest.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{where} (no such heading)")
    assert checked > 10, "found almost no links: is the link pattern still right?"
    assert not broken, "broken links:\n" + "\n".join(broken)
