"""The lab's browser scripts: each job's JavaScript in its own file in this folder.

The Python side reads a file once, when the module that uses it is imported, and hands the text
to Bokeh (CustomJS, CustomJSTickFormatter) or Panel (ReactiveHTML `_scripts`) as it is.
docs/browser-scripts.md lists the files; tests/js/ runs the preview's arithmetic in Node against
the engine and lints every file.

The comment lines a file starts with document it and are not sent. Two shapes of file:

- `source(name, **values)`: the whole file is one script. A value the Python side decides (a
  period, an endpoint) stands in the file as a placeholder `__NAME__`, a valid JavaScript
  identifier, replaced by the JSON of `values["NAME"]` (so a string arrives quoted, a number
  bare). Every placeholder must be given and every value must be used.
- `sections(name)`: one ReactiveHTML component's scripts, or a group of one-line formatters.
  A line `// @script NAME` starts the script NAME, which runs to the next such line.

A script that builds on another file says so in its opening comment, with a line
`// @uses FILE.js`: `source` sends that file's code first, in the same script (as
reconnect_watch.js and replica_watch.js share connection_watch.js's one poller).
"""

from __future__ import annotations

import json
import re
from importlib.resources import files

PLACEHOLDER = re.compile(r"\b__([A-Z][A-Z0-9_]*)__\b")
SECTION = re.compile(r"^// @script (\w+)[ \t]*$", re.MULTILINE)
USES = re.compile(r"^// @uses ([\w.-]+\.js)[ \t]*$")


def text(name: str) -> str:
    """The file app/js/<name>, as it is."""
    return (files(__package__) / name).read_text(encoding="utf-8")


def _code(name: str) -> str:
    """app/js/<name> without the comment lines it starts with."""
    lines = text(name).splitlines(keepends=True)
    start = 0
    while start < len(lines) and (lines[start].startswith("//") or not lines[start].strip()):
        if SECTION.match(lines[start]):
            break
        start += 1
    return "".join(lines[start:])


def uses(name: str) -> list[str]:
    """The files app/js/<name> builds on: its opening comment's `// @uses FILE.js` lines."""
    found = []
    for line in text(name).splitlines():
        if line.strip() and not line.startswith("//"):
            break  # the opening comment is over
        match = USES.match(line)
        if match:
            found.append(match.group(1))
    return found


def source(name: str, **values: object) -> str:
    """The script in app/js/<name> with its `__NAME__` placeholders filled in from `values`,
    after the code of the files it uses."""
    code = "".join(_code(used) + "\n" for used in uses(name)) + _code(name)
    wanted = set(PLACEHOLDER.findall(code))
    if wanted != set(values):
        raise ValueError(
            f"app/js/{name}: placeholders {sorted(wanted)} but values for {sorted(values)}"
        )
    return PLACEHOLDER.sub(lambda m: json.dumps(values[m.group(1)]), code)


def sections(name: str) -> dict[str, str]:
    """The scripts in app/js/<name> by name (see the module docstring); no placeholders."""
    code = _code(name)
    if PLACEHOLDER.search(code):
        raise ValueError(f"app/js/{name}: a sections file takes no placeholders")
    parts = SECTION.split(code)
    if parts[0].strip():
        raise ValueError(f"app/js/{name}: code before the first `// @script NAME` line")
    scripts = {}
    for script, body in zip(parts[1::2], parts[2::2], strict=True):
        if script in scripts:
            raise ValueError(f"app/js/{name}: two scripts named {script!r}")
        scripts[script] = body.strip("\n") + "\n"
    if not scripts:
        raise ValueError(f"app/js/{name}: no `// @script NAME` line")
    return scripts
