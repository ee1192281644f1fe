"""A class behind the shipped load balancer: three real replicas behind real HAProxy.

HAProxy runs deploy/haproxy.cfg itself, with only its `bind` line and `server` lines replaced
to point at three `attention-lab` processes on loopback, so every global, default and backend
setting tested here is the one that ships. Every page comes from the same client address (this
test), as a class behind a school's NAT does, each with a fresh cookie jar, like separate
students. What the configuration promises is asserted (every replica takes pages, each page
stays on its replica), never times or an even split: this machine is shared, and leastconn
balances by the connections open at that moment.

The replicas and HAProxy are the run's replica room (tests/conftest.py's `replica_room`,
tools/harness.py), shared with tests/server/test_class_replicas.py: the replicas keep their
class store in Redis there, which a page outside a class never touches.
"""

from __future__ import annotations

import asyncio
import importlib.util
import ipaddress
import json
import math
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from labserver import (
    LAB_READY_JS,
    ROOT,
    WEIGHTS_JS,
    clean_env,
    http_get,
    move_temperature,
    open_lab_page,
    page_links,
    session_token,
)
from waiting import wait_until

from tools.harness import HAPROXY_CONFIG as SHIPPED_CFG
from tools.harness import LabServer, ReplicaRoom, haproxy_config
from tools.harness import haproxy_binary as haproxy_path

pytestmark = [pytest.mark.server, pytest.mark.xdist_group("replica_room")]

DEPLOY = ROOT / "deploy"
# The run's replica room (tests/conftest.py's `replica_room`): three, as deploy/compose.yaml.
REPLICAS = ("r1", "r2", "r3")
PAGES = 24
BUILT = re.compile(r"page built by (\S+) \(session (\S+)\)")
LOG10_T = 0.5  # the temperature slider is on a log10 scale


def shipped_servers(config: str) -> list[tuple[str, str, str]]:
    """(name, address, cookie) of each `server` line in a configuration."""
    found = []
    for line in config.splitlines():
        words = line.split()
        if words[:1] == ["server"]:
            cookie = words[words.index("cookie") + 1] if "cookie" in words else ""
            found.append((words[1], words[2], cookie))
    return found


class Balancer:
    """The run's replica room as this module reads it: the logs' errors since the module
    began (another module's faults are not this one's), and each replica's builds."""

    def __init__(self, room: ReplicaRoom):
        self.room, self.port, self.haproxy = room, room.port, room.haproxy
        self._seen = {server.log_path: len(server.log()) for server in room.replicas.values()}

    @property
    def base(self) -> str:
        return self.room.base

    @property
    def replicas(self) -> dict[str, LabServer]:
        return self.room.replicas

    def builds(self) -> dict[str, list[str]]:
        """Session ids of the pages each replica has built, read from its log."""
        return {
            name: [m.group(2) for m in BUILT.finditer(server.log())]
            for name, server in self.replicas.items()
        }

    def server_errors(self) -> list[str]:
        return [
            f"{name}: {line}"
            for name, server in self.replicas.items()
            for line in server.log()[self._seen.get(server.log_path, 0) :].splitlines()
            if "Traceback" in line or " ERROR " in line or "Exception" in line
        ]

    def state_changes(self, name: str, up: bool) -> int:
        """How many times HAProxy has logged replica `name` going UP (or DOWN)."""
        return self.haproxy.state_changes(name, up)

    def wait_for_state(self, name: str, up: bool, seen: int = 0, timeout_s: float = 60.0) -> None:
        """Wait until HAProxy's health check has taken replica `name` out (or back in) more
        than `seen` times."""
        self.haproxy.wait_for_state(name, up, seen, timeout_s)

    def restart(self, name: str) -> None:
        """Start replica `name` again on its port and wait until HAProxy takes it back."""
        self.room.restart(name)


@pytest.fixture(scope="module")
def balancer(replica_room):
    replica_room.heal()  # whatever an earlier module stopped
    assert tuple(replica_room.names) == REPLICAS
    return Balancer(replica_room)


# --- The shipped files -------------------------------------------------------------------------


def test_shipped_haproxy_config_is_valid_and_sticky_by_inserted_cookie(tmp_path):
    haproxy = haproxy_path()
    if haproxy is None:
        pytest.skip("HAProxy is not installed (apt-get install haproxy)")
    shipped = SHIPPED_CFG.read_text()
    # The TLS bind reads the certificate compose's init makes: the shipped file, checked with
    # only that path pointed at one made here the same way (deploy/init_secrets.py).
    crt = "/usr/local/etc/haproxy/certs/lab.pem"
    assert shipped.count(crt) == 1
    made = _self_signed(tmp_path)
    checked = tmp_path / "shipped.cfg"
    checked.write_text(shipped.replace(crt, str(made)))
    result = subprocess.run(
        [haproxy, "-c", "-f", str(checked)], capture_output=True, text=True, timeout=60
    )
    # Compose's host names do not resolve here; HAProxy says so and still validates the rest.
    assert result.returncode == 0, result.stdout + result.stderr
    lines = {" ".join(line.split()) for line in shipped.splitlines()}
    assert "cookie SRV insert indirect nocache httponly secure" in lines
    assert "option httpchk GET /liveness" in lines
    assert "option redispatch" in lines
    # The client's address is the connection's, never a header the client sent (an appending
    # `option forwardfor` would keep the client's X-Forwarded-For in front of it).
    assert {
        "http-request set-header X-Real-IP %[src]",
        "http-request set-header X-Forwarded-For %[src]",
        "http-request del-header X-Scheme",
    } <= lines
    assert "option forwardfor" not in lines
    # TLS on by default: plain HTTP only redirects, HTTPS sends HSTS.
    binds = [line for line in lines if line.startswith("bind ")]
    assert any(f"ssl crt {crt}" in line for line in binds) and len(binds) == 2
    assert any(line.startswith('http-request redirect location "https://') for line in lines)
    assert any(
        line.startswith("http-response set-header Strict-Transport-Security") for line in lines
    )
    # Per-source limits (sized in the file's comment; tests/server/test_deploy_security.py
    # floods them).
    assert any("store conn_cur,http_req_rate(10s)" in line for line in lines)
    assert not any(line.startswith(("balance source", "hash-type", "stick on")) for line in lines)
    servers = shipped_servers(shipped)
    assert len(servers) >= 2 and all(cookie == name for name, _, cookie in servers)
    tunnel = next(line for line in lines if line.startswith("timeout tunnel "))
    assert tunnel.endswith("h") and int(tunnel.split()[-1][:-1]) >= 2  # a lecture and a nap
    # The configuration the balancer tests (and tools.loadtest) run is the shipped one with
    # loopback servers: every other line is kept, in order. Both bind lines become the one plain
    # loopback address there (no certificate, no redirect: the redirect is for the listener
    # named `http`), so every page and websocket of those tests still passes every other rule,
    # the per-source limits and the header rules included.
    derived = haproxy_config(shipped, "127.0.0.1:18080", {"r1": 1, "r2": 2, "r3": 3})
    kept = [line for line in shipped.splitlines() if line.split()[:1] not in (["bind"], ["server"])]
    assert [line for line in derived.splitlines() if line in kept] == kept
    cfg = tmp_path / "loopback.cfg"
    cfg.write_text(derived)
    result = subprocess.run(
        [haproxy, "-c", "-f", str(cfg)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0 and "WARNING" not in result.stderr, result.stderr


def _self_signed(folder: Path) -> Path:
    """A certificate and key for localhost in HAProxy's one-file form, as compose's init
    makes it (deploy/init_secrets.py)."""
    result = subprocess.run(
        [sys.executable, str(DEPLOY / "init_secrets.py"), "--host", "localhost"]
        + ["--lab", str(folder / "lab"), "--redis", str(folder / "redis")]
        + ["--tls", str(folder / "tls")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return folder / "tls" / "lab.pem"


def _load_yaml_documents(path: Path) -> list[dict]:
    yaml = pytest.importorskip("yaml")
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def test_compose_runs_replicas_behind_haproxy_with_the_shipped_config():
    compose = _load_yaml_documents(DEPLOY / "compose.yaml")[0]
    services = compose["services"]
    shipped = SHIPPED_CFG.read_text()
    hosts = {address.split(":")[0] for _, address, _ in shipped_servers(shipped)}
    assert hosts <= set(services), "every server in haproxy.cfg is a compose service"
    for host in hosts:
        lab = services[host]
        # The image's command, run by a shell that first reads init's secrets (the replicas'
        # start is run for real in tests/server/test_deploy_security.py).
        shell, flag, script = lab["command"]
        assert (shell, flag) == ("sh", "-c")
        command = script.split("exec ", 1)[1].split()
        assert command[:1] == ["attention-lab"] and "--no-show" in command
        assert command[command.index("--address") + 1] == "0.0.0.0"
        # Forwarded headers are trusted from listed proxies only, not from anyone as
        # `-- --use-xheaders` did.
        assert "--" not in command and "use-xheaders" not in script
        assert lab["environment"]["ATTENTION_LAB_TRUSTED_PROXIES"]
        assert "LAB_PUBLIC_HOST" in str(lab["environment"]["ATTENTION_LAB_ALLOWED_ORIGINS"])
        assert "ports" not in lab, "replicas are reached through the balancer only"
    proxy = services["haproxy"]
    assert any("haproxy.cfg" in str(volume) for volume in proxy["volumes"])
    assert hosts <= set(proxy["depends_on"])


def test_kubernetes_manifests_have_probes_limits_and_cookie_affinity():
    docs = [
        doc
        for path in sorted((DEPLOY / "k8s").glob("*.yaml"))
        for doc in _load_yaml_documents(path)
    ]
    kinds = {
        doc["kind"]: doc for doc in docs if doc.get("metadata", {}).get("name") == "attention-lab"
    }
    assert {"Deployment", "Service", "Ingress"} <= set(kinds)
    deployment = kinds["Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    # Forwarded headers are believed from the ingress controller's range only (ingress.yaml
    # says how to find it), not from anyone as `-- --use-xheaders` did.
    assert "--" not in container["args"] and "--use-xheaders" not in container["args"]
    env = {e["name"]: e for e in container["env"]}
    trusted = env["ATTENTION_LAB_TRUSTED_PROXIES"]["value"].split(",")
    assert trusted and all(ipaddress.ip_network(cidr).is_private for cidr in trusted)
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == "/liveness"
    resources = container["resources"]
    assert {"cpu", "memory"} <= set(resources["requests"]) and "memory" in resources["limits"]
    labels = deployment["spec"]["selector"]["matchLabels"]
    assert deployment["spec"]["template"]["metadata"]["labels"].items() >= labels.items()
    service = kinds["Service"]
    assert service["spec"]["selector"] == labels
    annotations = kinds["Ingress"]["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert annotations["nginx.ingress.kubernetes.io/session-cookie-name"]
    for key in ("proxy-read-timeout", "proxy-send-timeout"):
        assert int(annotations[f"nginx.ingress.kubernetes.io/{key}"]) >= 7200
    backend = kinds["Ingress"]["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == service["metadata"]["name"]
    # TLS for the students' host, the affinity cookie Secure, and per-address limits sized
    # for a class behind one NAT address (thousands, as deploy/haproxy.cfg's).
    rule_host = kinds["Ingress"]["spec"]["rules"][0]["host"]
    assert any(rule_host in tls["hosts"] for tls in kinds["Ingress"]["spec"]["tls"])
    assert annotations["nginx.ingress.kubernetes.io/session-cookie-secure"] == "true"
    assert int(annotations["nginx.ingress.kubernetes.io/limit-connections"]) >= 2000
    assert int(annotations["nginx.ingress.kubernetes.io/limit-rps"]) >= 1000
    assert "ATTENTION_LAB_TRUSTED_PROXIES" in (DEPLOY / "k8s" / "ingress.yaml").read_text()


def test_kubernetes_runs_redis_with_its_append_only_file_and_the_pods_use_it():
    docs = {
        (doc["kind"], doc.get("metadata", {}).get("name")): doc
        for path in sorted((DEPLOY / "k8s").glob("*.yaml"))
        for doc in _load_yaml_documents(path)
    }
    listed = _load_yaml_documents(DEPLOY / "k8s" / "kustomization.yaml")[0]["resources"]
    assert "redis.yaml" in listed
    redis = docs[("StatefulSet", "redis")]
    (container,) = redis["spec"]["template"]["spec"]["containers"]
    args = container["args"]
    assert args[args.index("--appendonly") + 1] == "yes"
    assert any(m["mountPath"] == "/data" for m in container["volumeMounts"])
    assert redis["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "data"
    service = docs[("Service", "redis")]
    assert service["spec"]["selector"] == redis["spec"]["selector"]["matchLabels"]
    (lab,) = docs[("Deployment", "attention-lab")]["spec"]["template"]["spec"]["containers"]
    names = [e["name"] for e in lab["env"]]
    env = {e["name"]: e for e in lab["env"]}
    # The store's URL carries the lab's Redis user and the password from the Secret Redis reads
    # too; Kubernetes fills in $(REDIS_PASSWORD), defined before it.
    store = env["ATTENTION_LAB_STORE"]["value"]
    assert store.startswith(f"redis://lab:$(REDIS_PASSWORD)@{service['metadata']['name']}.")
    assert names.index("REDIS_PASSWORD") < names.index("ATTENTION_LAB_STORE")
    redis_env = {e["name"]: e for e in container["env"]}
    secret = env["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"]
    assert secret == redis_env["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"]
    # Every replica signs sessions with the same key, from the same Secret.
    key = env["ATTENTION_LAB_SECRET_KEY"]["valueFrom"]["secretKeyRef"]
    assert key["name"] == secret["name"] and key["key"] != secret["key"]
    import redis.connection

    from app.server.options import store_url

    filled = store.replace("$(REDIS_PASSWORD)", "0123abcd" * 8)
    assert store_url(filled) == filled  # the lab takes it (a ValueError otherwise)
    parsed = redis.connection.parse_url(filled)
    assert (parsed["username"], parsed["password"]) == ("lab", "0123abcd" * 8)
    assert "secret-key" in (DEPLOY / "k8s" / "kustomization.yaml").read_text()


def _k8s_documents() -> dict:
    return {
        (doc["kind"], doc.get("metadata", {}).get("name")): doc
        for path in sorted((DEPLOY / "k8s").glob("*.yaml"))
        for doc in _load_yaml_documents(path)
    }


def test_kubernetes_redis_has_composes_acl_and_only_the_lab_reaches_it(tmp_path):
    docs = _k8s_documents()
    spec = docs[("StatefulSet", "redis")]["spec"]["template"]["spec"]
    (init,) = spec["initContainers"]
    (redis,) = spec["containers"]
    args = redis["args"]
    acl = args[args.index("--aclfile") + 1]
    folder = str(Path(acl).parent)
    mounts = {m["name"]: m for m in redis["volumeMounts"]}
    (volume,) = [name for name, m in mounts.items() if m["mountPath"] == folder]
    assert mounts[volume].get("readOnly") is True
    assert {m["name"]: m["mountPath"] for m in init["volumeMounts"]} == {volume: folder}
    # The init container's script, run here with its folder moved: it writes exactly the ACL
    # compose's init writes (deploy/init_secrets.py), which test_deploy_security.py holds
    # against a real redis-server.
    script = init["command"][-1]
    assert init["command"][:2] == ["sh", "-c"]
    spec_ = importlib.util.spec_from_file_location("init_secrets", DEPLOY / "init_secrets.py")
    init_secrets = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(init_secrets)
    for password in ("0123abcd" * 8, "p@ss w/rd'$"):
        result = subprocess.run(
            ["sh", "-c", script.replace(f"{folder}/", f"{tmp_path}/")],
            env={"PATH": "/usr/bin:/bin", "REDIS_PASSWORD": password},
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert result.returncode == 0, result.stderr
        assert (tmp_path / Path(acl).name).read_text() == init_secrets.redis_acl(password)
    empty = subprocess.run(
        ["sh", "-c", script.replace(f"{folder}/", f"{tmp_path}/empty-")],
        env={"PATH": "/usr/bin:/bin", "REDIS_PASSWORD": ""},
        capture_output=True,
        timeout=30,
    )
    assert empty.returncode != 0 and not (tmp_path / f"empty-{Path(acl).name}").exists()
    assert "--user lab" in " ".join(redis["readinessProbe"]["exec"]["command"])
    # Only the lab's pods reach Redis, on its port; only the ingress controller reaches the lab.
    listed = _load_yaml_documents(DEPLOY / "k8s" / "kustomization.yaml")[0]["resources"]
    assert "networkpolicy.yaml" in listed
    policy = docs[("NetworkPolicy", "redis")]["spec"]
    redis_labels = docs[("StatefulSet", "redis")]["spec"]["selector"]["matchLabels"]
    lab_labels = docs[("Deployment", "attention-lab")]["spec"]["selector"]["matchLabels"]
    assert policy["podSelector"]["matchLabels"] == redis_labels
    assert policy["policyTypes"] == ["Ingress"]
    (rule,) = policy["ingress"]
    assert rule["from"] == [{"podSelector": {"matchLabels": lab_labels}}]
    assert rule["ports"] == [{"protocol": "TCP", "port": 6379}]
    lab_policy = docs[("NetworkPolicy", "attention-lab")]["spec"]
    assert lab_policy["podSelector"]["matchLabels"] == lab_labels
    (rule,) = lab_policy["ingress"]
    (source,) = rule["from"]
    assert set(source) == {"namespaceSelector"}
    assert rule["ports"] == [{"protocol": "TCP", "port": 5006}]


# --- Through the balancer ----------------------------------------------------------------------


def _in_thread(coroutine):
    """Run a coroutine on its own loop in a worker thread (Playwright may own this thread's)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _srv_cookie(headers) -> str | None:
    for value in headers.get_list("Set-Cookie") if hasattr(headers, "get_list") else []:
        match = re.match(r"SRV=([^;]+)", value)
        if match:
            return match.group(1)
    return None


async def _open_class(base: str, pages: int) -> tuple[list[dict], list[str]]:
    """Open `pages` pages the way a browser does (the page, then its websocket with the cookie
    the page's response set), each with a fresh cookie jar; keep every websocket open until all
    are open, like a class in the room. Returns one record per page, and every error seen."""
    from tornado.httpclient import AsyncHTTPClient, HTTPRequest
    from tornado.websocket import websocket_connect

    client = AsyncHTTPClient()
    origin = base
    opened, errors, sockets = [], [], []
    try:
        for _ in range(pages):
            response = await client.fetch(f"{base}/app", raise_error=False, request_timeout=90)
            if response.code != 200:
                errors.append(f"GET /app: {response.code}")
                continue
            replica = _srv_cookie(response.headers)
            if replica is None:
                errors.append("GET /app set no SRV cookie")
                continue
            token = session_token(response.body.decode())
            ws_url = base.replace("http://", "ws://") + "/app/ws"
            request = HTTPRequest(
                ws_url,
                headers={"Origin": origin, "Cookie": f"SRV={replica}"},
                request_timeout=90,
            )
            try:
                socket = await websocket_connect(request, subprotocols=["bokeh", token])
            except Exception as exc:
                errors.append(f"websocket: {type(exc).__name__}: {exc}")
                continue
            sockets.append(socket)
            header = await asyncio.wait_for(socket.read_message(), timeout=90)
            if header is None or json.loads(header).get("msgtype") != "ACK":
                errors.append(f"websocket's first message is not Bokeh's ACK: {header!r}")
                continue
            # A cookie on the upgrade would mean HAProxy re-balanced the websocket.
            opened.append({"replica": replica, "moved": _srv_cookie(socket.headers)})
    finally:
        for socket in sockets:
            socket.close()
        client.close()
    return opened, errors


def test_a_class_from_one_address_spreads_over_replicas_and_each_page_stays_on_its_own(balancer):
    before = balancer.builds()
    opened, errors = _in_thread(_open_class(balancer.base, PAGES))
    assert errors == []
    assert len(opened) == PAGES
    per_replica = {name: sum(page["replica"] == name for page in opened) for name in REPLICAS}
    # Every replica takes part of the class: balancing by the client's address (a NAT's one
    # address) would have sent all 24 to one replica. How evenly depends on leastconn's view
    # of the open connections at each page, so no split is asserted.
    assert all(per_replica[name] > 0 for name in REPLICAS), per_replica
    assert sum(per_replica.values()) == PAGES
    assert all(page["moved"] is None for page in opened), "a websocket was re-balanced"

    # One build per page, on the replica that rendered it: a websocket that reached another
    # replica would have made that one build the page a second time.
    def built() -> dict[str, int]:
        after = balancer.builds()
        return {name: len(after[name]) - len(before[name]) for name in REPLICAS}

    try:
        wait_until(lambda: built() == per_replica, "one build per page, on its replica", 30)
    except AssertionError as exc:
        raise AssertionError(f"{exc}: built {built()}, pages {per_replica}") from None
    # Each replica logged its builds under its own process id, the one its /replica names.
    processes = set()
    for server in balancer.replicas.values():
        status, _, body = http_get(f"http://127.0.0.1:{server.port}/replica")
        assert status == 200
        processes.add(json.loads(body)["process"])
        assert {m.group(1) for m in BUILT.finditer(server.log())} == {json.loads(body)["process"]}
    assert len(processes) == len(REPLICAS)
    assert balancer.server_errors() == []


@pytest.mark.browser
def test_updates_flow_in_chromium_through_the_balancer(balancer, chromium):
    context = chromium.new_context()
    try:
        try:
            page = open_lab_page(context, f"{balancer.base}/app")
        except AssertionError as exc:  # what HAProxy and the replicas saw of it
            logs = {"haproxy": balancer.haproxy.log()} | {
                name: server.log() for name, server in balancer.replicas.items()
            }
            tails = "".join(
                f"\n--- {k}:\n" + "\n".join(v.splitlines()[-12:]) for k, v in logs.items()
            )
            raise AssertionError(f"{exc}{tails}") from None
        replica = {c["name"]: c["value"] for c in context.cookies()}.get("SRV")
        assert replica in REPLICAS
        before = page.evaluate(WEIGHTS_JS)
        after, url = _settled_weights(page, LOG10_T)  # the engine's weights at 10**0.5
        assert after != pytest.approx(before, abs=1e-3) and "temperature=3.162" in url
    finally:
        context.close()
    assert balancer.server_errors() == []


def _settled_weights(page, log10_t: float) -> tuple[list[float], str]:
    """Move the slider to `log10_t`; once the page shows the engine's weights for it, drawn and
    in its address (the answer to this move, not a late one), return the weights and URL."""
    return move_temperature(page, log10_t), page.url


@pytest.mark.browser
def test_a_replica_stops_mid_lesson_its_pages_come_back_elsewhere_and_the_rest_never_notice(
    balancer, chromium
):
    contexts, pages, victim = [], [], None
    try:
        # Six students, each with their own browser profile and their own lab on screen.
        for index in range(6):
            context = chromium.new_context()
            contexts.append(context)
            page = open_lab_page(context, f"{balancer.base}/app")
            weights, url = _settled_weights(page, 0.1 + 0.15 * index)
            page.evaluate("() => { window.__sameDocument = true; }")
            replica = {c["name"]: c["value"] for c in context.cookies()}["SRV"]
            pages.append(
                {"page": page, "context": context, "weights": weights, "url": url, "on": replica}
            )
        counts = {name: sum(p["on"] == name for p in pages) for name in REPLICAS}
        victim = max(counts, key=counts.get)
        assert 0 < counts[victim] < len(pages), counts
        moved = [p for p in pages if p["on"] == victim]
        stayed = [p for p in pages if p["on"] != victim]

        down_before = balancer.state_changes(victim, up=False)
        balancer.replicas[victim].process.kill()  # the replica dies without a goodbye
        balancer.replicas[victim].process.wait(timeout=20)
        balancer.wait_for_state(victim, up=False, seen=down_before)

        for record in moved:
            page = record["page"]
            # The page reloads itself through the balancer onto a live replica...
            page.wait_for_function("() => window.__sameDocument === undefined", timeout=90_000)
            page.wait_for_function(LAB_READY_JS, timeout=90_000)
            now = {c["name"]: c["value"] for c in record["context"].cookies()}["SRV"]
            assert now in REPLICAS and now != victim
            # ...and comes back exactly as it was, from its URL.
            assert page.url == record["url"]
            assert page.evaluate(WEIGHTS_JS) == pytest.approx(record["weights"], abs=1e-6)
        for record in stayed:
            # The pages on the other replicas never noticed: same document, same lab.
            page = record["page"]
            assert page.evaluate("() => window.__sameDocument") is True
            assert page.url == record["url"]
            assert page.evaluate(WEIGHTS_JS) == pytest.approx(record["weights"], abs=1e-6)
        for record in pages:  # and every page answers its slider again
            weights, _ = _settled_weights(record["page"], 0.95)
            assert weights != pytest.approx(record["weights"], abs=1e-3)
        assert all(p["page"].evaluate("() => window.__sameDocument") is True for p in stayed)
    finally:
        for context in contexts:
            context.close()
        # Bring the replica back for whatever runs next; HAProxy takes it in again.
        if victim is not None and balancer.replicas[victim].process.poll() is not None:
            balancer.restart(victim)
    assert balancer.server_errors() == []


def test_the_balancer_gzips_the_page_and_its_scripts(balancer):
    """What a class downloads at once: the same bytes as the replica sends, about a third."""
    import gzip

    def encoding(headers) -> str | None:  # HAProxy writes header names in lower case
        return {k.lower(): v for k, v in headers.items()}.get("content-encoding")

    zipped = {"Accept-Encoding": "gzip"}
    status, headers, body = http_get(f"{balancer.base}/app", headers=zipped)
    assert status == 200 and encoding(headers) == "gzip"
    urls = page_links(gzip.decompress(body).decode())
    bokeh = next(url for url in urls if "/bokeh.min.js" in url)
    replica = next(iter(balancer.replicas.values()))
    _, plain_headers, plain = http_get(f"http://127.0.0.1:{replica.port}/{bokeh}")
    assert encoding(plain_headers) is None  # the replica itself does not compress
    status, headers, body = http_get(f"{balancer.base}/{bokeh}", headers=zipped)
    assert status == 200 and encoding(headers) == "gzip"
    assert gzip.decompress(body) == plain
    assert len(body) < len(plain) / 2
    # A client that does not ask for gzip gets the plain bytes.
    assert http_get(f"{balancer.base}/{bokeh}")[2] == plain


def test_load_tool_aimed_at_the_balancer_reports_sessions_per_replica(balancer, tmp_path):
    out = tmp_path / "through.json"
    command = [sys.executable, "-m", "tools.loadtest", "--target", f"{balancer.base}/app"]
    command += ["--sessions", "6", "--busy", "3", "--busy-seconds", "2", "--waves", "0"]
    command += ["--settle-seconds", "1", "--max-seconds", "150", "--json", str(out)]
    for server in balancer.replicas.values():
        command += ["--server-pid", str(server.process.pid)]
    command += ["--balancer-pid", str(balancer.haproxy.pid)]
    result = subprocess.run(
        command, cwd=ROOT, env=clean_env(), capture_output=True, text=True, timeout=200
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(out.read_text())
    assert report["errors"] == []
    # The warm-up session and six more, each counted on the replica HAProxy named.
    per_replica = report["sessions_per_replica"]
    assert set(per_replica) == set(REPLICAS), per_replica
    assert sum(per_replica.values()) == 7
    crowd = report["phases"]["crowd"]
    assert crowd["opened"] == 6 and crowd["busy_sessions"] == 3
    # Each busy session's first change was answered (the run reports no errors otherwise).
    assert crowd["changes"] >= 3
    # The balancer's own figures and the replicas' are measured, as numbers.
    for key in (
        "balancer_cpu_ms_per_session_open",
        "balancer_cpu_ms_per_change",
        "balancer_cpu_share_while_busy",
        "balancer_rss_while_busy_mb",
        "server_cpu_ms_per_change",
        "rss_per_session_mb",
    ):
        assert isinstance(crowd[key], float) and math.isfinite(crowd[key]), (key, crowd)
    assert "sessions per replica" in result.stdout
