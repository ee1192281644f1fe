"""The browser scripts (app/js/) as code: the live drag preview's arithmetic run in Node against
fixtures the engine writes, ESLint over every script, and no script left inside Python.

Needs Node (18.18 or later; Node 20 is what the project uses) and `npm ci` in the checkout,
which installs ESLint from package-lock.json. docs/browser-scripts.md says more.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from pipeline_fixtures import write

from app import js

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "app" / "js"
INSTALL_NODE = (
    "`node` is not on PATH: the browser scripts' tests need Node.js. Install Node 20 "
    "(Debian: apt-get install nodejs npm; or from https://nodejs.org), then run `npm ci` "
    "in the checkout"
)
RUN_NPM_CI = "node_modules/ is missing ESLint: run `npm ci` in the checkout (package-lock.json)"


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail(INSTALL_NODE)
    return node


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("pipeline") / "fixtures.json"
    held = write(path)
    assert held["configurations"] >= 200 and held["refused"] > 0, held
    return path


def _node_tests(fixtures: Path, source: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, LAB_PIPELINE_FIXTURES=str(fixtures))
    env.pop("LAB_PIPELINE_SOURCE", None)
    if source is not None:
        env["LAB_PIPELINE_SOURCE"] = str(source)
    return subprocess.run(
        [_node(), "--test", "tests/js/"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_the_preview_pipeline_agrees_with_the_engine_in_node(fixtures):
    result = _node_tests(fixtures)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    passed = re.search(r"^# pass (\d+)$", out, re.MULTILINE)
    assert passed and int(passed.group(1)) >= 7, out
    assert re.search(r"^# fail 0$", out, re.MULTILINE), out
    # What was compared, and how closely (pytest -rP prints it).
    print("\n".join(line for line in out.splitlines() if "max |JS - engine|" in line))


# One line of the pipeline broken at a time: each breaks a setting the fixtures cover.
BREAKS = {
    "temperature": ("scaled[i] / P.temperature", "scaled[i] * P.temperature"),
    "hidden dimensions": ("scores[i] = visible[i] + R.hidden[i];", "scores[i] = visible[i];"),
    "masks": ("logits[i] = R.legal[i] ?", "logits[i] = true ?"),
    "null route": (
        "let nullWeight = P.null_on ? Math.exp(P.null_logit - top) : 0;",
        "let nullWeight = 0;",
    ),
    "distractors turn with the query": (
        "kx[i] = along * ux - across * uy;",
        "kx[i] = along * ux + across * uy;",
    ),
    "the server's rounding": ("let x = round(move.x, 4)", "let x = round(move.x, 3)"),
}


@pytest.mark.parametrize("name", list(BREAKS))
def test_a_broken_pipeline_fails_the_node_tests(fixtures, tmp_path, name):
    old, new = BREAKS[name]
    text = (SCRIPTS / "pipeline.js").read_text()
    assert text.count(old) == 1, f"app/js/pipeline.js no longer has {old!r}"
    broken = tmp_path / "pipeline.js"
    broken.write_text(text.replace(old, new))
    result = _node_tests(fixtures, broken)
    out = result.stdout + result.stderr
    assert result.returncode != 0, f"breaking {name} went unnoticed:\n{out}"
    assert "differs from the engine" in out or "the engine has -inf" in out, out


# One line of a page script broken at a time: its Node test must fail (tests/js/*.test.js read
# the scripts from LAB_SCRIPTS_DIR).
SCRIPT_BREAKS = {
    "one poller for every watch": (
        "connection_watch.js",
        "window.__labConnection = window.__labConnection || (() => {",
        "window.__labConnection = (() => {",
    ),
    "the poller stops once answered": (
        "connection_watch.js",
        "if (watches.size === 0) { stop(); }",
        "",
    ),
    "a long outage reloads": (
        "reconnect_watch.js",
        "if (Date.now() - lab.since >= __RELOAD_AFTER_MS__) {",
        "if (Date.now() - lab.since > 10 * __RELOAD_AFTER_MS__) {",
    ),
    "another process reloads": (
        "replica_watch.js",
        "if (now !== __PROCESS_ID__) {",
        "if (false) {",
    ),
    "the walk watches new shadow roots": ("control_names.js", "    observe(el.shadowRoot);\n", ""),
    "the walk waits for a quiet page": (
        "control_names.js",
        "Math.min(now + QUIET_MS, walks.since + MAX_WAIT_MS)",
        "now",
    ),
    "no walk on a timer": ("control_names.js", "walk();\n", "walk();\nsetInterval(walk, 1500);\n"),
    "radio groups named": ("control_names.js", "  nameGroups();\n", ""),
    "an open list is no Tab stop": ("control_names.js", "    list.tabIndex = -1;\n", ""),
    "the tabs wrap round": (
        "tab_keys.js",
        "case 'ArrowLeft': return (i - 1 + n) % n;",
        "case 'ArrowLeft': return Math.max(0, i - 1);",
    ),
    "a key moves focus to its tab": ("tab_keys.js", "    tabs[next].focus();\n", ""),
    "the dialog is named": ("page_structure.js", "{'aria-label': names.dialog}", "{}"),
    "a tip's presses add up": (
        "tip_keys.js",
        "state.sums[key] = [sum[0] + dx * times, sum[1] + dy * times];",
        "state.sums[key] = [dx * times, dy * times];",
    ),
    "a tip keeps its element while it moves": (
        "tip_keys.js",
        "if (shown.length !== tips.length || shown.some((el, i) => el.dataset.tip !== tips[i].name)) {",
        "if (true) {",
    ),
}


@pytest.mark.parametrize("name", list(SCRIPT_BREAKS))
def test_a_broken_page_script_fails_its_node_tests(tmp_path, name):
    file, old, new = SCRIPT_BREAKS[name]
    for path in SCRIPTS.glob("*.js"):
        (tmp_path / path.name).write_text(path.read_text())
    text = (SCRIPTS / file).read_text()
    assert text.count(old) == 1, f"app/js/{file} no longer has {old!r}"
    (tmp_path / file).write_text(text.replace(old, new))
    tests = [
        "tests/js/connection_watch.test.js",
        "tests/js/control_names.test.js",
        "tests/js/tab_keys.test.js",
        "tests/js/page_structure.test.js",
        "tests/js/tip_keys.test.js",
    ]
    env = dict(os.environ, LAB_SCRIPTS_DIR=str(tmp_path))
    result = subprocess.run(
        [_node(), "--test", *tests], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    out = result.stdout + result.stderr
    assert result.returncode != 0, f"breaking {name} went unnoticed:\n{out}"
    assert re.search(r"^not ok ", out, re.MULTILINE), out


def test_eslint_passes_on_every_browser_script_and_test():
    eslint = ROOT / "node_modules" / "eslint" / "bin" / "eslint.js"
    if not eslint.exists():
        pytest.fail(RUN_NPM_CI)
    result = subprocess.run(
        [_node(), str(eslint), "--max-warnings=0", "app/js", "tests/js", "eslint.config.js"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # It judged something: a script with an undeclared name is refused.
    probe = subprocess.run(
        [_node(), str(eslint), "--stdin", "--stdin-filename", "app/js/probe.js"],
        cwd=ROOT,
        input="const routed = undeclaredName + 1;\nexport_it(routed);\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.returncode == 1 and "no-undef" in probe.stdout, probe.stdout + probe.stderr


def test_every_script_file_is_used_and_every_placeholder_is_filled():
    python = "\n".join(p.read_text() for p in (ROOT / "app").rglob("*.py"))
    read = {path.name for path in SCRIPTS.glob("*.js") if f'"{path.name}"' in python}
    used = {other for name in read for other in js.uses(name)}
    for path in sorted(SCRIPTS.glob("*.js")):
        assert path.name in read | used, f"app/js/{path.name} is read by no module"
    with pytest.raises(ValueError, match="placeholders"):
        js.source("reconnect_watch.js", POLL_MS=2000)  # RELOAD_AFTER_MS left out
    with pytest.raises(ValueError, match="placeholders"):
        js.source("copy_link.js", POLL_MS=2000)  # a value nothing uses
    filled = js.source("replica_watch.js", ENDPOINT="replica", PROCESS_ID="ab", POLL_MS=2000)
    assert '.watch("replica", "replica", 2000, ' in filled and 'now !== "ab"' in filled
    assert not js.PLACEHOLDER.search(filled)
    # The shared poller first (a `// @uses` line), then the file's own code; no opening comment.
    shared = js.source("connection_watch.js")
    assert js.uses("replica_watch.js") == ["connection_watch.js"]
    assert filled.startswith(shared + "\n") and shared.startswith("window.__labConnection = ")
    assert filled[len(shared) + 1 :].startswith("const processOf = "), "the comment is not sent"
    assert "// " not in filled.split("\n", 1)[0]
    ticks = js.sections("slider_ticks.js")
    assert ticks == {
        "temperature": 'return (10 ** tick).toPrecision(3).replace(".", sign)\n',
        "d_k": "return Math.round(2 ** tick).toString()\n",
        "decimal": 'return String(Number(tick.toFixed(2))).replace(".", sign)\n',
    }


def _is_text(node) -> bool:
    """A string written in Python: a literal, an f-string, or literals joined with +."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _is_text(node.left) or _is_text(node.right)
    return False


def test_no_browser_script_is_written_inside_python():
    found = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        where = path.relative_to(ROOT)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.keyword) and node.arg == "code" and _is_text(node.value):
                found.append(f"{where}:{node.value.lineno}: code=...")
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                named = {getattr(t, "id", None) for t in targets}
                if "_scripts" in named and isinstance(node.value, ast.Dict):
                    if any(_is_text(v) for v in node.value.values):
                        found.append(f"{where}:{node.lineno}: _scripts with inline JavaScript")
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if "<script" in node.value.lower():
                    found.append(f"{where}:{node.lineno}: <script> in a string")
    assert found == [], "JavaScript belongs in app/js/ (docs/browser-scripts.md):\n" + "\n".join(
        found
    )
