"""Benchmark: a class of 200 on three replicas behind HAProxy, with Redis between them.

    python -m tools.bench_class                        # 200 students, 3 replicas + Redis
    python -m tools.bench_class --students 60 --single # and the same class on one process

Starts redis-server, N `attention-lab` replicas with `--store redis://...`, and HAProxy with
the shipped deploy/haproxy.cfg (only its bind and server lines replaced), then drives one
class through the balancer with tools/classload.py: the teacher's Next to each student's step
shown, each vote to the teacher's chart, and the votes counted. --single then runs the same
class against one process with the in-process store, in the same run, for the ratio. Prints
medians and p95s; it asserts nothing (the tests check behaviour, this measures it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools import classload
from tools.loadtest import HAPROXY_CONFIG, _wait_until_live, free_port, haproxy_config


def _redis(folder: Path) -> tuple[subprocess.Popen, str]:
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not Path(binary).exists():
        raise SystemExit(
            "bench_class: redis-server is not installed (apt-get install redis-server)"
        )
    port = free_port()
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(folder)]
    args += ["--appendonly", "yes"]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    import redis

    client = redis.Redis(port=port)
    deadline = time.monotonic() + 20
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise SystemExit("bench_class: redis-server did not answer") from None
            time.sleep(0.1)
    return process, f"redis://127.0.0.1:{port}/0"


def _replica(log: Path, store: str, origin_port: int | None) -> tuple[subprocess.Popen, int]:
    port = free_port()
    command = [sys.executable, "-m", "app", "--no-show", "--address", "127.0.0.1"]
    command += ["--port", str(port), "--log-level", "warning", "--store", store]
    for origin in (port, origin_port):
        if origin:
            command += ["--allow-websocket-origin", f"127.0.0.1:{origin}"]
    command += ["--", "--use-xheaders"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATTENTION_LAB_")}
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    return process, port


def _stop(processes) -> None:
    for process in processes:
        if process.poll() is None:
            # SIGTERM for all, the lab included: a run started in the background has SIGINT
            # ignored in its children, and a replica would wait out the timeout below.
            process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()


def _haproxy(folder: Path, port: int, servers: dict[str, int]) -> subprocess.Popen:
    binary = shutil.which("haproxy") or "/usr/sbin/haproxy"
    config = folder / "haproxy.cfg"
    config.write_text(haproxy_config(HAPROXY_CONFIG.read_text(), f"127.0.0.1:{port}", servers))
    with open(folder / "haproxy.log", "wb") as log:
        process = subprocess.Popen([binary, "-db", "-f", str(config)], stdout=log, stderr=log)
    _wait_until_live(process, f"http://127.0.0.1:{port}", 30, "HAProxy", folder / "haproxy.log")
    return process


def across_replicas(students: int, replicas: int, steps: int, folder: Path) -> dict:
    redis_process, store = _redis(folder)
    started = [redis_process]
    try:
        balancer_port = free_port()  # the replicas must allow the balancer's origin
        servers = {}
        for i in range(1, replicas + 1):
            process, port = _replica(folder / f"r{i}.log", store, balancer_port)
            started.append(process)
            servers[f"r{i}"] = port
        for process, (name, port) in zip(started[1:], servers.items(), strict=True):
            _wait_until_live(process, f"http://127.0.0.1:{port}", 120, name, folder / f"{name}.log")
        started.append(_haproxy(folder, balancer_port, servers))
        url = f"http://127.0.0.1:{balancer_port}/app"
        report = classload.drive(url, students, steps, max_seconds=900)
        report["setup"] = f"{replicas} replicas behind HAProxy, Redis store"
        return report
    finally:
        _stop(started)


def single(students: int, steps: int, folder: Path) -> dict:
    process, port = _replica(folder / "single.log", "memory", None)
    try:
        _wait_until_live(
            process, f"http://127.0.0.1:{port}", 120, "the server", folder / "single.log"
        )
        report = classload.drive(f"http://127.0.0.1:{port}/app", students, steps, max_seconds=900)
        report["setup"] = "one process, in-process store"
        return report
    finally:
        _stop([process])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.bench_class", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--steps", type=int, default=3, help="Next presses measured")
    parser.add_argument("--single", action="store_true", help="also run the class on one process")
    options = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="attention-lab-class-"))
    reports = [across_replicas(options.students, options.replicas, options.steps, folder)]
    if options.single:
        reports.append(single(options.students, options.steps, folder))
    for report in reports:
        print(f"[{report['setup']}]")
        print(classload.render(report))
    if len(reports) == 2:
        a, b = (r["next_to_shown_ms"].get("p95") for r in reports)
        if a and b:
            print(f"p95 Next-to-shown, replicas / one process: {a / b:.2f}x")
    print(f"logs: {folder}")
    return 0 if all(not r["errors"] for r in reports) else 1


if __name__ == "__main__":
    raise SystemExit(main())
