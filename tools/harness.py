"""Real processes on loopback for the tools and the tests: lab servers, replicas, HAProxy, Redis.

One harness, used by `tools/` (the load tool, the benchmarks) and by the tests (through
tests/conftest.py's session fixtures and tests/server/labserver.py):

- `free_port()`, `require_loopback(url)`, `clean_env()` and `wait_until()` (the one poll);
- `start_lab(args, port, log_path)` / `serve_lab(log_path, *args)`: an `attention-lab` process
  that has answered /liveness, as a `LabServer` (its port, log file and `stop()`);
- `RedisServer`: a redis-server on its own port and folder;
- `HAProxy`: the shipped deploy/haproxy.cfg with only its `bind` and `server` lines replaced;
- `ReplicaRoom`: N replicas behind HAProxy, with an optional Redis store between them.

What every start keeps (each was a fix):

- Output goes to a log file, never a pipe that could fill up and stall the process; the log is
  shown when a start fails.
- A lab stops with SIGTERM, as docker, systemd and Kubernetes stop it. Not SIGINT: a shell that
  starts a run in the background (`.ci/run &`) leaves SIGINT ignored in every child, and each
  stop then sat out its timeout before a kill (commit b009e63: 280 s of a 27-minute run).
- A start has a deadline (START_TIMEOUT_S for a lab) and fails naming its log.
- A lab runs in `clean_env()`: no ATTENTION_LAB_* or Bokeh origin setting leaks in from the
  caller's environment.

Set HARNESS_START_LOG to a file's path and every lab start appends one line to it (the port,
the log, and the pytest test that asked, from PYTEST_CURRENT_TEST): how a run counts its
lab processes.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
HAPROXY_CONFIG = ROOT / "deploy" / "haproxy.cfg"
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 20.0
# `python -m app` from this checkout: what the tools run (the console script may be another
# install's); the tests run `lab_command()`, the installed console script when there is one.
PYTHON_M_APP = (sys.executable, "-m", "app")

T = TypeVar("T")


class StartError(RuntimeError):
    """A process the harness started exited or never answered; the message holds its log."""


# ------------------------------------------------------------------------------ the basics


def free_port() -> int:
    """A TCP port nobody listens on at 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def require_loopback(url: str) -> None:
    """Refuse (SystemExit) an address that is not this machine: the tools only load localhost."""
    host = urlparse(url).hostname or ""
    addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    if not addresses or not all(
        ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses
    ):
        raise SystemExit(f"{url} is not a loopback address; this tool only loads localhost")


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without any lab or Bokeh origin settings leaking in; the
    labs it starts sign their sessions with this process's BOKEH_SECRET_KEY (tools/__init__.py
    made it, before Bokeh's client here bound it)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("ATTENTION_LAB_") and key != "BOKEH_ALLOW_WS_ORIGIN"
    }
    env.update(extra or {})
    return env


def wait_until(
    predicate: Callable[[], T],
    what: str,
    timeout: float = 30.0,
    *,
    interval: float = 0.05,
    pause: Callable[[float], object] = time.sleep,
) -> T:
    """Call `predicate` until it returns something truthy, and return that.

    `what` names the condition in the failure (an AssertionError); `timeout` is a deadline, not
    a wait: a condition that holds at once returns at once. `pause(seconds)` runs between
    calls; a Playwright page passes its own (`lambda s: page.wait_for_timeout(s * 1000)`) so
    that the page's events keep being delivered while the caller polls. The one sleep between
    polls of the tools and the tests (tests/waiting.py)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        pause(interval)


def answers_liveness(base: str, timeout: float = 2.0) -> bool:
    """Whether `base`/liveness answers 200 now."""
    try:
        with urllib.request.urlopen(f"{base}/liveness", timeout=timeout) as reply:
            return reply.status == 200
    except (OSError, urllib.error.HTTPError):
        return False


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def wait_until_live(
    process: subprocess.Popen, base: str, timeout: float, what: str, log_path: Path
) -> None:
    """Until `base`/liveness answers 200. A process that exits, or does not answer in time
    (it is then killed), raises StartError with its log."""

    def live() -> bool:
        if process.poll() is not None:
            raise StartError(f"{what} exited with {process.returncode}:\n{_read(log_path)}")
        return answers_liveness(base)

    try:
        wait_until(live, f"{what} to answer /liveness ({log_path})", timeout, interval=0.3)
    except AssertionError as exc:
        stop_process(process)
        raise StartError(f"{exc}:\n{_read(log_path)}") from None


def stop_process(process: subprocess.Popen | None, timeout: float = STOP_TIMEOUT_S) -> None:
    """SIGTERM (never SIGINT: see the module's doc), then a kill after `timeout` seconds."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)


def popen_logged(command: Sequence[str], log_path: Path, **kwargs) -> subprocess.Popen:
    """Start `command` with stdout and stderr in `log_path` (a file: a pipe could fill up)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as log:  # the child keeps its own descriptor
        return subprocess.Popen(list(command), stdout=log, stderr=subprocess.STDOUT, **kwargs)


# ------------------------------------------------------------------------------ lab servers


def lab_command() -> list[str]:
    """The installed console script when present (what a user runs), else `python -m app`."""
    script = shutil.which("attention-lab")
    return [script] if script else list(PYTHON_M_APP)


class LabServer:
    """A running `attention-lab`: its process, port and log file."""

    def __init__(self, process: subprocess.Popen, port: int, log_path: Path):
        self.process, self.port, self.log_path = process, port, log_path

    @property
    def base(self) -> str:
        return f"http://localhost:{self.port}"

    @property
    def url(self) -> str:
        """The lab's page."""
        return f"{self.base}/app"

    @property
    def pid(self) -> int:
        return self.process.pid

    def log(self) -> str:
        return _read(self.log_path)

    def log_mark(self) -> int:
        """Where the log ends now: `log_since(mark)` is what the server wrote after it (a
        shared server's log also holds what every earlier test module did to it)."""
        return len(self.log())

    def log_since(self, mark: int) -> str:
        return self.log()[mark:]

    def stop(self) -> None:
        stop_process(self.process)


def _count_start(port: int, log_path: Path) -> None:
    path = os.environ.get("HARNESS_START_LOG")
    if path:
        line = {"port": port, "log": str(log_path), "test": os.environ.get("PYTEST_CURRENT_TEST")}
        with open(path, "a") as out:
            out.write(json.dumps(line) + "\n")


def start_lab(
    args: Sequence[str],
    port: int,
    log_path: Path,
    env: Mapping[str, str] | None = None,
    command: Sequence[str] | None = None,
    cwd: Path = ROOT,
    timeout: float = START_TIMEOUT_S,
) -> LabServer:
    """Run the lab with `args` (which must make it listen on `port`) and wait until /liveness
    answers; the caller must stop() it. `env` defaults to clean_env(), `command` to
    lab_command()."""
    _count_start(port, log_path)
    process = popen_logged(
        [*(command or lab_command()), *args],
        log_path,
        cwd=cwd,
        env=dict(env) if env is not None else clean_env(),
    )
    server = LabServer(process, port, log_path)
    try:
        wait_until_live(process, server.base, timeout, f"the lab ({log_path.name})", log_path)
    except StartError as exc:
        raise StartError(f"the lab did not start: {exc}") from None
    return server


def serve_lab(
    log_path: Path,
    *args: str,
    port: int | None = None,
    env: Mapping[str, str] | None = None,
    command: Sequence[str] | None = None,
) -> LabServer:
    """`attention-lab --no-show --port <free> ARGS`: with no ARGS, the lab's default settings."""
    port = port or free_port()
    return start_lab(["--no-show", "--port", str(port), *args], port, log_path, env, command)


# ------------------------------------------------------------------------------ Redis


class RedisServer:
    """A redis-server on loopback with its own port and folder (its log: folder/redis.log). It
    saves nothing unless asked for its append-only file; `kill()` then `restart()` brings it
    back from that file on the same port."""

    def __init__(
        self,
        folder: Path,
        *,
        appendonly: bool = False,
        port: int | None = None,
        password: str | None = None,
    ):
        self.folder, self.appendonly, self.password = folder, appendonly, password
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None

    @staticmethod
    def binary() -> str | None:
        return shutil.which("redis-server") or (
            "/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None
        )

    @property
    def url(self) -> str:
        """The store URL; with a password, the URL carries it (as the lab's --store does)."""
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    @property
    def log_path(self) -> Path:
        return self.folder / "redis.log"

    def start(self, timeout: float = 20.0) -> RedisServer:
        import redis

        binary = self.binary()
        if binary is None:
            raise StartError("redis-server is not installed (apt-get install redis-server)")
        self.folder.mkdir(parents=True, exist_ok=True)
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        args += ["--dir", str(self.folder), "--daemonize", "no", "--loglevel", "warning"]
        args += ["--appendonly", "yes" if self.appendonly else "no", "--appendfsync", "always"]
        if self.password:
            args += ["--requirepass", self.password]
        with open(self.log_path, "ab") as log:  # appended: a restart keeps the first run's lines
            self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5, password=self.password)

        def answers() -> bool:
            if self.process.poll() is not None:
                raise StartError(f"redis-server exited:\n{_read(self.log_path)}")
            try:
                return bool(client.ping())
            except redis.ConnectionError:
                return False

        try:
            wait_until(answers, f"redis-server on port {self.port}", timeout)
        except AssertionError as exc:
            self.stop()
            raise StartError(f"{exc}:\n{_read(self.log_path)}") from None
        finally:
            client.close()
        return self

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        stop_process(self.process, timeout=10)
        self.process = None

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None

    def restart(self) -> RedisServer:
        """Start again on the same port and folder (after `kill`: from its append-only file)."""
        self.stop()
        return self.start()


# ------------------------------------------------------------------------------ HAProxy


def haproxy_binary() -> str | None:
    return shutil.which("haproxy") or (
        "/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None
    )


def haproxy_config(shipped: str, bind: str, servers: Mapping[str, int]) -> str:
    """The shipped HAProxy configuration with only its bind and server lines replaced.

    Every global, defaults, frontend and backend setting stays; the `server` lines (shipped as
    `server rN HOST:PORT cookie rN`) become one line per entry of `servers`, on loopback."""
    out, placed = [], False
    for line in shipped.splitlines():
        words = line.split()
        indent = line[: len(line) - len(line.lstrip())]
        if words[:1] == ["bind"]:
            out.append(f"{indent}bind {bind}")
        elif words[:1] == ["server"]:
            if not placed:
                out += [
                    f"{indent}server {name} 127.0.0.1:{port} cookie {name}"
                    for name, port in servers.items()
                ]
                placed = True
        else:
            out.append(line)
    if not placed:
        raise ValueError("the HAProxy configuration has no server lines")
    return "\n".join(out) + "\n"


class HAProxy:
    """HAProxy running `config` (default: the shipped deploy/haproxy.cfg) in front of loopback
    servers; it writes folder/haproxy.cfg and logs to folder/haproxy.log."""

    def __init__(
        self,
        folder: Path,
        servers: Mapping[str, int],
        port: int | None = None,
        config: Path = HAPROXY_CONFIG,
    ):
        self.folder, self.servers, self.config = folder, dict(servers), config
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def log_path(self) -> Path:
        return self.folder / "haproxy.log"

    def log(self) -> str:
        return _read(self.log_path)

    def start(self, timeout: float = 60.0) -> HAProxy:
        binary = haproxy_binary()
        if binary is None:
            raise StartError("HAProxy is not installed (apt-get install haproxy)")
        self.folder.mkdir(parents=True, exist_ok=True)
        derived = self.folder / "haproxy.cfg"
        bind = f"127.0.0.1:{self.port}"
        derived.write_text(haproxy_config(self.config.read_text(), bind, self.servers))
        self.process = popen_logged([binary, "-db", "-f", str(derived)], self.log_path)
        wait_until_live(self.process, self.base, timeout, "HAProxy", self.log_path)
        return self

    def stop(self) -> None:
        stop_process(self.process, timeout=10)

    def state_changes(self, name: str, up: bool) -> int:
        """How many times HAProxy has logged server `name` going UP (or DOWN)."""
        pattern = re.compile(rf"Server \S+/{re.escape(name)} is {'UP' if up else 'DOWN'}\b")
        # HAProxy writes each state change to stderr and to its log (stdout), both in the log
        # file: the pattern matches a line's start, which only one of the two has.
        return sum(1 for line in self.log().splitlines() if pattern.match(line))

    def wait_for_state(self, name: str, up: bool, seen: int = 0, timeout: float = 60.0) -> None:
        """Until HAProxy's health check has taken `name` out (or back in) more than `seen`
        times; AssertionError with the end of its log otherwise."""
        try:
            wait_until(lambda: self.state_changes(name, up) > seen, f"{name} marked", timeout)
        except AssertionError:
            wanted = "UP" if up else "DOWN"
            raise AssertionError(
                f"HAProxy never marked {name} {wanted}:\n{self.log()[-4000:]}"
            ) from None


# ------------------------------------------------------------------------------ replicas


def replica_args(port: int, balancer_port: int) -> list[str]:
    """What deploy/compose.yaml runs in each replica, on a loopback port behind a balancer
    at `balancer_port`."""
    return [
        "--no-show",
        "--address",
        "127.0.0.1",
        "--port",
        str(port),
        "--allow-websocket-origin",
        f"127.0.0.1:{balancer_port}",
        "--allow-websocket-origin",
        f"localhost:{balancer_port}",
        # The balancer runs on this machine: its X-Real-IP is believed, nobody else's.
        "--trusted-proxy",
        "127.0.0.1",
        "--",
    ]


class ReplicaRoom:
    """Replicas named `names` behind HAProxy (the shipped configuration), with a Redis store
    between them when `redis` is true (a redis-server with its append-only file, passed as
    ATTENTION_LAB_STORE). `lab_args` adds flags before the `--` of each replica's command,
    `env` to each replica's environment. Start with start(); stop() stops everything."""

    def __init__(
        self,
        folder: Path,
        names: Sequence[str] = ("r1", "r2", "r3"),
        *,
        redis: bool = False,
        redis_password: str | None = None,
        lab_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        command: Sequence[str] | None = None,
    ):
        self.folder, self.names = folder, tuple(names)
        self.lab_args, self.extra_env, self.command = list(lab_args), dict(env or {}), command
        self.redis = (
            RedisServer(folder / "redis", appendonly=True, password=redis_password)
            if redis
            else None
        )
        self.port = free_port()  # the replicas must allow the balancer's origin
        self.ports = {name: free_port() for name in self.names}
        self.replicas: dict[str, LabServer] = {}
        self.haproxy = HAProxy(folder, self.ports, self.port)

    @property
    def base(self) -> str:
        return self.haproxy.base

    def env(self) -> dict[str, str]:
        extra = dict(self.extra_env)
        if self.redis is not None:
            extra["ATTENTION_LAB_STORE"] = self.redis.url
        return clean_env(extra)

    def args(self, name: str) -> list[str]:
        args = replica_args(self.ports[name], self.port)
        cut = args.index("--")
        return args[:cut] + self.lab_args + args[cut:]

    def start_replica(self, name: str, log_path: Path | None = None) -> LabServer:
        """Start replica `name` on its port (again, after a stop); returns it."""
        log_path = log_path or self.folder / f"{name}.log"
        server = start_lab(
            self.args(name), self.ports[name], log_path, self.env(), command=self.command
        )
        self.replicas[name] = server
        return server

    def start(self) -> ReplicaRoom:
        try:
            if self.redis is not None:
                self.redis.start()
            with ThreadPoolExecutor(max_workers=len(self.names)) as pool:
                futures = [pool.submit(self.start_replica, name) for name in self.names]
            for future in futures:
                future.result()  # the first failure, once every start has ended
            self.haproxy.start()
        except BaseException:
            self.stop()
            raise
        return self

    def restart(self, name: str) -> LabServer:
        """Start replica `name` again on its port (a fresh log) and wait until HAProxy has
        taken it back."""
        seen = self.haproxy.state_changes(name, up=True)
        log = self.folder / f"{name}-restarted-{time.monotonic_ns()}.log"
        server = self.start_replica(name, log)
        self.haproxy.wait_for_state(name, up=True, seen=seen)
        return server

    def heal(self) -> list[str]:
        """Bring back what a test stopped: Redis, then every replica that is not running.
        Returns the names restarted."""
        if self.redis is not None and not self.redis.running:
            self.redis.restart()
        dead = [n for n in self.names if self.replicas[n].process.poll() is not None]
        for name in dead:
            self.restart(name)
        return dead

    def stop(self) -> None:
        self.haproxy.stop()
        for server in self.replicas.values():
            server.stop()
        if self.redis is not None:
            self.redis.stop()
