"""The images tests/server/test_container.py runs, made once and early.

On a fresh machine (CI) making them takes about three minutes, mostly waiting on Debian's
mirrors and PyPI: the base (mmdebstrap), the wheelhouse (tools/make_wheelhouse.py), the lab's
image (`podman build` of the Dockerfile, offline) and the small HAProxy and Redis images that
deploy/compose.yaml starts. tests/server/conftest.py starts `prepare()` in a background thread
as soon as the run has collected a container test, at low CPU priority, so the downloads overlap
the rest of the suite; the tests' fixtures then take the result (`prepared()`), waiting only for
what is left. Each image is named by a digest of what made it and made only when missing:

- the base by mmdebstrap's command, the wheelhouse by the locks (in ~/.cache/attention-lab/, or
  ATTENTION_LAB_CACHE);
- the lab's image by its whole build context (localhost/attention-lab:ctx-DIGEST);
- HAProxy's and Redis's by their Containerfile and the base.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from labserver import ROOT

CACHE = Path(os.environ.get("ATTENTION_LAB_CACHE", Path.home() / ".cache" / "attention-lab"))
HERE = Path(__file__).resolve().parent
TOOLS = ("podman", "runc", "mmdebstrap")
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
IMAGE_REPOSITORY = "localhost/attention-lab"
RUN_ID = f"{os.getpid()}"


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def _digest(*parts: bytes | str) -> str:
    sha = hashlib.sha256()
    for part in parts:
        sha.update(part.encode() if isinstance(part, str) else part)
        sha.update(b"\0")
    return sha.hexdigest()[:12]


# Made while other tests run: those keep the CPU first (`nice` rather than os.nice in the child,
# which is unsafe in a process with threads).
NICE = ("nice", "-n", "10")


class Podman:
    """`podman ARGS` with this run's containers.conf; builds with `background=True` niced)."""

    def __init__(self, folder: Path):
        nofile, nproc = (
            resource.getrlimit(limit)[1]
            for limit in (resource.RLIMIT_NOFILE, resource.RLIMIT_NPROC)
        )
        nofile = 65536 if nofile == resource.RLIM_INFINITY else min(nofile, 65536)
        nproc = 4096 if nproc == resource.RLIM_INFINITY else min(nproc, 4096)
        conf = folder / "containers.conf"
        conf.write_text(CONTAINERS_CONF.format(nofile=nofile, nproc=nproc))
        self.env = {**os.environ, "CONTAINERS_CONF": str(conf)}

    def __call__(
        self, *args: str, timeout: float = 120, check: bool = True, background=False, **kwargs
    ):
        result = subprocess.run(
            [*(NICE if background else ()), "podman", *args],
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


def base_image(podman: Podman) -> str:
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
            [*NICE, *MMDEBSTRAP, str(partial)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        partial.rename(tarball)
    podman("import", "--quiet", str(tarball), tag, timeout=300)
    return tag


def wheelhouse() -> Path:
    """Every wheel the image installs, downloaded once per set of locks."""
    locks = [ROOT / "requirements" / name for name in ("runtime.lock", "build.lock")]
    tool = ROOT / "tools" / "make_wheelhouse.py"
    folder = CACHE / f"wheelhouse-{_digest(*(p.read_bytes() for p in [*locks, tool]))}"
    if not (folder / "complete").exists():
        folder.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(
            [*NICE, sys.executable, str(tool), str(folder)],
            capture_output=True,
            text=True,
            timeout=600,
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


def lab_image(podman: Podman, base: str, wheels: Path, tmp: Path) -> tuple[str, str]:
    """The project's Dockerfile built from the local base and the wheelhouse, offline; tagged by
    a digest of its build context, so an unchanged checkout reuses the image it built before.
    Returns the tag and what was done (for the test's output)."""
    context = _build_context(tmp, wheels)
    tag = f"{IMAGE_REPOSITORY}:ctx-{_context_digest(context, base)}"
    if podman.exists(tag):
        return tag, f"image {tag} exists: not built again"
    started = time.monotonic()
    podman(
        "build",
        "--quiet",
        "--format",
        "docker",  # OCI images carry no HEALTHCHECK
        "--network",
        "none",  # the wheelhouse alone: nothing is fetched
        "--build-arg",
        f"BASE={base}",
        "--tag",
        tag,
        str(context),
        timeout=900,
        background=True,
    )
    built = f"image built in {time.monotonic() - started:.1f} s"
    # One image of the lab is kept: those built from other contexts go, or every change to the
    # lab's code would leave 0.4 GB behind on a developer's disk; dangling layers of builds
    # over a day old go too (the build's cache for the next change stays).
    listed = podman("images", "--format", "{{.Repository}}:{{.Tag}}", IMAGE_REPOSITORY).stdout
    older = [t for t in listed.split() if t.startswith(f"{IMAGE_REPOSITORY}:") and t != tag]
    if older:
        podman("rmi", "--force", *older, check=False)
    podman("image", "prune", "--force", "--filter", "until=24h", check=False)
    return tag, built


def local_image(podman: Podman, base: str, what: str) -> str:
    """A small image of Debian's `what` (haproxy, redis), built once per machine."""
    containerfile = HERE / "containers" / f"{what}.Containerfile"
    tag = f"localhost/attention-lab-{what}:{_digest(base, containerfile.read_bytes())}"
    if not podman.exists(tag):
        podman(
            "build",
            "--quiet",
            "--format",
            "docker",
            "--network",
            "host",  # apt-get reaches Debian's mirrors
            "--build-arg",
            f"BASE={base}",
            "--file",
            str(containerfile),
            "--tag",
            tag,
            str(containerfile.parent),
            timeout=600,
            background=True,
        )
    return tag


@dataclass(frozen=True)
class Images:
    podman: Podman
    base: str
    lab: str
    haproxy: str
    redis: str
    log: tuple[str, ...]  # what was made, and how long it took


def prepare() -> Images:
    """Every image the container tests use, made where missing. One process at a time makes
    them (a lock file in CACHE): under pytest-xdist every worker that collected a container
    test starts this, and the second one then finds each image made."""
    started = time.monotonic()
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "images.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        return _prepare(started)


def _prepare(started: float) -> Images:
    folder = Path(tempfile.mkdtemp(prefix="attention-lab-images-"))
    podman = Podman(folder)
    base = base_image(podman)
    lab, built = lab_image(podman, base, wheelhouse(), folder)
    haproxy, redis = (local_image(podman, base, what) for what in ("haproxy", "redis"))
    log = (built, f"every image ready {time.monotonic() - started:.1f} s after the start")
    return Images(podman, base, lab, haproxy, redis, log)


_future: Future | None = None
_lock = threading.Lock()


def start_in_background() -> None:
    """Begin `prepare()` in a daemon thread (once per process; nothing when a tool is missing:
    the tests then skip, naming it)."""
    global _future
    with _lock:
        if _future is not None or missing_tools():
            return
        _future = Future()
    threading.Thread(target=_run, args=(_future,), name="container-images", daemon=True).start()


def _run(future: Future) -> None:
    try:
        future.set_result(prepare())
    except BaseException as exc:  # handed to the test that waits for it
        future.set_exception(exc)


def prepared(timeout: float = 1500) -> Images:
    """The images, made by the background start or (if none began) here and now."""
    start_in_background()
    assert _future is not None
    return _future.result(timeout=timeout)
