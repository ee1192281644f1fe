"""Classroom load test: real websocket sessions against a real `attention-lab` server.

    python -m tools.loadtest             # the classroom target: 200 open, 50 busy, 3 waves
    python -m tools.loadtest --sessions 50 --wave-sessions 6 --busy-seconds 15   # ~4 minutes
    python -m tools.loadtest --sessions 3 --busy 2 --busy-seconds 2 --waves 1 --wave-sessions 2
    python -m tools.loadtest --sessions 2 --busy 1 --busy-seconds 2 --waves 4 --wave-sessions 40
    python -m tools.loadtest --target http://127.0.0.1:8080/app --sessions 60 --waves 0
    python -m tools.loadtest --compare-haproxy --sessions 20 --busy 20 --waves 0
    python -m tools.loadtest --class-size 30   # a class: a teacher paces, 30 students vote

The last checks that closed sessions are freed: waves that follow a big crowd fit inside the
memory the crowd left behind and can hide a leak, so start from an almost empty server.

Each simulated student is a `bokeh.client` session (the same protocol a browser speaks) with its
own thread and IO loop. Phases: open --sessions sessions (creation rate, memory per session);
make --busy of them move the temperature slider --rate times a second for --busy-seconds
(latency from the change until the server's new `weights` data arrives); close everything; then
--waves rounds of --wave-sessions sessions that open, move the slider and close (memory after
each wave). Bounded: loopback only, a hard time budget (--max-seconds), and it stops by itself;
a run cut short by the budget reports what it measured and counts the cut as an error.

Behind a balancer: --target aims at an address that is already serving (a balancer in front of
replicas, e.g. deploy/compose.yaml) and reports how many sessions each replica got, read from
the cookie the balancer sets on each websocket's upgrade (--replica-cookie: SRV for the shipped
HAProxy, LABSRV for the Kubernetes Ingress). --compare-haproxy starts one server and HAProxy in
front of it (deploy/haproxy.cfg, only its bind and server lines replaced) and runs the same
crowd straight at the server and then through HAProxy, with HAProxy's own CPU, so the figures
show what the balancer adds. Pass --server-pid (repeatable) for the replicas' CPU and memory and
--balancer-pid for the balancer's.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import psutil

from tools import classload
from tools.bokeh_internals import loop_until_closed, send_without_delay
from tools.harness import (
    HAPROXY_CONFIG,
    PYTHON_M_APP,
    HAProxy,
    LabServer,
    StartError,
    require_loopback,
    serve_lab,
)

CONNECT_TIMEOUT_S = 60.0
REPLY_TIMEOUT_S = 10.0


class BudgetExceeded(RuntimeError):
    """The run reached --max-seconds; what was measured so far is still reported."""


@dataclass
class Tally:
    """Thread-safe counters shared by every simulated session."""

    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    changes_sent: int = 0
    replicas: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def opened_on(self, replica: str) -> None:
        with self.lock:
            self.replicas[replica] = self.replicas.get(replica, 0) + 1

    def latency(self, ms: float) -> None:
        with self.lock:
            self.latencies_ms.append(ms)

    def error(self, text: str) -> None:
        with self.lock:
            self.errors.append(text)

    def sent(self) -> None:
        with self.lock:
            self.changes_sent += 1


class Student:
    """One browser-like session: pull the document, then move one control on request."""

    def __init__(
        self, url: str, control: str, source: str, tally: Tally, replica_cookie: str | None = None
    ):
        self.url, self.control_name, self.source_name, self.tally = url, control, source, tally
        self.replica_cookie = replica_cookie
        self.replica: str | None = None
        self.ready = threading.Event()
        self.done = threading.Event()
        self.failed: str | None = None
        self.loop = None
        self.session = None
        self._pending: float | None = None
        self._values: tuple[float, float] = (0.0, 1.0)
        self._flip = False
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        from bokeh.client import pull_session
        from bokeh.events import DocumentReady
        from tornado.ioloop import IOLoop

        try:
            self.loop = IOLoop()
            self.session = pull_session(url=self.url, io_loop=self.loop)
            if not self.session.connected:
                raise RuntimeError(f"connection refused: {self.session.error_detail}")
            # Browsers send websocket frames without Nagle's delay; bokeh.client does not, and a
            # change (three frames) then waited ~40 ms for the server's delayed ACK.
            websocket = send_without_delay(self.session)
            if self.replica_cookie:
                # A balancer that picked a replica for this websocket says which in its cookie.
                self.replica = replica_from_headers(websocket.headers, self.replica_cookie)
                self.tally.opened_on(self.replica or "(no cookie)")
            self._find_models()
            # A browser announces that it has rendered the page; Panel only starts streaming
            # held updates (and runs onload callbacks) for a document after that.
            self.session.document.callbacks.send_event(DocumentReady())
        except Exception as exc:  # one failed student is a counted error, not a crash
            self.failed = f"{type(exc).__name__}: {exc}"
            self.tally.error(f"session open: {self.failed}")
            if self.session is not None:
                self.session.close()
            self.ready.set()
            self.done.set()
            return
        self.ready.set()
        try:
            # bokeh.client processes server messages only while its loop runs.
            loop_until_closed(self.session)
        except Exception as exc:
            self.tally.error(f"session loop: {type(exc).__name__}: {exc}")
        finally:
            self.done.set()

    def _find_models(self) -> None:
        doc = self.session.document
        source = doc.select_one({"name": self.source_name})
        if source is None:
            raise LookupError(f"no model named {self.source_name!r} in the served document")
        control = doc.select_one({"name": self.control_name})
        if control is None:
            wanted = self.control_name.lower()
            for model in doc.models:
                title = getattr(model, "title", None)
                if (
                    isinstance(title, str)
                    and title.lower().startswith(wanted)
                    and hasattr(model, "value")
                ):
                    control = model
                    break
        if control is None:
            raise LookupError(f"no control named or titled {self.control_name!r}")
        self.source, self.control = source, control
        low, high = getattr(control, "start", 0.0), getattr(control, "end", 1.0)
        self._values = (low + 0.3 * (high - low), low + 0.7 * (high - low))
        doc.on_change(self._on_change)

    def _on_change(self, event) -> None:
        model = getattr(event, "model", None)
        if self._pending is not None and model is self.source:
            self.tally.latency((time.perf_counter() - self._pending) * 1000.0)
            self._pending = None

    def _change(self) -> None:
        """Runs on the session's loop: move the control unless a reply is still awaited."""
        now = time.perf_counter()
        if self._pending is not None:
            if now - self._pending < REPLY_TIMEOUT_S:
                return
            self.tally.error(f"no {self.source_name} update within {REPLY_TIMEOUT_S} s")
        self._flip = not self._flip
        self._pending = now
        self.control.value = self._values[self._flip]
        self.tally.sent()

    def change(self) -> None:
        """Thread-safe: ask the session's loop to move the control."""
        if self.failed is None and self.loop is not None:
            self.loop.add_callback(self._change)

    @property
    def waiting(self) -> bool:
        return self._pending is not None

    def close(self) -> None:
        if self.loop is not None and self.session is not None:
            self.loop.add_callback(self.session.close)

    def join(self, timeout: float) -> None:
        if not self.done.wait(timeout) and self.loop is not None:
            self.tally.error("a session did not close in time")
            self.loop.add_callback(self.loop.stop)
            self.done.wait(5)


def replica_from_headers(headers, cookie: str) -> str | None:
    """The value of cookie `cookie` in a response's Set-Cookie headers, if it sets one."""
    values = headers.get_list("Set-Cookie") if hasattr(headers, "get_list") else []
    for value in values:
        match = re.match(rf"\s*{re.escape(cookie)}=([^;]*)", value)
        if match:
            return match.group(1)
    return None


def start_server(log_path: Path, threads: int) -> LabServer:
    """A real attention-lab process; closed sessions are reaped within about two seconds."""
    args = ["--log-level", "warning", "--num-threads", str(threads)]
    args += ["--", "--check-unused-sessions", "1000", "--unused-session-lifetime", "1000"]
    return serve_lab(log_path, *args, command=PYTHON_M_APP)


class Run:
    """The phases of one load test, sharing a deadline, a tally and the server's PID."""

    def __init__(
        self,
        options: argparse.Namespace,
        url: str,
        pids: list[int] | int | None,
        balancer_pid: int | None = None,
        replica_cookie: str | None = None,
    ):
        self.options, self.url, self.replica_cookie = options, url, replica_cookie
        pids = [pids] if isinstance(pids, int) else list(pids or [])
        self.servers = [psutil.Process(pid) for pid in pids]
        self.server = self.servers[0] if self.servers else None
        self.balancer = psutil.Process(balancer_pid) if balancer_pid else None
        self.deadline = time.monotonic() + options.max_seconds
        self.tally = Tally()
        self.report: dict = {"url": url, "errors": [], "phases": {}}

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise BudgetExceeded(f"time budget of {self.options.max_seconds} s used up")

    def cpu_s(self) -> float | None:
        """CPU seconds the server has used so far (user + system)."""
        if not self.servers:
            return None
        return sum(t.user + t.system for t in (p.cpu_times() for p in self.servers))

    def balancer_cpu_s(self) -> float | None:
        if self.balancer is None:
            return None
        times = self.balancer.cpu_times()
        return times.user + times.system

    def rss_mb(self) -> float | None:
        """Memory of the server process (summed over replicas when there are several)."""
        if not self.servers:
            return None
        return sum(p.memory_info().rss for p in self.servers) / 2**20

    def open_students(self, count: int, students: list[Student]) -> tuple[float, bool]:
        """Open `count` sessions into `students`, at most --connect-concurrency at once.

        Returns (sessions opened per second, whether the time budget cut the opening short)."""
        started = time.perf_counter()
        window: list[Student] = []
        cut = False
        for _ in range(count):
            if time.monotonic() > self.deadline:
                cut = True
                break
            student = Student(
                self.url, self.options.control, self.options.source, self.tally, self.replica_cookie
            )
            student.start()
            students.append(student)
            window.append(student)
            if len(window) >= self.options.connect_concurrency:
                window.pop(0).ready.wait(CONNECT_TIMEOUT_S)
        for student in students:
            if not student.ready.wait(CONNECT_TIMEOUT_S):
                self.tally.error("a session did not open in time")
        elapsed = time.perf_counter() - started
        opened = sum(s.failed is None and s.ready.is_set() for s in students)
        return (opened / elapsed if elapsed > 0 else math.nan), cut

    def close_students(self, students: list[Student]) -> None:
        for student in students:
            student.close()
        for student in students:
            student.join(timeout=15)

    def drive(self, students: list[Student], rate: float, seconds: float) -> float:
        """Each student asks for a change every 1/rate s (staggered); returns achieved rate."""
        period = 1.0 / rate
        active = [s for s in students if s.failed is None]
        if not active:
            return 0.0
        sent_before = self.tally.changes_sent
        start = time.perf_counter()
        offsets = [i * period / len(active) for i in range(len(active))]
        ticks = 0
        while time.perf_counter() - start < seconds:
            self.check_time()
            tick_start = start + ticks * period
            for student, offset in zip(active, offsets, strict=True):
                delay = tick_start + offset - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                student.change()
            ticks += 1
        # Let the last replies arrive before counting.
        settle_until = time.perf_counter() + REPLY_TIMEOUT_S
        while any(s.waiting for s in active) and time.perf_counter() < settle_until:
            time.sleep(0.05)
        stuck = sum(s.waiting for s in active)
        if stuck:
            self.tally.error(f"{stuck} changes got no {self.options.source} update")
        elapsed = time.perf_counter() - start
        return (self.tally.changes_sent - sent_before) / elapsed / len(active)

    def settle(self) -> float | None:
        """Wait for the server to reap closed sessions, then read its memory."""
        time.sleep(self.options.settle_seconds)
        return self.rss_mb()

    def phase_crowd(self) -> None:
        options = self.options
        phase = self.report["phases"]["crowd"] = {
            "sessions": options.sessions,
            "target_rate_per_session": options.rate,
        }
        phase["rss_server_started_mb"] = self.rss_mb()
        # One session first, so one-off imports and caches are not billed to the crowd.
        warm: list[Student] = []
        self.open_students(1, warm)
        self.close_students(warm)
        base = phase["rss_base_mb"] = self.settle()
        cpu_before_open, balancer_before_open = self.cpu_s(), self.balancer_cpu_s()
        students: list[Student] = []
        try:
            rate, cut = self.open_students(options.sessions, students)
            opened = phase["opened"] = sum(s.failed is None for s in students)
            phase["creation_rate_per_s"] = rate
            cpu_after_open = self.cpu_s()
            if cpu_before_open is not None and opened:
                phase["server_cpu_s_per_session_open"] = (cpu_after_open - cpu_before_open) / opened
            if balancer_before_open is not None and opened:
                used = self.balancer_cpu_s() - balancer_before_open
                phase["balancer_cpu_ms_per_session_open"] = used / opened * 1000.0
            crowd = phase["rss_with_sessions_mb"] = self.rss_mb()
            if base and crowd and opened:
                phase["rss_per_session_mb"] = (crowd - base) / opened
            if cut:
                raise BudgetExceeded(f"time budget of {options.max_seconds} s used up")
            if self.replica_cookie:
                phase["sessions_per_replica"] = dict(sorted(self.tally.replicas.items()))
            busy = students[: options.busy]
            phase["busy_sessions"] = len(busy)
            before = len(self.tally.latencies_ms)
            server_cpu, client_cpu, wall = self.cpu_s(), _own_cpu_s(), time.perf_counter()
            balancer_cpu = self.balancer_cpu_s()
            phase["achieved_rate_per_session"] = self.drive(
                busy, options.rate, options.busy_seconds
            )
            wall = time.perf_counter() - wall
            latencies = np.array(self.tally.latencies_ms[before:])
            phase["changes"] = int(latencies.size)
            if latencies.size:
                # The simulated students share the machine: the client's own share of a core
                # shows whether it, rather than the server, is what makes changes queue.
                client_cpu = _own_cpu_s() - client_cpu
                phase["client_cpu_ms_per_change"] = client_cpu / latencies.size * 1000.0
                phase["client_cpu_share_while_busy"] = client_cpu / wall
                if server_cpu is not None:
                    server_cpu = self.cpu_s() - server_cpu
                    phase["server_cpu_ms_per_change"] = server_cpu / latencies.size * 1000.0
                    phase["server_cpu_share_while_busy"] = server_cpu / wall
                if balancer_cpu is not None:
                    balancer_cpu = self.balancer_cpu_s() - balancer_cpu
                    phase["balancer_cpu_ms_per_change"] = balancer_cpu / latencies.size * 1000.0
                    phase["balancer_cpu_share_while_busy"] = balancer_cpu / wall
            if latencies.size:
                phase["latency_p50_ms"] = float(np.percentile(latencies, 50))
                phase["latency_p95_ms"] = float(np.percentile(latencies, 95))
                phase["latency_max_ms"] = float(latencies.max())
            phase["rss_while_busy_mb"] = self.rss_mb()
            if self.balancer is not None:
                phase["balancer_rss_while_busy_mb"] = self.balancer.memory_info().rss / 2**20
        finally:
            self.close_students(students)
        phase["rss_after_close_mb"] = self.settle()

    def phase_waves(self) -> None:
        options = self.options
        rss = []
        self.report["phases"]["waves"] = {
            "waves": options.waves,
            "sessions_per_wave": options.wave_sessions,
            "rss_after_each_wave_mb": rss,
            "growth_first_to_last_pct": None,
        }
        for _ in range(options.waves):
            students: list[Student] = []
            try:
                _, cut = self.open_students(options.wave_sessions, students)
                if cut:
                    raise BudgetExceeded(f"time budget of {options.max_seconds} s used up")
                for _ in range(options.wave_changes):
                    self.check_time()
                    for student in students:
                        student.change()
                    time.sleep(1.0 / options.rate)
            finally:
                self.close_students(students)
            rss.append(self.settle())
        if len(rss) >= 2 and rss[0]:
            growth = (rss[-1] - rss[0]) / rss[0] * 100.0
            self.report["phases"]["waves"]["growth_first_to_last_pct"] = growth

    def execute(self, phases: list[Callable[[], None]]) -> dict:
        started = time.perf_counter()
        try:
            for phase in phases:
                phase()
        except BudgetExceeded as exc:
            self.tally.error(str(exc))
        self.report["errors"] = list(self.tally.errors)
        self.report["changes_sent"] = self.tally.changes_sent
        if self.replica_cookie:
            self.report["sessions_per_replica"] = dict(sorted(self.tally.replicas.items()))
        self.report["client_cpu_s"] = sum(psutil.Process().cpu_times()[:2])
        self.report["seconds"] = time.perf_counter() - started
        return self.report


def _own_cpu_s() -> float:
    times = psutil.Process().cpu_times()
    return times.user + times.system


def _pct(share: float | None) -> float | None:
    return None if share is None else share * 100.0


def _fmt(value, unit="", digits=1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}{unit}"


def render(report: dict) -> str:
    lines = [f"Attention Lab load test against {report['url']} ({report['seconds']:.0f} s)"]
    crowd = report["phases"].get("crowd")
    if crowd:
        lines += [
            f"  sessions opened        {crowd.get('opened', 0)}/{crowd['sessions']} "
            f"at {_fmt(crowd.get('creation_rate_per_s'), '/s')}",
            f"  server RSS             at start {_fmt(crowd.get('rss_server_started_mb'), ' MB')}, "
            f"after one session {_fmt(crowd.get('rss_base_mb'), ' MB')}, with sessions "
            f"{_fmt(crowd.get('rss_with_sessions_mb'), ' MB')}, per session "
            f"{_fmt(crowd.get('rss_per_session_mb'), ' MB', 2)}",
            f"  control changes        {crowd.get('busy_sessions', 0)} busy sessions at "
            f"{_fmt(crowd.get('achieved_rate_per_session'), '/s')} each (asked "
            f"{crowd.get('target_rate_per_session')}/s), {crowd.get('changes', 0)} replies",
            f"  server CPU             {_fmt(crowd.get('server_cpu_s_per_session_open'), ' s', 2)} "
            f"per session opened, {_fmt(crowd.get('server_cpu_ms_per_change'), ' ms')} per change "
            f"(busy {_fmt(_pct(crowd.get('server_cpu_share_while_busy')), '%', 0)} of a core)",
            f"  load client CPU        {_fmt(crowd.get('client_cpu_ms_per_change'), ' ms')} per "
            f"change (busy {_fmt(_pct(crowd.get('client_cpu_share_while_busy')), '%', 0)} of a core)",
            f"  change -> update       p50 {_fmt(crowd.get('latency_p50_ms'), ' ms')}, p95 "
            f"{_fmt(crowd.get('latency_p95_ms'), ' ms')}, max {_fmt(crowd.get('latency_max_ms'), ' ms')}",
            f"  server RSS after close {_fmt(crowd.get('rss_after_close_mb'), ' MB')}",
        ]
        if "balancer_cpu_ms_per_change" in crowd or "balancer_cpu_ms_per_session_open" in crowd:
            lines.append(
                f"  balancer CPU           "
                f"{_fmt(crowd.get('balancer_cpu_ms_per_session_open'), ' ms', 2)} per session "
                f"opened, {_fmt(crowd.get('balancer_cpu_ms_per_change'), ' ms', 3)} per change "
                f"(busy {_fmt(_pct(crowd.get('balancer_cpu_share_while_busy')), '%', 1)} of a core), "
                f"RSS {_fmt(crowd.get('balancer_rss_while_busy_mb'), ' MB')}"
            )
    per_replica = report.get("sessions_per_replica")
    if per_replica is not None:
        counts = ", ".join(f"{name} {count}" for name, count in per_replica.items()) or "none"
        lines.append(f"  sessions per replica   {counts}")
    waves = report["phases"].get("waves")
    if waves:
        after = ", ".join(_fmt(v, " MB") for v in waves["rss_after_each_wave_mb"])
        lines.append(
            f"  waves                  {waves['waves']} x {waves['sessions_per_wave']} sessions; "
            f"RSS after each: {after}; growth {_fmt(waves['growth_first_to_last_pct'], '%')}"
        )
    lines.append(f"  errors                 {len(report['errors'])}")
    lines += [f"    - {text}" for text in report["errors"][:20]]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tools.loadtest", description=__doc__.split("\n")[0]
    )
    add = parser.add_argument
    add("--url", help="an already running lab on loopback (default: start one)")
    add(
        "--target",
        metavar="URL",
        help="the app's address on an already running balancer (loopback), e.g. "
        "http://127.0.0.1:8080/app: starts no server, reports sessions per replica",
    )
    add(
        "--replica-cookie",
        default="SRV",
        help="the balancer's stickiness cookie, naming the replica (default SRV, as in "
        "deploy/haproxy.cfg; LABSRV for deploy/k8s)",
    )
    add(
        "--server-pid",
        type=int,
        action="append",
        help="PID of a server behind --url/--target, for CPU and memory figures (repeatable)",
    )
    add("--balancer-pid", type=int, help="PID of the balancer behind --target, for its CPU")
    add(
        "--compare-haproxy",
        action="store_true",
        help="start a server and HAProxy in front of it; run the crowd phase directly, then "
        "through HAProxy (waves skipped), and report both",
    )
    add("--haproxy-config", type=Path, default=HAPROXY_CONFIG, help="(default deploy/haproxy.cfg)")
    add("--sessions", type=int, default=200, help="concurrent sessions (default 200)")
    add("--busy", type=int, default=50, help="of those, sessions moving a control (default 50)")
    add("--rate", type=float, default=5.0, help="changes per second per busy session (default 5)")
    add("--busy-seconds", type=float, default=20.0, help="how long they move it (default 20)")
    add("--waves", type=int, default=3, help="open/close rounds for the memory check (default 3)")
    add("--wave-sessions", type=int, default=100, help="sessions per wave (default 100)")
    add("--wave-changes", type=int, default=3, help="control changes per session per wave")
    add("--connect-concurrency", type=int, default=8, help="sessions opening at once")
    add("--settle-seconds", type=float, default=5.0, help="wait for closed sessions to be reaped")
    add("--num-threads", type=int, default=0, help="--num-threads of the started server")
    add("--control", default="Temperature", help="model name or title prefix of the control")
    add("--source", default="weights", help="name of the ColumnDataSource that must update")
    add("--max-seconds", type=float, default=240.0, help="hard time budget (default 240)")
    add("--json", type=Path, help="also write the figures to this JSON file")
    add(
        "--class-size",
        type=int,
        metavar="N",
        help="drive a class instead (tools/classload.py): a teacher starts one and presses "
        "Next, N students join by link and vote; reports Next-to-shown, vote-to-chart and "
        "the votes counted",
    )
    add("--class-steps", type=int, default=2, help="Next presses a class run measures")
    add(
        "--class-languages",
        default="",
        metavar="CODES",
        help="the students open the class link with these ?lang= in turn (e.g. en,es,zh-Hans,ar)",
    )
    return parser


def run_class(options, url: str) -> dict:
    report = classload.drive(
        url,
        options.class_size,
        options.class_steps,
        options.connect_concurrency,
        options.max_seconds,
        tuple(code for code in options.class_languages.split(",") if code),
    )
    print(classload.render(report))
    if report["votes_counted"] != report["votes_sent"]:
        report["errors"].append(
            f"{report['votes_counted']} votes counted of {report['votes_sent']} sent"
        )
    return report


def _check(options: argparse.Namespace) -> None:
    """SystemExit naming an option the run cannot use."""
    for name in ("sessions", "wave_sessions", "connect_concurrency"):
        if getattr(options, name) < 1:
            raise SystemExit(f"loadtest: --{name.replace('_', '-')} must be >= 1")
    if not 0 <= options.busy <= options.sessions:
        raise SystemExit("loadtest: --busy must be between 0 and --sessions")
    if options.rate <= 0 or options.max_seconds <= 0:
        raise SystemExit("loadtest: --rate and --max-seconds must be positive")
    if sum(bool(x) for x in (options.url, options.target, options.compare_haproxy)) > 1:
        raise SystemExit("loadtest: use one of --url, --target and --compare-haproxy")


def _compare_haproxy(options: argparse.Namespace, url: str, pids, log_dir: str) -> dict:
    """The crowd phase run straight at the server, then through HAProxy, side by side."""
    port = int(urlparse(url).port)
    balancer = HAProxy(Path(log_dir), {"r1": port}, config=options.haproxy_config)
    try:
        try:
            balancer.start(timeout=30)
        except StartError as exc:
            raise SystemExit(f"loadtest: {exc}") from None
        through = f"{balancer.base}{urlparse(url).path}"
        runs = {}
        for name, target, proxy in (("direct", url, None), ("haproxy", through, balancer)):
            run = Run(
                options,
                target,
                pids,
                proxy.pid if proxy else None,
                options.replica_cookie if proxy else None,
            )
            runs[name] = run.execute([run.phase_crowd])
    finally:
        balancer.stop()
    return {
        "url": url,
        "compare": runs,
        "errors": [f"{n}: {e}" for n, r in runs.items() for e in r["errors"]],
        "seconds": sum(r["seconds"] for r in runs.values()),
    }


def _server_log_errors(log_path: Path) -> list[str]:
    return [
        line
        for line in log_path.read_text(errors="replace").splitlines()
        if "Traceback" in line or " ERROR " in line or "Exception" in line
    ][:20]


def _print_report(report: dict) -> None:
    if "compare" in report:
        for name, part in report["compare"].items():
            print(f"[{name}] " + render(part))
        print(f"errors (both runs and the server log): {len(report['errors'])}")
        for error in report["errors"][:20]:
            print(f"  - {error}")
    else:
        print(render(report))


def main(argv: list[str] | None = None) -> int:
    options = build_parser().parse_args(argv)
    _check(options)
    # The client must know every Bokeh model the page uses, as a browser knows their JS: Panel's,
    # and the lab's own (a ReactiveHTML view registers its data model on import).
    classload.register_models()

    server = None
    log_dir = tempfile.mkdtemp(prefix="attention-lab-load-")
    log_path = Path(log_dir) / "server.log"
    cookie = None
    if options.url or options.target:
        url = options.url or options.target
        try:
            require_loopback(url)
        except SystemExit as exc:
            raise SystemExit(f"loadtest: {exc}") from None
        pids = options.server_pid
        cookie = options.replica_cookie if options.target else None
    else:
        try:
            server = start_server(log_path, options.num_threads)
        except StartError as exc:
            raise SystemExit(f"loadtest: {exc}") from None
        url, pids = server.url, [server.pid]
    try:
        if options.class_size:
            report = run_class(options, url)
            if options.json:
                options.json.write_text(json.dumps(report, indent=2))
            return 0 if not report["errors"] else 1
        if options.compare_haproxy:
            report = _compare_haproxy(options, url, pids, log_dir)
        else:
            run = Run(options, url, pids, options.balancer_pid, cookie)
            report = run.execute([run.phase_crowd, run.phase_waves])
    finally:
        # With SIGTERM (tools/harness.py): a load run started in the background has SIGINT
        # ignored in its children.
        if server is not None:
            server.stop()
    if server is not None:
        report["server_log_errors"] = _server_log_errors(log_path)
        report["errors"] += [f"server log: {line}" for line in report["server_log_errors"]]
    _print_report(report)
    if options.json:
        options.json.write_text(json.dumps(report, indent=2))
    return 0 if not report["errors"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
