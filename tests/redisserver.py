"""A real redis-server on loopback for the class store's tests (Debian's package; CI installs it).

Each server has its own port and folder, saves nothing unless asked for its append-only file,
and is stopped by the fixture that started it.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

import redis
from waiting import wait_until

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    def __init__(self, folder: Path, *, appendonly: bool = False, port: int | None = None):
        self.folder, self.appendonly = folder, appendonly
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.folder.mkdir(parents=True, exist_ok=True)
        args = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        args += ["--dir", str(self.folder), "--daemonize", "no", "--loglevel", "warning"]
        args += ["--appendonly", "yes" if self.appendonly else "no", "--appendfsync", "always"]
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5)

        def answers() -> bool:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited: {self.process.stdout.read()!r}")
            try:
                return bool(client.ping())
            except redis.ConnectionError:
                return False

        wait_until(answers, f"redis-server on port {self.port}", timeout=20)
        client.close()
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
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
