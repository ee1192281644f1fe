"""Suite-wide rules.

In CI (CI=true) a skipped test is a failure: the browser and torch tests must really run there,
so a missing Chromium or torch wheel turns CI red instead of silently shrinking the suite.

The one exception is hardware, allowed by name. A test that needs something a CI machine may
or may not have says so with `@pytest.mark.hardware(NAME)`, NAME one of HARDWARE below; it is
skipped (in CI too) on a machine without it, with a reason that starts "needs hardware". Any
other skip of that test, like every skip of any other test, still fails in CI. The names:

- "cuda": a CUDA GPU that torch can use (torch itself must be installed: a missing torch is
  not hardware, and its skip fails in CI).
- "no-cuda": a machine WITHOUT such a GPU (what torch says when asked for CUDA there).
- "openblas": NumPy built on OpenBLAS, whose thread count can be pinned per thread
  (engine/backends.py's can_pin_blas_threads); other BLAS builds have no such control.

A name not in HARDWARE is an error, so a typo cannot quietly allow a skip.
tests/test_ci_skip_policy.py runs small suites under these rules.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import pytest

import tools  # noqa: F401 - first: the session secret, before anything imports Bokeh

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
HARDWARE_REASON = "needs hardware"


def _torch_cuda() -> bool | None:
    """Whether torch sees a CUDA GPU; None where torch is missing (not a hardware question)."""
    try:
        import torch
    except ImportError:
        return None
    return bool(torch.cuda.is_available())


def _no_cuda() -> bool | None:
    cuda = _torch_cuda()
    return None if cuda is None else not cuda


def _openblas() -> bool:
    import sys

    import engine  # noqa: F401 - loads engine.backends

    return sys.modules["engine.backends"].can_pin_blas_threads()


@dataclass(frozen=True)
class Hardware:
    what: str
    # True: present; False: absent (the test is skipped); None: cannot tell (the test runs, and
    # whatever it skips on is an ordinary skip).
    present: Callable[[], bool | None]


HARDWARE: dict[str, Hardware] = {
    "cuda": Hardware("a CUDA GPU that torch can use", _torch_cuda),
    "no-cuda": Hardware("a machine without a CUDA GPU", _no_cuda),
    "openblas": Hardware("NumPy built on OpenBLAS (per-thread BLAS threads)", _openblas),
}


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "hardware(name): needs this hardware (tests/conftest.py's HARDWARE); skipped without "
        "it, the one skip CI allows",
    )
    # pytest-xdist's own marker, registered here too so that --strict-markers accepts it
    # without xdist: under `-n N --dist loadgroup` (README's test command) the modules that
    # share a session server (the replica room) stay on one worker, so it starts once.
    config.addinivalue_line("markers", "xdist_group(name): run on one pytest-xdist worker")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """`-n auto` (pyproject's addopts): one worker per core this process may run on, at most
    four: each worker drives its own Chromium and lab servers. (A third worker on two cores
    took the suite from 574 s to 513 s, but pages then missed timings: not worth it.)"""
    return max(1, min(4, len(os.sched_getaffinity(0))))


# Folders whose modules start servers, Chromium pages or containers: they go to the workers
# first, so the long ones are not left for last with the other worker idle.
HEAVY_FIRST = ("server", "browser")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist names each test's group from its marker
def pytest_collection_modifyitems(config, items):
    """Each module's tests run on one pytest-xdist worker (`--dist loadgroup`), so its
    module-scoped pages, servers and goldens are made once; a module that shares a group
    with others (the replica room's) keeps it. The heavy folders run first."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
    items.sort(key=lambda item: item.path.parent.name not in HEAVY_FIRST)


def _hardware_names(item) -> list[str]:
    names = []
    for mark in item.iter_markers("hardware"):
        if len(mark.args) != 1 or mark.args[0] not in HARDWARE:
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.hardware takes one of {sorted(HARDWARE)}, "
                f"got {mark.args}"
            )
        names.append(mark.args[0])
    return names


def pytest_runtest_setup(item):
    for name in _hardware_names(item):
        if HARDWARE[name].present() is False:
            pytest.skip(f"{HARDWARE_REASON} {name!r}: {HARDWARE[name].what}, not on this machine")


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # (path, line, "Skipped: reason")
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _allowed_skip(item, report) -> bool:
    """A hardware skip: the test is marked for that hardware and skipped for lack of it."""
    reason = _skip_reason(report)
    try:
        names = _hardware_names(item)
    except pytest.UsageError:
        return False
    return any(reason.startswith(f"{HARDWARE_REASON} {name!r}:") for name in names)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if (
        IN_CI
        and report.skipped
        and not hasattr(report, "wasxfail")
        and not _allowed_skip(item, report)
    ):
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, which must run every test: {report.longrepr}"


@pytest.fixture(scope="session")
def chromium():
    """One headless Debian Chromium (Playwright, no browser download) for the whole run.

    Playwright's sync API keeps an event loop running while it is open, and a second
    sync_playwright() in the same process refuses to start: every test shares this one.
    """
    from browser.labpage import CHROMIUM_ARGS, headless_chromium_path

    path = headless_chromium_path()
    if path is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


# ------------------------------------------------------------------ shared servers (tools/harness.py)


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory):
    """One `attention-lab --no-show --port <free>` with the lab's default settings for the
    whole run, shared by every test that only reads from it (the HTTP, fuzz and security tests
    in tests/server/, where it is `lab`, and the browser tests). A test that kills, restarts or
    configures a server starts its own with tools/harness.py's `serve_lab` or `start_lab`."""
    from tools.harness import serve_lab

    server = serve_lab(tmp_path_factory.mktemp("lab") / "server.log")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def replica_room(tmp_path_factory):
    """Three replicas behind the shipped HAProxy with Redis between them, for the whole run:
    the balancer's tests and the class across replicas share it (tests/server/). A test that
    stops a replica or Redis leaves it to its module's fixture to bring them back
    (`ReplicaRoom.heal`)."""
    from tools.harness import RedisServer, ReplicaRoom, haproxy_binary

    if haproxy_binary() is None:
        pytest.skip("HAProxy is not installed (apt-get install haproxy)")
    if RedisServer.binary() is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    room = ReplicaRoom(tmp_path_factory.mktemp("replicas"), ("r1", "r2", "r3"), redis=True)
    room.start()
    yield room
    room.stop()


# The folders whose tests build pages in this process, without a server: they get the
# process-wide patches a server applies when it starts (app.patches.apply_all). Other tests do
# not import Panel for them.
IN_PROCESS_PAGES = ("app", "browser")


@pytest.fixture(autouse=True)
def process_wide_patches(request):
    if request.path.parent.name in IN_PROCESS_PAGES:
        from app.patches import apply_all

        apply_all()  # once per process; later calls only report


@pytest.fixture(autouse=True)
def fresh_process_caches():
    """Every test starts with the process-wide result caches empty (app.state.pipeline): a test
    that patches the engine, a model or the backend table must see its patch, not a result some earlier
    test left behind. Not imported here when the test never loaded the app."""
    import sys

    pipeline = sys.modules.get("app.state.pipeline")
    if pipeline is not None:
        pipeline.clear_caches()
    for name in ("app.state.model_runs", "app.state.attribution_runs"):
        module = sys.modules.get(name)
        if module is not None:
            module.clear()
    yield
