"""The Dockerfile built and run for real, with podman, on a local Debian base and a wheelhouse.

No registry is reachable from CI or from a school's build machine, so nothing is pulled: the
base is Debian bookworm made by mmdebstrap (once per machine, cached), the wheels come from a
wheelhouse filled by tools/make_wheelhouse.py (once per lock, cached), and the image is built
with --network none, which proves the offline recipe in docs/deployment.md. The container is
then checked as a user would meet it: the page, its CSS and the binding model, /liveness, the
uid, the health check, a foreign websocket origin, SIGTERM, no compiler; and
deploy/compose.yaml starts three replicas, Redis and HAProxy (local images of Debian's) with
podman-compose, and a page opens through the balancer.

.ci/run installs podman, runc, mmdebstrap, iptables and podman-compose. The caches live in
~/.cache/attention-lab/ (ATTENTION_LAB_CACHE elsewhere) and in podman's own image store, each
named by a digest of what made it: the base by mmdebstrap's command, the wheelhouse by the locks,
the lab's image by its whole build context (localhost/attention-lab:ctx-DIGEST, built only when
no image has that tag), HAProxy's and Redis's by their Containerfile and the base.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urljoin

import pytest
from labserver import (
    ROOT,
    free_port,
    http_get,
    open_session,
    page_links,
    session_token,
    websocket_handshake,
)
from waiting import wait_until

pytestmark = [pytest.mark.server, pytest.mark.timeout(1200)]

CACHE = Path(os.environ.get("ATTENTION_LAB_CACHE", Path.home() / ".cache" / "attention-lab"))
HERE = Path(__file__).resolve().parent
# The local base: what the Dockerfile needs (python3 with venv) and nothing to build with. No
# docs, man pages or locales, and no perl (mmdebstrap's usrmerge pulls it in; bookworm's
# usr-is-merged stands in for it): 130 MB instead of 225 MB.
MMDEBSTRAP = [
    "mmdebstrap",
    "--quiet",
    "--variant=minbase",
    "--include=python3,python3-venv,ca-certificates,usr-is-merged",
    *(
        f"--dpkgopt=path-exclude=/usr/share/{folder}/*"
        for folder in ("man", "doc", "locale", "info")
    ),
    "--dpkgopt=path-include=/usr/share/doc/*/copyright",
    '--customize-hook=chroot "$1" apt-get purge -y -qq --autoremove usrmerge perl '
    "libperl5.36 perl-modules-5.36",
    "bookworm",
]
# Every podman call below reads this file (CONTAINERS_CONF). runc: crun, podman's default where
# installed, fails on these machines' cgroups. Ulimits no higher than this process's own hard
# limits: rootful podman asks for 1048576 open files, which runc may not set here ("error
# setting rlimits ... operation not permitted"); HAProxy's maxconn 5000 needs over 10031.
CONTAINERS_CONF = """\
[containers]
default_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]
log_driver = "k8s-file"

[engine]
runtime = "runc"
events_logger = "file"
"""
# The image holds the venv and the base: 386 MB on this Debian base, measured; a regression
# (pip, the test suites or the unused Panel bundles back in the image) adds 50 MB or more.
MAX_IMAGE_MB = 430
RUN_ID = f"{os.getpid()}"


def _digest(*parts: bytes | str) -> str:
    sha = hashlib.sha256()
    for part in parts:
        sha.update(part.encode() if isinstance(part, str) else part)
        sha.update(b"\0")
    return sha.hexdigest()[:12]


class Podman:
    def __init__(self, conf: Path):
        self.env = {**os.environ, "CONTAINERS_CONF": str(conf)}

    def __call__(self, *args: str, timeout: float = 120, check: bool = True, **kwargs):
        result = subprocess.run(
            ["podman", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            **kwargs,
        )
        if check:
            assert result.returncode == 0, f"podman {' '.join(args)}:\n{result.stderr}"
        return result

    def exists(self, image: str) -> bool:
        return self("image", "exists", image, check=False).returncode == 0


@pytest.fixture(scope="module")
def podman(tmp_path_factory) -> Podman:
    missing = [tool for tool in ("podman", "runc", "mmdebstrap") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (.ci/run installs them)")
    conf = tmp_path_factory.mktemp("podman") / "containers.conf"
    nofile, nproc = (
        resource.getrlimit(limit)[1] for limit in (resource.RLIMIT_NOFILE, resource.RLIMIT_NPROC)
    )
    nofile = 65536 if nofile == resource.RLIM_INFINITY else min(nofile, 65536)
    nproc = 4096 if nproc == resource.RLIM_INFINITY else min(nproc, 4096)
    conf.write_text(CONTAINERS_CONF.format(nofile=nofile, nproc=nproc))
    return Podman(conf)


@pytest.fixture(scope="module")
def base_image(podman) -> str:
    """Debian bookworm with python3 and venv, made once per machine (about a minute)."""
    tag = f"localhost/attention-lab-base:bookworm-{_digest(*MMDEBSTRAP)}"
    if podman.exists(tag):
        return tag
    CACHE.mkdir(parents=True, exist_ok=True)
    tarball = CACHE / f"{tag.rsplit(':', 1)[1]}.tar"
    if not tarball.exists():
        # mmdebstrap reads the format from the name: keep ".tar" last.
        partial = tarball.with_suffix(f".partial-{RUN_ID}.tar")
        result = subprocess.run(
            [*MMDEBSTRAP, str(partial)], capture_output=True, text=True, timeout=600
        )
        assert result.returncode == 0, result.stdout + result.stderr
        partial.rename(tarball)
    podman("import", "--quiet", str(tarball), tag, timeout=300)
    return tag


@pytest.fixture(scope="module")
def wheelhouse() -> Path:
    """Every wheel the image installs, downloaded once per set of locks."""
    locks = [ROOT / "requirements" / name for name in ("runtime.lock", "build.lock")]
    tool = ROOT / "tools" / "make_wheelhouse.py"
    folder = CACHE / f"wheelhouse-{_digest(*(p.read_bytes() for p in [*locks, tool]))}"
    if not (folder / "complete").exists():
        folder.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(
            [sys.executable, str(tool), str(folder)], capture_output=True, text=True, timeout=600
        )
        assert result.returncode == 0, result.stdout + result.stderr
        (folder / "complete").touch()
    return folder


def _build_context(tmp: Path, wheels: Path) -> Path:
    """What `docker build .` sees of the checkout (its COPY sources), plus the wheelhouse."""
    context = tmp / "context"
    context.mkdir()
    for name in ("Dockerfile", ".dockerignore", "pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, context / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("engine", "app", "assets", "requirements"):
        shutil.copytree(ROOT / folder, context / folder, ignore=ignore)
    shutil.copytree(ROOT / "wheelhouse", context / "wheelhouse", ignore=ignore)
    for wheel in wheels.glob("*.whl"):
        try:
            os.link(wheel, context / "wheelhouse" / wheel.name)
        except OSError:
            shutil.copy2(wheel, context / "wheelhouse" / wheel.name)
    return context


def _context_digest(context: Path, *extra: str) -> str:
    """A digest of everything the build sees: each file's path, mode and bytes in the context
    (the Dockerfile, what it copies, the wheelhouse), and `extra` (the base image's tag)."""
    sha = hashlib.sha256()
    for part in extra:
        sha.update(part.encode() + b"\0")
    for path in sorted(p for p in context.rglob("*") if p.is_file()):
        sha.update(
            f"{path.relative_to(context).as_posix()}\0{path.stat().st_mode & 0o111}\0".encode()
        )
        sha.update(hashlib.sha256(path.read_bytes()).digest())
    return sha.hexdigest()[:16]


IMAGE_REPOSITORY = "localhost/attention-lab"


@pytest.fixture(scope="module")
def image(podman, base_image, wheelhouse, tmp_path_factory) -> str:
    """The project's Dockerfile built from the local base and the wheelhouse, offline; tagged by
    a digest of its build context, so an unchanged checkout reuses the image it built before
    (CI, a fresh machine, builds it once)."""
    context = _build_context(tmp_path_factory.mktemp("image"), wheelhouse)
    tag = f"{IMAGE_REPOSITORY}:ctx-{_context_digest(context, base_image)}"
    if podman.exists(tag):
        print(f"image {tag} exists: not built again")
        yield tag
        return
    started = time.monotonic()
    podman(
        "build",
        "--quiet",
        "--format",
        "docker",  # OCI images carry no HEALTHCHECK
        "--network",
        "none",  # the wheelhouse alone: nothing is fetched
        "--build-arg",
        f"BASE={base_image}",
        "--tag",
        tag,
        str(context),
        timeout=900,
    )
    print(f"image built in {time.monotonic() - started:.1f} s")
    # One image of the lab is kept: those built from other contexts go, or every change to the
    # lab's code would leave 0.4 GB behind on a developer's disk; dangling layers of builds
    # over a day old go too (the build's cache for the next change stays).
    listed = podman("images", "--format", "{{.Repository}}:{{.Tag}}", IMAGE_REPOSITORY).stdout
    older = [t for t in listed.split() if t.startswith(f"{IMAGE_REPOSITORY}:") and t != tag]
    if older:
        podman("rmi", "--force", *older, check=False)
    podman("image", "prune", "--force", "--filter", "until=24h", check=False)
    yield tag


def _run_lab(podman, image: str, name: str) -> int:
    port = free_port()
    podman(
        "run",
        "--detach",
        "--name",
        name,
        "--network",
        "host",
        "--env",
        f"ATTENTION_LAB_PORT={port}",
        "--env",
        f"ATTENTION_LAB_ALLOWED_ORIGINS=localhost:{port}",
        image,
    )
    wait_until(
        lambda: _answers(f"http://127.0.0.1:{port}/liveness", podman, name),
        f"the container {name} to answer /liveness",
        120,
        interval=0.3,
    )
    return port


def _answers(url: str, podman, name: str) -> bool:
    state = podman("inspect", "--format", "{{.State.Status}}", name).stdout.strip()
    if state not in {"running", "created", "configured"}:
        logs = podman("logs", name, check=False)
        raise AssertionError(f"the container is {state}:\n{logs.stdout}{logs.stderr}")
    try:
        return http_get(url, timeout=2)[0] == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def lab(podman, image):
    name = f"attention-lab-test-{RUN_ID}"
    started = time.monotonic()
    port = _run_lab(podman, image, name)
    print(f"container live in {time.monotonic() - started:.1f} s")
    yield name, port
    podman("rm", "--force", "--time", "0", name, check=False)


def test_the_container_serves_the_lab_its_css_and_the_binding_model(lab):
    name, port = lab
    base = f"http://localhost:{port}"
    status, _, page = http_get(f"{base}/app")
    assert status == 200 and b"<title>Attention Lab" in page
    assert b"html.lab-presenter" in page, "the lab's own stylesheet is inlined in the page"
    # Every script and stylesheet the page asks for, served by the container itself.
    links = [link for link in page_links(page.decode()) if not link.startswith(("data:", "#"))]
    assert any(link.endswith(".css") for link in links) and any(".js" in x for x in links)
    for link in links:
        assert not link.startswith(("http:", "https:", "//")), f"an external URL: {link}"
        assert http_get(urljoin(f"{base}/app", link))[0] == 200, f"{link} does not load"
    for css in ("lab.css", "lab-widgets.css"):
        status, _, body = http_get(f"{base}/assets/{css}")
        assert status == 200 and body == (ROOT / "assets" / css).read_bytes(), css
    shown = open_session(
        f"{base}/app",
        {"model": "binding"},
        lambda doc: {"labels": list(doc.select_one({"name": "weights"}).data["label"])},
    )
    assert shown["connected"] and shown["labels"][0] == "<bos> @0", shown
    assert http_get(f"{base}/liveness")[0] == 200


def test_the_process_runs_as_uid_10001_and_its_health_check_passes(podman, lab):
    name, _ = lab
    status = podman("exec", name, "cat", "/proc/1/status").stdout
    uids = next(line.split()[1:] for line in status.splitlines() if line.startswith("Uid:"))
    assert set(uids) == {"10001"}, f"the server runs as {uids}"
    assert "attention-lab" in podman("exec", name, "cat", "/proc/1/cmdline").stdout
    result = podman("healthcheck", "run", name, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    health = json.loads(podman("inspect", "--format", "{{json .Config.Healthcheck}}", name).stdout)
    assert "/liveness" in " ".join(health["Test"]), health


def test_a_foreign_websocket_origin_is_refused(lab):
    _, port = lab
    status, _, page = http_get(f"http://localhost:{port}/app")
    assert status == 200
    token = session_token(page.decode())
    ws = f"ws://localhost:{port}/app/ws"
    assert websocket_handshake(ws, token, f"http://localhost:{port}") == 101
    assert websocket_handshake(ws, token, "http://evil.example.org") == 403


def test_the_image_holds_no_compiler_no_pip_and_stays_small(podman, image):
    probe = (
        "for tool in gcc cc c++ g++ clang make ld as; do command -v $tool; done; "
        "/opt/lab/bin/python -m pip --version 2>/dev/null; ls /wheels /wheelhouse /src 2>/dev/null"
    )
    found = podman("run", "--rm", "--network", "none", image, "sh", "-c", probe, check=False)
    assert found.stdout.strip() == "", f"build tools in the image:\n{found.stdout}"
    size_mb = int(podman("image", "inspect", "--format", "{{.Size}}", image).stdout) / 1e6
    print(f"image size {size_mb:.0f} MB")
    assert size_mb < MAX_IMAGE_MB, f"the image grew to {size_mb:.0f} MB"


def test_the_container_stops_cleanly_on_sigterm_within_10_s(podman, image):
    name = f"attention-lab-stop-{RUN_ID}"
    try:
        _run_lab(podman, image, name)
        started = time.monotonic()
        podman("kill", "--signal", "TERM", name)
        exit_code = podman("wait", name, timeout=30).stdout.strip()
        took = time.monotonic() - started
        print(f"stopped {took:.1f} s after SIGTERM")
        assert exit_code == "0", podman("logs", name).stderr
        assert took < 10, f"took {took:.1f} s to stop"
    finally:
        podman("rm", "--force", "--time", "0", name, check=False)


def _local_image(podman, base_image: str, what: str) -> str:
    """A small image of Debian's `what` (haproxy, redis), built once per machine."""
    containerfile = HERE / "containers" / f"{what}.Containerfile"
    tag = f"localhost/attention-lab-{what}:{_digest(base_image, containerfile.read_bytes())}"
    if not podman.exists(tag):
        podman(
            "build",
            "--quiet",
            "--format",
            "docker",
            "--network",
            "host",  # apt-get reaches Debian's mirrors
            "--build-arg",
            f"BASE={base_image}",
            "--file",
            str(containerfile),
            "--tag",
            tag,
            str(containerfile.parent),
            timeout=600,
        )
    return tag


def test_compose_serves_the_lab_through_haproxy(podman, image, base_image):
    compose = shutil.which("podman-compose")
    if compose is None:
        pytest.skip("podman-compose is not installed (.ci/run installs it)")
    port = free_port()
    project = f"attention-lab-test-{RUN_ID}"
    env = {
        **podman.env,
        "LAB_IMAGE": image,
        "HAPROXY_IMAGE": _local_image(podman, base_image, "haproxy"),
        "REDIS_IMAGE": _local_image(podman, base_image, "redis"),
        "LAB_PORT": str(port),
        "LAB_PUBLIC_HOST": f"localhost:{port}",
    }
    command = [compose, "--project-name", project, "--file", str(ROOT / "deploy" / "compose.yaml")]

    def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*command, *args], env=env, capture_output=True, text=True, timeout=timeout
        )

    started = time.monotonic()
    try:
        up = run("up", "--detach", "--no-build")
        assert up.returncode == 0, up.stdout + up.stderr

        def through_balancer() -> bool:
            try:
                return http_get(f"http://localhost:{port}/app", timeout=5)[0] == 200
            except OSError:
                return False

        wait_until(through_balancer, "the lab to answer through HAProxy", 120, interval=0.5)
        print(f"compose up and serving in {time.monotonic() - started:.1f} s")
        status, headers, page = http_get(f"http://localhost:{port}/app")
        assert status == 200 and b"<title>Attention Lab" in page
        headers = {key.lower(): value for key, value in headers.items()}
        assert "SRV=r" in headers.get("set-cookie", ""), f"no sticky cookie: {headers}"
        token = session_token(page.decode())
        ws = f"ws://localhost:{port}/app/ws"
        cookie = {"Cookie": headers["set-cookie"].split(";")[0]}
        assert http_get(f"http://localhost:{port}/liveness", headers=cookie)[0] == 200
        assert websocket_handshake(ws, token, "http://evil.example.org") == 403
        # The replicas reach the class store at the address compose gives them, and it keeps
        # an append-only file on its volume.
        probe = (
            "import os, redis; r = redis.Redis.from_url(os.environ['ATTENTION_LAB_STORE']); "
            "print(r.ping(), r.config_get('appendonly')['appendonly'])"
        )
        store = podman("exec", f"{project}_lab1_1", "python", "-c", probe, check=False)
        assert store.stdout.split() == ["True", "yes"], store.stdout + store.stderr
    finally:
        down = run("down", "--volumes", "--timeout", "5")
        label = f"label=io.podman.compose.project={project}"
        leftover = podman("ps", "--all", "--quiet", "--filter", label).stdout.split()
        # podman-compose 1.0 leaves a container that is restarting, and always the network.
        if leftover:
            podman("rm", "--force", "--time", "0", *leftover, check=False)
        podman("network", "rm", "--force", f"{project}_default", check=False)
        podman("volume", "rm", "--force", f"{project}_redis-data", check=False)
        print(f"compose test took {time.monotonic() - started:.1f} s")
    assert down.returncode == 0, down.stdout + down.stderr
    assert not leftover, f"compose down left containers behind: {leftover}"
