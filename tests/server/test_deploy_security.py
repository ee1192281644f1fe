"""The deployment's defences against a room that tries things, run for real on loopback.

A class reaches the lab from the school's one NAT address over one Wi-Fi (docs/deployment.md,
"Security"). Each promise of the shipped files is held against real processes:

- HAProxy runs deploy/haproxy.cfg itself, both of its `bind` lines kept (plain HTTP and TLS)
  with only their addresses moved to loopback and the certificate path pointed at the one
  deploy/init_secrets.py made (as compose's `init` service makes it), and its `server` lines
  pointed at two tiny echo backends that answer every request with the headers they received.
  A spoofed client address never reaches a backend; plain HTTP only redirects; HTTPS carries
  HSTS and a Secure cookie; a whole class's burst from one address passes while a flood from it
  is answered 429 (and the address is served again once the flood stops); connections over the
  per-source limit are refused.
- redis-server runs compose's own command with the users.acl init_secrets.py wrote: no client
  gets anything without the password, the lab's user may not run FLUSHALL, CONFIG, KEYS or the
  other dangerous commands, and the lab's class store (app/classroom/shared.open_store), given
  the URL the replicas get, works against it across two "replicas".
- compose.yaml is read (podman-compose runs it in tests/server/test_container.py): every
  service reads the secrets init made, from the volume init wrote them to, read-only.

The Kubernetes manifests are checked in tests/server/test_balancer.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import pytest
from labserver import ROOT

from tools.harness import (
    HAPROXY_CONFIG,
    RedisServer,
    free_port,
    haproxy_binary,
    popen_logged,
    stop_process,
    wait_until,
)

pytestmark = [pytest.mark.server]

DEPLOY = ROOT / "deploy"
INIT_SECRETS = DEPLOY / "init_secrets.py"
SHIPPED_CERT = "/usr/local/etc/haproxy/certs/lab.pem"
# A whole class opening the lab at once, from one address: 200 students, about 40 requests a
# page (a page measured 25), each student on a connection of their own.
CLASS, REQUESTS_PER_PAGE = 200, 40
RATE_LIMIT = 12000  # requests per 10 s from one address (haproxy.cfg)
CONNECTION_LIMIT = 2500  # open connections from one address (haproxy.cfg)
SPOOFED = "203.0.113.7"  # TEST-NET-3: an address a student claims to have

ECHO = r"""
import asyncio, json, sys


class Echo(asyncio.Protocol):
    "Answers each request on a keep-alive connection with its request line and headers."

    def connection_made(self, transport):
        self.transport, self.buffer = transport, b""

    def data_received(self, data):
        self.buffer += data
        out = []
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            head, self.buffer = self.buffer[:end].decode("latin-1"), self.buffer[end + 4 :]
            first, *lines = head.split("\r\n")
            headers = [[part.strip() for part in line.split(":", 1)] for line in lines]
            body = json.dumps({"request": first, "headers": headers}).encode()
            out.append(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nServer: echo/1\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
            )
        if out:
            self.transport.write(b"".join(out))


async def main(port):
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Echo, "127.0.0.1", port, backlog=4096)
    await server.serve_forever()


asyncio.run(main(int(sys.argv[1])))
"""


# --- What init makes -------------------------------------------------------------------------


def run_init(folder: Path, host: str, env: dict[str, str] | None = None) -> dict[str, Path]:
    """deploy/init_secrets.py as compose's `init` service runs it, into `folder`."""
    paths = {name: folder / name for name in ("lab", "redis", "tls")}
    command = [sys.executable, str(INIT_SECRETS), "--host", host]
    for name, path in paths.items():
        command += [f"--{name}", str(path)]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LAB_")}
    result = subprocess.run(
        command, env={**clean, **(env or {})}, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return paths


def lab_env(path: Path) -> dict[str, str]:
    """The variables lab.env gives a replica, read as its shell reads them."""
    values = {}
    for line in path.read_text().splitlines():
        name, _, value = line.partition("=")
        (values[name],) = shlex.split(value)
    return values


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    return run_init(tmp_path_factory.mktemp("secrets"), "localhost")


def test_init_makes_the_secrets_once_and_keeps_them_and_the_operators_win(tmp_path):
    first = run_init(tmp_path / "a", "lab.example.org:8443")
    env = lab_env(first["lab"] / "lab.env")
    import redis.connection

    parsed = redis.connection.parse_url(env["ATTENTION_LAB_STORE"])
    assert parsed["username"] == "lab" and len(parsed["password"]) >= 40
    assert parsed["host"] == "redis" and parsed["port"] == 6379 and parsed["db"] == 0
    assert len(env["ATTENTION_LAB_SECRET_KEY"]) >= 40
    assert parsed["password"] not in (first["redis"] / "users.acl").read_text()
    assert oct((first["lab"] / "lab.env").stat().st_mode & 0o777) == "0o400"
    pem = (first["tls"] / "lab.pem").read_text()
    assert "BEGIN CERTIFICATE" in pem and "PRIVATE KEY" in pem
    names = subprocess.run(
        ["openssl", "x509", "-noout", "-ext", "subjectAltName"],
        input=pem,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "DNS:lab.example.org" in names  # the host, without its port
    # A second start keeps every secret and the certificate: replicas and restarts agree.
    again = run_init(tmp_path / "a", "lab.example.org:8443")
    assert lab_env(again["lab"] / "lab.env") == env
    assert (again["tls"] / "lab.pem").read_text() == pem
    # What the operator sets wins, and is quoted for the URL and the shell.
    password = "p@ss w/rd'$ and more"
    chosen = {"LAB_REDIS_PASSWORD": password, "LAB_SECRET_KEY": "k" * 44}
    mine = lab_env(run_init(tmp_path / "a", "x", chosen)["lab"] / "lab.env")
    assert redis.connection.parse_url(mine["ATTENTION_LAB_STORE"])["password"] == password
    assert mine["ATTENTION_LAB_SECRET_KEY"] == "k" * 44
    # A key the lab would refuse (under 32 characters), or a short password, stops init, and
    # with it every service that waits for init: nothing runs with a weak secret.
    for weak in ({"LAB_SECRET_KEY": "k" * 31}, {"LAB_REDIS_PASSWORD": "short"}):
        with pytest.raises(AssertionError, match="at least"):
            run_init(tmp_path / "c", "x", weak)
        assert not (tmp_path / "c" / "lab" / "lab.env").exists()
    # Another deployment gets other secrets.
    other = lab_env(run_init(tmp_path / "b", "lab.example.org")["lab"] / "lab.env")
    assert other["ATTENTION_LAB_SECRET_KEY"] != env["ATTENTION_LAB_SECRET_KEY"]
    assert other["ATTENTION_LAB_STORE"] != env["ATTENTION_LAB_STORE"]


# --- HAProxy -----------------------------------------------------------------------------------


def loopback_config(shipped: str, ports: dict[str, int], cert: Path, servers: dict[str, int]):
    """The shipped configuration with each `bind` line's address moved to a loopback port (by
    the port it names: 8080, 8443) and its certificate to `cert`, and its `server` lines pointed
    at loopback servers. Every other line, and every option of the bind lines, is kept."""
    out, placed = [], False
    for line in shipped.splitlines():
        words = line.split()
        indent = line[: len(line) - len(line.lstrip())]
        if words[:1] == ["bind"]:
            port = words[1].rsplit(":", 1)[1]
            line = line.replace(words[1], f"127.0.0.1:{ports[port]}", 1)
            line = line.replace(SHIPPED_CERT, str(cert))
        elif words[:1] == ["server"]:
            if placed:
                continue
            placed = True
            out += [f"{indent}server {n} 127.0.0.1:{p} cookie {n}" for n, p in servers.items()]
            continue
        out.append(line)
    return "\n".join(out) + "\n"


class Balancer:
    def __init__(self, folder: Path, made: dict[str, Path]):
        self.folder = folder
        self.http, self.https = free_port(), free_port()
        self.servers = {"r1": free_port(), "r2": free_port()}
        self.cafile = made["tls"] / "lab.pem"
        self.public = f"localhost:{self.https}"
        self.processes: list[subprocess.Popen] = []

    def start(self) -> Balancer:
        script = self.folder / "echo.py"
        script.write_text(ECHO)
        for name, port in self.servers.items():
            self.processes.append(
                popen_logged([sys.executable, str(script), str(port)], self.folder / f"{name}.log")
            )
        for port in self.servers.values():
            wait_until(lambda port=port: _accepts(port), f"the echo backend on {port}", 30)
        ports = {"8080": self.http, "8443": self.https}
        config = loopback_config(HAPROXY_CONFIG.read_text(), ports, self.cafile, self.servers)
        (self.folder / "haproxy.cfg").write_text(config)
        env = {**os.environ, "LAB_PUBLIC_HOST": self.public}
        self.haproxy = popen_logged(
            [haproxy_binary(), "-db", "-f", str(self.folder / "haproxy.cfg")],
            self.log_path,
            env=env,
        )
        self.processes.append(self.haproxy)

        def serving() -> bool:
            assert self.haproxy.poll() is None, self.log()
            try:
                return _exchange(self.https, ["/liveness"])[0][0] == 200
            except OSError:
                return False

        wait_until(serving, "HAProxy to serve over TLS", 60)
        return self

    @property
    def log_path(self) -> Path:
        return self.folder / "haproxy.log"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def context(self) -> ssl.SSLContext:
        """A client that trusts only the certificate init made, for the name `localhost`."""
        return ssl.create_default_context(cafile=str(self.cafile))

    def stop(self) -> None:
        for process in reversed(self.processes):
            stop_process(process, timeout=10)


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


async def _session(
    port: int, paths: list[str], headers: str, context: ssl.SSLContext | None, out: list
) -> None:
    """One connection: every request written at once (pipelined, as fast as a client can),
    then each response read; appends (status, headers, body) per response, or None for each
    request the connection was closed on."""
    if context is not None:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=context, server_hostname="localhost"
        )
    else:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        if "host:" not in headers.lower():
            headers = f"Host: localhost\r\n{headers}"
        writer.write(b"".join(f"GET {p} HTTP/1.1\r\n{headers}\r\n".encode() for p in paths))
        await writer.drain()
        for _ in paths:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                out.append(None)
                continue
            first, *lines = head.decode("latin-1").rstrip("\r\n").split("\r\n")
            fields = [tuple(p.strip() for p in line.split(":", 1)) for line in lines]
            length = sum(int(v) for k, v in fields if k.lower() == "content-length")
            out.append((int(first.split()[1]), fields, await reader.readexactly(length)))
    finally:
        writer.close()


def _exchange(
    port: int,
    paths: list[str],
    headers: dict[str, str] | list[tuple[str, str]] = (),
    tls: bool = True,
    cafile: Path | None = None,
) -> list:
    """Requests on one connection (TLS unless `tls` is false); their responses."""
    items = headers.items() if isinstance(headers, dict) else headers
    head = "".join(f"{name}: {value}\r\n" for name, value in items)
    context = None
    if tls:
        context = ssl.create_default_context(cafile=str(cafile)) if cafile else _unverified()
    out: list = []
    run_async(_session(port, paths, head, context, out))
    return out


def run_async(coroutine):
    """asyncio.run on a thread of its own: a test process that drove Chromium keeps
    Playwright's loop running on its main thread, and asyncio.run refuses to nest in it."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _unverified() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return context


async def _crowd(port: int, sessions: int, per_session: int, context) -> list:
    out: list = []
    paths = [f"/static/{index}.js" for index in range(per_session)]
    await asyncio.gather(*(_session(port, paths, "", context, out) for _ in range(sessions)))
    return out


def _field(fields, name: str) -> list[str]:
    return [value for key, value in fields if key.lower() == name.lower()]


@pytest.fixture(scope="module")
def balancer(made, tmp_path_factory):
    if haproxy_binary() is None:
        pytest.skip("HAProxy is not installed (apt-get install haproxy)")
    balancer = Balancer(tmp_path_factory.mktemp("balancer"), made)
    try:
        yield balancer.start()
    finally:
        balancer.stop()


def test_a_spoofed_client_address_never_reaches_a_replica(balancer):
    """Tornado (the lab's server) takes the client's address from X-Real-IP, else the last
    X-Forwarded-For, and its scheme from X-Scheme, else X-Forwarded-Proto: a student who could
    set them would be anyone, for every per-address limit. The balancer sets them itself."""
    spoofed = [
        ("X-Real-IP", SPOOFED),
        ("X-Real-IP", "198.51.100.9"),
        ("X-Forwarded-For", f"{SPOOFED}, 198.51.100.1"),
        ("X-Forwarded-For", SPOOFED),
        ("Forwarded", f"for={SPOOFED};proto=https"),
        ("X-Forwarded-Proto", "http"),
        ("X-Forwarded-Host", "evil.example.org"),
        ("X-Forwarded-Port", "1"),
        ("X-Scheme", "http"),
    ]
    ((status, _, body),) = _exchange(
        balancer.https, ["/app"], spoofed, cafile=balancer.cafile
    )  # verified: the certificate init made, for localhost
    assert status == 200
    seen = json.loads(body)["headers"]
    assert _field(seen, "X-Real-IP") == ["127.0.0.1"]
    assert _field(seen, "X-Forwarded-For") == ["127.0.0.1"]
    assert _field(seen, "X-Forwarded-Proto") == ["https"]
    for dropped in ("Forwarded", "X-Forwarded-Host", "X-Forwarded-Port", "X-Scheme"):
        assert _field(seen, dropped) == [], dropped
    assert SPOOFED not in body.decode()
    # Without any such header the backend hears the same: the connection's address.
    ((_, _, plain),) = _exchange(balancer.https, ["/app"])
    assert _field(json.loads(plain)["headers"], "X-Real-IP") == ["127.0.0.1"]


def test_plain_http_only_redirects_and_https_is_strict_with_a_secure_cookie(balancer):
    # Plain HTTP: a redirect to the students' HTTPS address (not to the Host a client sent),
    # with nothing from a replica, no cookie.
    forged_host = {"Host": "evil.example.org"}
    ((status, fields, body),) = _exchange(balancer.http, ["/app?lesson=3"], forged_host, tls=False)
    assert status == 301, body
    assert _field(fields, "Location") == [f"https://{balancer.public}/app?lesson=3"]
    assert _field(fields, "Set-Cookie") == [] and b"headers" not in body
    ((status, fields, _),) = _exchange(balancer.http, ["/"], tls=False)
    assert status == 301 and _field(fields, "Location") == [f"https://{balancer.public}/"]
    # HTTPS: HSTS, the sticky cookie Secure and HttpOnly, no server banner.
    ((status, fields, _),) = _exchange(balancer.https, ["/app"], cafile=balancer.cafile)
    assert status == 200
    (hsts,) = _field(fields, "Strict-Transport-Security")
    assert int(re.search(r"max-age=(\d+)", hsts).group(1)) >= 180 * 86400
    (cookie,) = _field(fields, "Set-Cookie")
    attributes = {part.strip().lower() for part in cookie.split(";")}
    assert cookie.startswith("SRV=r") and {"secure", "httponly"} <= attributes, cookie
    assert _field(fields, "Server") == []


def test_a_class_sized_burst_passes_and_a_flood_from_one_address_gets_429(balancer):
    context = balancer.context()
    started = time.monotonic()
    burst = run_async(_crowd(balancer.https, CLASS, REQUESTS_PER_PAGE, context))
    took = time.monotonic() - started
    statuses = [None if r is None else r[0] for r in burst]
    assert statuses.count(200) == CLASS * REQUESTS_PER_PAGE, {
        s: statuses.count(s) for s in set(statuses)
    }
    print(f"a class's burst: {len(burst)} requests on {CLASS} connections in {took:.2f} s")
    # Then one address floods: pipelined batches until the balancer refuses. It counts every
    # request from the address, the class's included, over a sliding 10 s.
    flood, started = [], time.monotonic()
    while not any(r and r[0] == 429 for r in flood) and len(flood) < 4 * RATE_LIMIT:
        flood += run_async(_crowd(balancer.https, 8, 250, context))
    took = time.monotonic() - started
    statuses = [None if r is None else r[0] for r in flood]
    refused = [r for r in flood if r and r[0] == 429]
    # Served before the balancer began refusing: it refuses every request while the address's
    # rate stays over the limit, and the flood's own refused requests keep it there.
    passed = statuses.count(200)
    print(
        f"flood: {len(flood)} more requests in {took:.2f} s; refusing after "
        f"{len(burst) + passed} requests from the address were served; "
        f"{ {s: statuses.count(s) for s in set(statuses)} }"
    )
    assert refused, "a flood from one address was never refused"
    assert set(statuses) <= {200, 429}
    # Never before the limit: the estimate of the last 10 s counts no more than was sent.
    assert len(burst) + passed >= RATE_LIMIT - 50
    assert _field(refused[0][1], "Retry-After") == ["10"]
    # The address is served again once it stops: a school is not locked out for long.
    started = time.monotonic()

    def served() -> bool:
        return _exchange(balancer.https, ["/liveness"])[0][0] == 200

    wait_until(served, "the address to be served again", timeout=40, interval=1.0)
    print(f"served again {time.monotonic() - started:.1f} s after the flood stopped")


def test_connections_over_the_per_source_limit_are_refused(balancer):
    extra = 20
    held, reset = [], []  # a refusal may come back before connect() has returned
    for index in range(CONNECTION_LIMIT + extra):
        try:
            held.append(socket.create_connection(("127.0.0.1", balancer.http), timeout=10))
        except ConnectionResetError:
            reset.append(index)
    print(f"reset while connecting: {reset}")
    try:

        def refused() -> list[int]:
            """Indexes of the connections HAProxy closed (it accepts them in its own order)."""
            out = []
            for index, connection in enumerate(held):
                connection.setblocking(False)
                try:
                    if connection.recv(1) == b"":
                        out.append(index)
                except BlockingIOError:
                    pass
                except OSError:
                    out.append(index)
            return out

        wait_until(
            lambda: len(refused()) + len(reset) >= extra,
            "the connections over the limit refused",
            30,
        )
        closed = refused()
        assert len(closed) + len(reset) == extra, f"{len(closed)} + {len(reset)} refused"
        # A connection within the limit is served (plain HTTP: the redirect).
        kept = next(c for i, c in enumerate(held) if i not in closed)
        kept.setblocking(True)
        kept.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        assert kept.recv(12) == b"HTTP/1.1 301"
        # Once some close, the address may open new ones again.
        for index in range(extra):
            held[index].close()

        def opens() -> bool:
            with socket.create_connection(("127.0.0.1", balancer.http), timeout=10) as new:
                new.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
                try:
                    return new.recv(12) == b"HTTP/1.1 301"
                except OSError:
                    return False

        wait_until(opens, "a new connection to be served", 30)
    finally:
        for connection in held:
            connection.close()


# --- Redis -------------------------------------------------------------------------------------


def _compose() -> dict:
    import yaml

    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def _resolve(text: str) -> str:
    """A compose value with each ${NAME:-default} replaced by its default."""
    return re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", str(text))


def _mounts(service: dict) -> dict[str, tuple[str, bool]]:
    """target -> (source, read-only) of a service's volumes, defaults resolved."""
    out = {}
    for volume in service.get("volumes", []):
        source, target, *mode = _resolve(volume).split(":")
        out[target] = (source, mode == ["ro"])
    return out


class AclRedis:
    """redis-server with compose's own command (its --aclfile moved to the file init made), on
    a loopback port of its own."""

    def __init__(self, folder: Path, made: dict[str, Path]):
        command = _compose()["services"]["redis"]["command"]
        acl_dir = str(Path(command[command.index("--aclfile") + 1]).parent)
        self.args = [
            str(made["redis"]) + arg[len(acl_dir) :] if arg.startswith(acl_dir) else arg
            for arg in command[1:]
        ]
        self.folder, self.port = folder, free_port()
        self.acl = made["redis"] / "users.acl"
        self.password = (made["lab"] / "redis-password").read_text().strip()
        env = lab_env(made["lab"] / "lab.env")
        # The URL the replicas get, with the host moved from `redis` to this server.
        self.url = env["ATTENTION_LAB_STORE"].replace("@redis:6379/", f"@127.0.0.1:{self.port}/")

    def start(self) -> AclRedis:
        binary = RedisServer.binary()
        args = [binary, *self.args, "--port", str(self.port), "--bind", "127.0.0.1"]
        args += ["--dir", str(self.folder), "--save", "", "--daemonize", "no"]
        self.process = popen_logged(args, self.folder / "redis.log")
        wait_until(self.answers, f"redis-server on {self.port}", 30)
        return self

    def answers(self) -> bool:
        import redis

        assert self.process.poll() is None, (self.folder / "redis.log").read_text()
        client = redis.Redis.from_url(self.url, socket_connect_timeout=1)
        try:
            return bool(client.ping())
        except redis.ConnectionError:
            return False
        finally:
            client.close()

    def stop(self) -> None:
        stop_process(self.process, timeout=10)


@pytest.fixture(scope="module")
def acl_redis(made, tmp_path_factory):
    if RedisServer.binary() is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    server = AclRedis(tmp_path_factory.mktemp("redis"), made)
    assert (
        "--aclfile" in server.args and server.args[server.args.index("--appendonly") + 1] == "yes"
    )
    try:
        yield server.start()
    finally:
        server.stop()


def test_redis_refuses_every_client_without_the_password(acl_redis):
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    def client(**options):  # one try each: redis-py retries a refused connection otherwise
        return redis.Redis(
            port=acl_redis.port, socket_connect_timeout=2, retry=Retry(NoBackoff(), 0), **options
        )

    # redis-py says HELLO first (RESP3), which Redis refuses before AUTH; RESP2 gets NOAUTH.
    anonymous = client()
    with pytest.raises(redis.AuthenticationError):
        anonymous.ping()
    with pytest.raises(redis.AuthenticationError):
        anonymous.set("alab:class:ABCDEF:teachers", "me")
    anonymous.close()
    resp2 = client(protocol=2)
    with pytest.raises(redis.AuthenticationError, match="Authentication required"):
        resp2.execute_command("FLUSHALL")  # Redis's NOAUTH
    resp2.close()
    for username, password in (("default", ""), ("default", "x"), ("lab", "wrong"), (None, "x")):
        guess = client(username=username, password=password)
        with pytest.raises(redis.AuthenticationError):
            guess.ping()
        guess.close()


@pytest.mark.parametrize(
    "command",
    [
        ("FLUSHALL",),
        ("FLUSHDB",),
        ("CONFIG", "GET", "*"),
        ("CONFIG", "SET", "appendonly", "no"),
        ("KEYS", "*"),
        ("SHUTDOWN", "NOSAVE"),
        ("ACL", "LIST"),
        ("ACL", "SETUSER", "default", "on", "nopass"),
        ("MODULE", "LIST"),
        ("MONITOR",),
        ("SAVE",),
        ("BGREWRITEAOF",),
        ("REPLICAOF", "127.0.0.1", "1"),
        ("SWAPDB", "0", "1"),
        ("SET", "outside:the:lab", "1"),
        ("PUBLISH", "not-the-lab", "1"),
    ],
    ids=lambda command: "-".join(command[:2]),
)
def test_the_lab_user_may_not_run_dangerous_commands(acl_redis, command):
    import redis

    client = redis.Redis.from_url(acl_redis.url, socket_connect_timeout=2)
    try:
        with pytest.raises(redis.exceptions.NoPermissionError):
            client.execute_command(*command)
        assert client.ping()  # and the server is still there
    finally:
        client.close()


def test_debug_is_refused_too(acl_redis):
    """DEBUG is refused by Redis's own setting (enable-debug-command) before its ACL is asked:
    refused all the same, and denied by the ACL where an image enables it."""
    import redis

    client = redis.Redis.from_url(acl_redis.url, socket_connect_timeout=2)
    try:
        with pytest.raises(redis.ResponseError):
            client.execute_command("DEBUG", "SLEEP", "0")
    finally:
        client.close()
    assert "-debug" in (Path(acl_redis.acl)).read_text().split()


def test_the_lab_store_works_with_the_url_the_replicas_get(acl_redis):
    from app.classroom import codes
    from app.classroom.shared import open_store

    first, second = open_store(acl_redis.url), open_store(acl_redis.url)  # two replicas
    try:
        assert first.wait_connected(10) and second.wait_connected(10)
        code, key = first.create()
        heard = []
        second.subscribe(code, heard.append)  # the replicas' channel, alab:events
        student = codes.new_student_id()
        first.join(code, student, nickname="Ana")
        first.set_step(code, key, 2)
        first.vote(code, student, 2, 1)
        assert second.info(code).step == 2
        assert second.tally(code, 2).counts == {1: 1}
        assert second.is_teacher(code, key) and not second.is_teacher(code, "forged")
        wait_until(lambda: any(e.code == code for e in heard), "the other replica to hear", 10)
    finally:
        first.close()
        second.close()


# --- compose.yaml ------------------------------------------------------------------------------


def test_compose_gives_every_service_its_secrets_from_init_read_only():
    compose = _compose()
    services = compose["services"]
    init = services["init"]
    command = init["command"]
    assert command[:2] == ["python", "/deploy/init_secrets.py"]
    written = {name: command[command.index(f"--{name}") + 1] for name in ("lab", "redis", "tls")}
    init_mounts = {target: source for target, (source, _) in _mounts(init).items()}
    assert init_mounts["/deploy/init_secrets.py"] == "./init_secrets.py"
    volume = {name: init_mounts[path] for name, path in written.items()}
    assert set(volume.values()) <= set(compose["volumes"]), volume
    assert init["user"] == "0" and init["restart"] == "no"
    # No secret is written into the file itself: the operator's come from the environment.
    for name in ("LAB_REDIS_PASSWORD", "LAB_SECRET_KEY"):
        assert init["environment"][name] is None  # passed on from the environment where set
    for forbidden in ("requirepass", "password=", "BOKEH_SECRET_KEY"):
        assert forbidden not in (DEPLOY / "compose.yaml").read_text()

    def reads(service: dict, name: str) -> str:
        (target,) = [t for t, (s, ro) in _mounts(service).items() if s == volume[name] and ro]
        assert service["depends_on"]["init"] == {"condition": "service_completed_successfully"}
        return target

    # Redis: its ACL file, from the volume init wrote it to; no port published.
    redis = services["redis"]
    args = redis["command"]
    assert args[args.index("--aclfile") + 1] == f"{reads(redis, 'redis')}/users.acl"
    assert "ports" not in redis and "requirepass" not in args
    # HAProxy: the certificate where haproxy.cfg's TLS bind reads it, HTTP and HTTPS published.
    proxy = services["haproxy"]
    assert f"{reads(proxy, 'tls')}/lab.pem" == SHIPPED_CERT
    assert SHIPPED_CERT in HAPROXY_CONFIG.read_text()
    assert {port.split(":")[-1] for port in proxy["ports"]} == {"8080", "8443"}
    assert "LAB_PUBLIC_HOST" in str(proxy["environment"]["LAB_PUBLIC_HOST"])
    # The replicas: lab.env from init, no --use-xheaders, forwarded headers trusted from the
    # private ranges compose's networks are drawn from only.
    import ipaddress

    for name in ("lab1", "lab2", "lab3"):
        lab = services[name]
        folder = reads(lab, "lab")
        script = lab["command"][-1]
        assert lab["command"][:2] == ["sh", "-c"] and f". {folder}/lab.env" in script
        assert script.rstrip().endswith("exec attention-lab --address 0.0.0.0 --no-show")
        assert "use-xheaders" not in str(lab)
        ranges = lab["environment"]["ATTENTION_LAB_TRUSTED_PROXIES"].split(",")
        assert ranges and all(ipaddress.ip_network(cidr).is_private for cidr in ranges)
        assert "ports" not in lab


def test_the_replicas_shell_gives_the_lab_the_store_url_and_the_secret_key(made, tmp_path):
    """compose's replica command, run here with its folder moved to what init made and a stand-in
    `attention-lab` that prints its environment: the lab starts with the store's URL carrying
    the user and password, and the session-signing key."""
    script = _compose()["services"]["lab1"]["command"][-1]
    mounts = _mounts(_compose()["services"]["lab1"])
    (folder,) = [target for target, (source, _) in mounts.items() if source == "lab-secrets"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stand_in = bin_dir / "attention-lab"
    stand_in.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        "print(json.dumps({'argv': sys.argv[1:], 'env': dict(os.environ)}))\n"
    )
    stand_in.chmod(0o755)
    result = subprocess.run(
        ["sh", "-c", script.replace(folder, str(made["lab"]))],
        env={"PATH": f"{bin_dir}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    started = json.loads(result.stdout)
    assert started["argv"] == ["--address", "0.0.0.0", "--no-show"]
    import redis.connection

    store = redis.connection.parse_url(started["env"]["ATTENTION_LAB_STORE"])
    password = (made["lab"] / "redis-password").read_text().strip()
    assert (store["username"], store["password"], store["host"]) == ("lab", password, "redis")
    secret = (made["lab"] / "secret-key").read_text().strip()
    assert started["env"]["ATTENTION_LAB_SECRET_KEY"] == secret
