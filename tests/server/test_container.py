"""The Dockerfile built and run for real, with podman, on a local Debian base and a wheelhouse.

No registry is reachable from CI or from a school's build machine, so nothing is pulled: the
base is Debian bookworm made by mmdebstrap (once per machine, cached), the wheels come from a
wheelhouse filled by tools/make_wheelhouse.py (once per lock, cached), and the image is built
with --network none, which proves the offline recipe in docs/deployment.md. The container is
then checked as a user would meet it: the page, its CSS and the binding model, /liveness, the
uid, the health check, a foreign websocket origin, SIGTERM, no compiler; and
deploy/compose.yaml starts its init, three replicas, Redis and HAProxy (local images of
Debian's) with podman-compose, and a page opens through the balancer over HTTPS with the
certificate init made on that first start, while the store refuses anyone without init's
password.

.ci/run installs podman, runc, mmdebstrap, iptables and podman-compose. The caches live in
~/.cache/attention-lab/ (ATTENTION_LAB_CACHE elsewhere) and in podman's own image store, each
named by a digest of what made it: the base by mmdebstrap's command, the wheelhouse by the locks,
the lab's image by its whole build context (localhost/attention-lab:ctx-DIGEST, built only when
no image has that tag), HAProxy's and Redis's by their Containerfile and the base.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urljoin

import container_images
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

# The image holds the venv and the base: 386 MB on this Debian base, measured; a regression
# (pip, the test suites or the unused Panel bundles back in the image) adds 50 MB or more.
MAX_IMAGE_MB = 430
RUN_ID = f"{os.getpid()}"


@pytest.fixture(scope="module")
def images() -> container_images.Images:
    """Every image, from the background start tests/server/conftest.py made (or made now)."""
    missing = container_images.missing_tools()
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (.ci/run installs them)")
    made = container_images.prepared()
    print(*made.log, sep="\n")
    return made


@pytest.fixture(scope="module")
def podman(images) -> container_images.Podman:
    return images.podman


@pytest.fixture(scope="module")
def image(images) -> str:
    return images.lab


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
        # The tests' own session secret (tools/__init__.py), so their Bokeh client's tokens
        # are the container's too.
        "--env",
        f"ATTENTION_LAB_SECRET_KEY={os.environ['BOKEH_SECRET_KEY']}",
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


def _https_get(url: str, context: ssl.SSLContext, headers=None, timeout: float = 30.0):
    """(status, headers, body) over HTTPS with `context`, without following redirects."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect, urllib.request.HTTPSHandler(context=context))
    request = urllib.request.Request(url, headers=dict(headers or {}))
    try:
        with opener.open(request, timeout=timeout) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def _wss_handshake(url: str, token: str, origin: str, context: ssl.SSLContext) -> int:
    """labserver.websocket_handshake over TLS: 101 if accepted, else the HTTP status."""
    from tornado.httpclient import HTTPClientError, HTTPRequest
    from tornado.websocket import websocket_connect

    async def handshake() -> int:
        request = HTTPRequest(
            url, headers={"Origin": origin}, request_timeout=30, ssl_options=context
        )
        try:
            connection = await websocket_connect(request, subprotocols=["bokeh", token])
        except HTTPClientError as error:
            return error.code
        connection.close()
        return 101

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, handshake()).result()


# Run in a replica with the variables init gave it (lab.env): the store answers the lab's user
# and password, refuses a client without them, and refuses the lab's user FLUSHALL.
STORE_PROBE = """
import os, redis
from redis.backoff import NoBackoff
from redis.retry import Retry
once = dict(retry=Retry(NoBackoff(), 0), socket_connect_timeout=3)
url = os.environ["ATTENTION_LAB_STORE"]
lab = redis.Redis.from_url(url, **once)
answers = [str(lab.ping())]
try:
    redis.Redis(host=redis.connection.parse_url(url)["host"], **once).ping()
    answers.append("anyone-in")
except redis.AuthenticationError:
    answers.append("password-needed")
try:
    lab.flushall()
    answers.append("flushed")
except redis.exceptions.NoPermissionError:
    answers.append("flushall-denied")
print(*answers)
"""


def test_compose_serves_the_lab_through_haproxy_over_tls(podman, images, tmp_path):
    compose = shutil.which("podman-compose")
    if compose is None:
        pytest.skip("podman-compose is not installed (.ci/run installs it)")
    port, tls_port = free_port(), free_port()
    public = f"localhost:{tls_port}"
    project = f"attention-lab-test-{RUN_ID}"
    env = {
        **podman.env,
        "LAB_IMAGE": images.lab,
        "HAPROXY_IMAGE": images.haproxy,
        "REDIS_IMAGE": images.redis,
        "LAB_PORT": str(port),
        "LAB_TLS_PORT": str(tls_port),
        "LAB_PUBLIC_HOST": public,
    }
    for name in ("LAB_REDIS_PASSWORD", "LAB_SECRET_KEY", "LAB_TLS_DIR"):
        env.pop(name, None)  # init makes them, as on a school's first start
    command = [compose, "--project-name", project, "--file", str(ROOT / "deploy" / "compose.yaml")]

    def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*command, *args], env=env, capture_output=True, text=True, timeout=timeout
        )

    started = time.monotonic()
    try:
        up = run("up", "--detach", "--no-build")
        assert up.returncode == 0, up.stdout + up.stderr
        # The certificate init made on this first start, read from HAProxy's container: the
        # client trusts it alone, for the name in LAB_PUBLIC_HOST.
        cafile = tmp_path / "lab.pem"

        def certificate() -> bool:
            shown = podman(
                "exec", f"{project}_haproxy_1", "cat", "/usr/local/etc/haproxy/certs/lab.pem",
                check=False,
            )  # fmt: skip
            cafile.write_text(shown.stdout)
            return shown.returncode == 0 and "BEGIN CERTIFICATE" in shown.stdout

        try:
            wait_until(certificate, "init's certificate in HAProxy's container", 120, interval=0.5)
        except AssertionError as exc:
            logs = {n: podman("logs", f"{project}_{n}_1", check=False) for n in ("init", "haproxy")}
            shown = "".join(
                f"\n{n}:\n{r.stdout[-2000:]}{r.stderr[-2000:]}" for n, r in logs.items()
            )
            raise AssertionError(f"{exc}{shown}") from None
        context = ssl.create_default_context(cafile=str(cafile))
        base = f"https://{public}"

        def through_balancer() -> bool:
            try:
                return _https_get(f"{base}/app", context, timeout=5)[0] == 200
            except OSError:
                return False

        wait_until(through_balancer, "the lab to answer through HAProxy", 120, interval=0.5)
        print(f"compose up and serving over TLS in {time.monotonic() - started:.1f} s")
        status, headers, page = _https_get(f"{base}/app", context)
        assert status == 200 and b"<title>Attention Lab" in page
        cookie = next(v for v in headers.get_all("Set-Cookie") if v.startswith("SRV=r"))
        assert {"secure", "httponly"} <= {a.strip().lower() for a in cookie.split(";")}, cookie
        assert "max-age=" in headers.get("Strict-Transport-Security", "")
        # Plain HTTP only redirects, to the students' HTTPS address.
        status, plain, _ = http_get(f"http://localhost:{port}/app?lesson=2")
        plain = {key.lower(): value for key, value in plain.items()}
        assert status == 301 and plain["location"] == f"{base}/app?lesson=2", plain
        token = session_token(page.decode())
        ws = f"wss://{public}/app/ws"
        jar = {"Cookie": cookie.split(";")[0]}
        assert _https_get(f"{base}/liveness", context, headers=jar)[0] == 200
        assert _wss_handshake(ws, token, "https://evil.example.org", context) == 403
        # The replicas reach the class store at the address compose gives them, with the
        # password init made; it refuses anyone without it and the lab's user FLUSHALL, and
        # keeps an append-only file on its volume.
        probe = ["sh", "-c", 'set -a; . /run/lab/lab.env; exec python -c "$0"', STORE_PROBE]
        # Podman's DNS (aardvark-dns) may not answer for the store's name yet: CI once saw
        # "Temporary failure in name resolution" right after the balancer answered. The lab's
        # store retries the same way (app/classroom/redis_store.py).
        answers = []

        def store_answers() -> bool:
            answers.append(podman("exec", f"{project}_lab1_1", *probe, check=False))
            return answers[-1].stdout.split() == ["True", "password-needed", "flushall-denied"]

        try:
            wait_until(store_answers, "the replica to reach the class store", 60, interval=1.0)
        except AssertionError:
            last = answers[-1]
            redis_log = podman("logs", f"{project}_redis_1", check=False)
            raise AssertionError(
                f"{last.stdout}{last.stderr[-2000:]}\nredis log:\n{redis_log.stdout[-2000:]}"
                f"{redis_log.stderr[-2000:]}"
            ) from None
        first = (answers[0].stdout + answers[0].stderr).strip().splitlines()[-1:]
        print(f"the store answered the replica after {len(answers)} tries (first: {first})")
        listed = podman("exec", f"{project}_redis_1", "ls", "/data").stdout.split()
        assert "appendonlydir" in listed or "appendonly.aof" in listed, listed
    finally:
        down = run("down", "--volumes", "--timeout", "5")
        label = f"label=io.podman.compose.project={project}"
        leftover = podman("ps", "--all", "--quiet", "--filter", label).stdout.split()
        # podman-compose 1.0 leaves a container that is restarting, and always the network.
        if leftover:
            podman("rm", "--force", "--time", "0", *leftover, check=False)
        podman("network", "rm", "--force", f"{project}_default", check=False)
        for volume in ("redis-data", "lab-secrets", "redis-acl", "tls"):
            podman("volume", "rm", "--force", f"{project}_{volume}", check=False)
        print(f"compose test took {time.monotonic() - started:.1f} s")
    assert down.returncode == 0, down.stdout + down.stderr
    assert not leftover, f"compose down left containers behind: {leftover}"
