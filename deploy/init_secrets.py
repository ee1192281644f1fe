"""First start of deploy/compose.yaml: the deployment's secrets, Redis's ACL and a certificate.

Compose's `init` service runs this before the other services, in the lab's own image (its
Python, and Debian's openssl, which ca-certificates brings), on every `up`. What an earlier start
made is kept, so every replica, and every restart, gets the same secrets:

- `--lab DIR`: lab.env for the replicas (uid 10001, mode 0400): ATTENTION_LAB_STORE, the class
  store's URL with the lab's Redis user and password in it, and ATTENTION_LAB_SECRET_KEY, the
  key that signs Bokeh sessions (every replica must share it). The two values are kept beside it
  (redis-password, secret-key) for the next start.
- `--redis DIR`: users.acl for redis-server --aclfile: the default user off; one user, `lab`,
  known by the SHA-256 of its password only, allowed the lab's keys and channel (alab:*) and
  every command but Redis's dangerous ones (FLUSHALL, FLUSHDB, CONFIG, KEYS, DEBUG, SHUTDOWN,
  ACL, MODULE, MONITOR, SAVE, REPLICAOF, MIGRATE, RESTORE, SORT, ...).
- `--tls DIR`: lab.pem, HAProxy's certificate and key in one file: a self-signed certificate
  for the students' host (LAB_PUBLIC_HOST) unless lab.pem is there already (a real one the
  operator put there, docs/deployment.md).

The operator may choose the secrets: LAB_REDIS_PASSWORD and LAB_SECRET_KEY, when set, replace
what is kept; unset, each is generated once (32 random bytes) and kept in its volume.
tests/server/test_deploy_security.py runs this same script for the Redis it starts and the
certificate it serves.
"""

from __future__ import annotations

import argparse
import hashlib
import ipaddress
import os
import secrets
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

LAB_UID = 10001  # the lab image's user (Dockerfile)
REDIS_USER = "lab"
KEYS = "alab:*"  # every key and the one channel the lab's store uses (app/classroom/redis_store)
# Denied by category and, for the record, by name (each is also in @dangerous).
DENIED = (
    "-@dangerous -@admin -flushall -flushdb -config -keys -debug -shutdown -acl -module "
    "-monitor -save -bgsave -bgrewriteaof -replicaof -slaveof -migrate -restore -swapdb -sort"
)
CERT_DAYS = 825
# The lab refuses a shorter session-signing key (app/server/cli.py, MIN_SECRET_CHARS); a
# shorter Redis password is refused here, before any service starts with it.
MIN_CHARS = {"LAB_SECRET_KEY": 32, "LAB_REDIS_PASSWORD": 16}


def redis_acl(password: str) -> str:
    """The users.acl text: the default user off, the lab's user by its password's hash."""
    digest = hashlib.sha256(password.encode()).hexdigest()
    return (
        "user default off resetpass resetkeys resetchannels -@all\n"
        f"user {REDIS_USER} on resetpass #{digest} resetkeys ~{KEYS} resetchannels &{KEYS} "
        f"+@all {DENIED}\n"
    )


def store_url(password: str, host: str = "redis", port: int = 6379, db: int = 0) -> str:
    """The lab's ATTENTION_LAB_STORE: redis://lab:PASSWORD@HOST:PORT/DB."""
    return f"redis://{REDIS_USER}:{quote(password, safe='')}@{host}:{port}/{db}"


def lab_env(password: str, secret_key: str, redis_host: str = "redis") -> str:
    """The replicas' lab.env, sourced by their shell before `exec attention-lab`."""
    values = {
        "ATTENTION_LAB_STORE": store_url(password, redis_host),
        "ATTENTION_LAB_SECRET_KEY": secret_key,
    }
    return "".join(f"{name}={shlex.quote(value)}\n" for name, value in values.items())


def _write(path: Path, text: str, mode: int, owner: int | None = None) -> None:
    """Write atomically (a reader never sees half a file), with its mode and owner."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w") as out:
            out.write(text)
        os.chmod(partial, mode)
        if owner is not None and os.geteuid() == 0:
            os.chown(partial, owner, owner)
        os.replace(partial, path)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise


def _kept(path: Path, chosen: str | None) -> str:
    """The operator's value if set, else the one an earlier start kept, else a new one."""
    if chosen:
        return chosen
    if path.exists() and path.read_text().strip():
        return path.read_text().strip()
    return secrets.token_urlsafe(32)


def self_signed(host: str, folder: Path, days: int = CERT_DAYS) -> Path:
    """folder/lab.pem: a self-signed ECDSA P-256 certificate for `host` and its key."""
    if host.startswith("["):  # [v6]:port
        name = host[1 : host.find("]")]
    else:  # name:port, v4:port, or a bare v6 address
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    name = name or "localhost"
    try:
        ipaddress.ip_address(name)
        alt = f"IP:{name}"
    except ValueError:
        alt = f"DNS:{name}"
    with tempfile.TemporaryDirectory() as work:
        key, cert = Path(work) / "key.pem", Path(work) / "cert.pem"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
            + ["-nodes", "-days", str(days), "-subj", f"/CN={name[:64]}"]
            + ["-addext", f"subjectAltName={alt}", "-keyout", str(key), "-out", str(cert)],
            check=True,
            capture_output=True,
            timeout=60,
        )
        pem = folder / "lab.pem"
        # HAProxy's user differs between images: readable by the one container that mounts it.
        _write(pem, cert.read_text() + key.read_text(), 0o644)
    return pem


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lab", type=Path, help="the replicas' folder: lab.env")
    parser.add_argument("--redis", type=Path, help="Redis's folder: users.acl")
    parser.add_argument("--tls", type=Path, help="HAProxy's folder: lab.pem")
    parser.add_argument("--host", default=os.environ.get("LAB_PUBLIC_HOST") or "localhost")
    parser.add_argument("--redis-host", default="redis", help="the store's host in lab.env")
    args = parser.parse_args(argv)
    if args.lab is None or args.redis is None:
        parser.error("--lab and --redis are needed (the password is shared by both)")
    for name, least in MIN_CHARS.items():
        chosen = os.environ.get(name) or ""
        if chosen and len(chosen) < least:
            parser.error(f"{name} must be at least {least} characters (or unset: one is made)")
    password = _kept(args.lab / "redis-password", os.environ.get("LAB_REDIS_PASSWORD"))
    secret_key = _kept(args.lab / "secret-key", os.environ.get("LAB_SECRET_KEY"))
    _write(args.lab / "redis-password", password + "\n", 0o400, LAB_UID)
    _write(args.lab / "secret-key", secret_key + "\n", 0o400, LAB_UID)
    _write(args.lab / "lab.env", lab_env(password, secret_key, args.redis_host), 0o400, LAB_UID)
    _write(args.redis / "users.acl", redis_acl(password), 0o644)  # a hash, no password
    made = []
    if args.tls is not None:
        if (args.tls / "lab.pem").exists():
            made.append("kept the certificate in lab.pem")
        else:
            self_signed(args.host, args.tls)
            made.append(f"made a self-signed certificate for {args.host}")
    print(f"secrets ready ({', '.join(made) or 'no certificate asked for'})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
