"""The `attention-lab` command: serve the lab with production defaults.

It builds the argument list of a `panel serve` call and runs Panel's own serve command in this
process, so every behaviour (liveness, session reuse, static routes, origin checks) is exactly
Panel's. The one change is the route: Panel names a route after its script's file stem, and the
served script is `app/server/serve.py`, so the route is renamed from /serve to /app (this and
every other edit of Panel's and Bokeh's route tables live in app/patches/server_routes.py).

Every flag has an environment variable, because a container's exec-form CMD expands none.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import secrets
import shlex
import sys
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from app.patches import apply_all
from app.patches.server_routes import serve_command

DEFAULT_PORT = 5006
DEFAULT_ADDRESS = "localhost"
ROUTE = "/app"
# Long enough for a laptop that sleeps through an hour-long class to reconnect (bokeh#14416).
DEFAULT_TOKEN_EXPIRATION_S = 7200
LIVENESS_ENDPOINT = "liveness"
ASSETS_ROUTE = "assets"
LOG_LEVELS = ("trace", "debug", "info", "warning", "error", "critical")
# Each session holds hundreds of Bokeh models, so with a class connected the default collector
# keeps walking a large heap: measured with 20 sessions, 10 of them moving a slider 5 times a
# second, p95 change-to-update latency fell from ~780 ms to ~270 ms with these thresholds.
# Panel collects explicitly when a session is destroyed, so closed sessions are still freed.
GC_THRESHOLDS = (50_000, 20, 10)

SERVE_SCRIPT = Path(__file__).resolve().with_name("serve.py")
log = logging.getLogger("attention_lab.server")

# Flag name -> environment variable; docs/configuration.md's table lists the same pairs.
ENV = {
    "port": "ATTENTION_LAB_PORT",
    "address": "ATTENTION_LAB_ADDRESS",
    "allow_websocket_origin": "ATTENTION_LAB_ALLOWED_ORIGINS",
    "num_threads": "ATTENTION_LAB_NUM_THREADS",
    "show": "ATTENTION_LAB_SHOW",
    "session_token_expiration": "ATTENTION_LAB_SESSION_TOKEN_EXPIRATION",
    "reuse_sessions": "ATTENTION_LAB_REUSE_SESSIONS",
    "log_level": "ATTENTION_LAB_LOG_LEVEL",
    "assets_dir": "ATTENTION_LAB_ASSETS_DIR",
    "panel_args": "ATTENTION_LAB_PANEL_ARGS",
    "preload": "ATTENTION_LAB_PRELOAD",
    "store": "ATTENTION_LAB_STORE",
    "trusted_proxy": "ATTENTION_LAB_TRUSTED_PROXIES",
}
# The secret that signs session tokens: from the environment only (a flag would show in `ps`).
SECRET_ENV = "ATTENTION_LAB_SECRET_KEY"
BOKEH_SECRET_ENV = "BOKEH_SECRET_KEY"
MIN_SECRET_CHARS = 32
# The largest websocket message a page may send: an import of the largest file the page takes
# (1 MiB, base64 in JSON: about 1.4 MB) with room to spare. Bokeh's default is 20 MiB.
MAX_MESSAGE_BYTES = 2 * 1024 * 1024
# Bokeh's own variable for the websocket allowlist, honoured when ours is unset.
BOKEH_ORIGIN_ENV = "BOKEH_ALLOW_WS_ORIGIN"

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class ConfigError(ValueError):
    """A flag or environment variable holds a value the lab cannot use."""


def _env_bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ConfigError(
        f"{name}={raw!r} is not a boolean; use one of 1/0, true/false, yes/no, on/off"
    )


def _env_int(env: Mapping[str, str], name: str, default: int | None, minimum: int) -> int | None:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not an integer") from None
    if value < minimum:
        raise ConfigError(f"{name}={value} must be >= {minimum}")
    return value


def _split_origins(raw: str) -> list[str]:
    return [part.strip() for part in raw.replace(";", ",").split(",") if part.strip()]


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} must be >= 0")
    return value


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port {value} is outside 0..65535")
    return value


def default_assets_dir() -> Path:
    """The lab's static files: the installed package data (assets/ in a checkout)."""
    import attention_lab_assets

    return attention_lab_assets.folder()


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser. An option left unset is None here: `fill_from_environment` then
    reads its variable, so a flag wins and a bad value in a variable the flag replaced is never
    read."""
    parser = argparse.ArgumentParser(
        prog="attention-lab",
        description=(
            "Serve Attention Lab, an interactive laboratory for scaled dot-product attention, "
            f"at http://ADDRESS:PORT{ROUTE}. Every flag can also be set by the environment "
            "variable named in its help."
        ),
        epilog=(
            "Arguments after '--' go to `panel serve` unchanged, after those in env "
            f"{ENV['panel_args']} (e.g. -- --use-xheaders behind a proxy)."
        ),
    )
    parser.add_argument(
        "--port",
        type=_port,
        help=f"TCP port to listen on; 0 picks a free one (default {DEFAULT_PORT}; "
        f"env {ENV['port']})",
    )
    parser.add_argument(
        "--address",
        help=f"interface to bind; 0.0.0.0 for every interface, as in a container "
        f"(default {DEFAULT_ADDRESS}; env {ENV['address']})",
    )
    parser.add_argument(
        "--allow-websocket-origin",
        action="append",
        default=None,
        metavar="HOST[:PORT]",
        help=f"a host whose pages may open the lab's websocket; repeatable (default: "
        f"localhost:PORT only; env {ENV['allow_websocket_origin']}, comma-separated, "
        f"else {BOKEH_ORIGIN_ENV})",
    )
    parser.add_argument(
        "--num-threads",
        type=_non_negative_int,
        help=f"threads that run session callbacks; 0 runs them on the event loop "
        f"(default 0; env {ENV['num_threads']})",
    )
    parser.add_argument(
        "--show",
        dest="show",
        action="store_true",
        default=None,
        help=f"open the lab in a browser once the server is up (default; env {ENV['show']}=1)",
    )
    parser.add_argument(
        "--no-show",
        dest="show",
        action="store_false",
        help=f"do not open a browser (env {ENV['show']}=0)",
    )
    parser.add_argument(
        "--session-token-expiration",
        type=_non_negative_int,
        metavar="SECONDS",
        help=f"how long a page's session token stays valid for (re)connecting "
        f"(default {DEFAULT_TOKEN_EXPIRATION_S}; env {ENV['session_token_expiration']})",
    )
    parser.add_argument(
        "--reuse-sessions",
        dest="reuse_sessions",
        action="store_true",
        default=None,
        help=f"render first page loads from a cached session, much faster under a crowd "
        f"(default; env {ENV['reuse_sessions']}=1)",
    )
    parser.add_argument(
        "--no-reuse-sessions",
        dest="reuse_sessions",
        action="store_false",
        help=f"build every page from scratch (env {ENV['reuse_sessions']}=0)",
    )
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        help=f"server log level (default info; env {ENV['log_level']})",
    )
    parser.add_argument(
        "--assets-dir",
        type=Path,
        metavar="DIR",
        help=f"folder served at /{ASSETS_ROUTE}/ (default: the lab's own assets, "
        f"wherever it is installed; env {ENV['assets_dir']})",
    )
    parser.add_argument(
        "--preload",
        action="append",
        metavar="MODEL",
        help="load this trained model in the background as soon as the server starts, so the "
        "first page to open it does not wait (repeatable; e.g. smollm2-135m; default none: a "
        f"model loads when a page first asks for it; env {ENV['preload']}, comma-separated)",
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        help="where classes keep their steps and votes: 'memory' (this process alone) or "
        "redis://HOST:PORT/DB, shared by every replica behind a balancer "
        f"(default memory; env {ENV['store']})",
    )
    parser.add_argument(
        "--trusted-proxy",
        action="append",
        metavar="CIDR",
        help="a balancer's address or network (e.g. 10.0.0.0/8) whose X-Real-IP, "
        "X-Forwarded-For and X-Forwarded-Proto the lab believes; repeatable. Without it "
        "the lab ignores forwarded headers and sees the connection's own address "
        f"(env {ENV['trusted_proxy']}, comma-separated)",
    )
    parser.add_argument(
        "--print-command",
        action="store_true",
        help="print the equivalent `panel serve` arguments and exit without serving",
    )
    return parser


def fill_from_environment(options: argparse.Namespace, env: Mapping[str, str]) -> None:
    """Give every option no flag set its environment variable's value, else its default.

    Only the variables actually used are read, so a flag always wins and a bad value it replaced
    is ignored; a bad value that is used raises ConfigError naming the variable."""
    if options.port is None:
        options.port = _env_int(env, ENV["port"], DEFAULT_PORT, 0)
        if not 0 <= options.port <= 65535:
            raise ConfigError(f"{ENV['port']}={options.port} is outside 0..65535")
    if options.address is None:
        options.address = env.get(ENV["address"]) or DEFAULT_ADDRESS
    if options.num_threads is None:
        options.num_threads = _env_int(env, ENV["num_threads"], 0, 0)
    if options.show is None:
        options.show = _env_bool(env, ENV["show"], True)
    if options.session_token_expiration is None:
        options.session_token_expiration = _env_int(
            env, ENV["session_token_expiration"], DEFAULT_TOKEN_EXPIRATION_S, minimum=1
        )
    if options.reuse_sessions is None:
        options.reuse_sessions = _env_bool(env, ENV["reuse_sessions"], True)
    if options.log_level is None:
        level = (env.get(ENV["log_level"]) or "info").lower()
        if level not in LOG_LEVELS:
            raise ConfigError(f"{ENV['log_level']}={level!r} is not one of {', '.join(LOG_LEVELS)}")
        options.log_level = level
    if options.assets_dir is None and env.get(ENV["assets_dir"]):
        options.assets_dir = Path(env[ENV["assets_dir"]])
    if options.preload is None:
        options.preload = [m for m in env.get(ENV["preload"], "").replace(",", " ").split() if m]
    if options.store is None:
        options.store = env.get(ENV["store"], "").strip() or "memory"
    if options.trusted_proxy is None:
        options.trusted_proxy = _split_origins(env.get(ENV["trusted_proxy"], ""))
    else:
        options.trusted_proxy = [n for flag in options.trusted_proxy for n in _split_origins(flag)]
    try:
        from app.server.guard import parse_networks

        options.trusted_networks = parse_networks(options.trusted_proxy)
    except ValueError as exc:
        raise ConfigError(f"--trusted-proxy / {ENV['trusted_proxy']}: {exc}") from None
    if not valid_store_url(options.store):
        raise ConfigError(
            f"class store {options.store!r}: use 'memory' or redis://HOST:PORT/DB "
            "(rediss:// with TLS, unix:///path/to/socket)"
        )


def valid_store_url(url: str) -> bool:
    if url in ("memory", "memory://"):
        return True
    parts = urlsplit(url)
    if parts.scheme == "unix":
        return bool(parts.path)
    return parts.scheme in ("redis", "rediss") and bool(parts.hostname)


def resolve_origins(flags: Sequence[str] | None, env: Mapping[str, str], port: int) -> list[str]:
    """The websocket allowlist: flags, else our variable, else Bokeh's, else localhost:PORT."""
    if flags:
        return [origin for flag in flags for origin in _split_origins(flag)]
    for name in (ENV["allow_websocket_origin"], BOKEH_ORIGIN_ENV):
        origins = _split_origins(env.get(name, ""))
        if origins:
            return origins
    return [f"localhost:{port}"]


def panel_serve_args(
    argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None
) -> tuple[list[str], argparse.Namespace]:
    """Parse the lab's flags and return the `panel serve` argument list they stand for."""
    env = os.environ if env is None else env
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    parser = build_parser()
    options = parser.parse_args(argv)
    try:
        fill_from_environment(options, env)
    except ConfigError as exc:
        raise SystemExit(f"attention-lab: error: {exc}") from None
    origins = resolve_origins(options.allow_websocket_origin, env, options.port)
    if origins == ["localhost:0"]:
        parser.error("--port 0 needs an explicit --allow-websocket-origin")
    extra = shlex.split(env.get(ENV["panel_args"], "")) + extra

    assets = options.assets_dir or default_assets_dir()
    if options.assets_dir is not None and not options.assets_dir.is_dir():
        parser.error(f"--assets-dir {options.assets_dir} is not a directory")

    args = [
        str(SERVE_SCRIPT),
        "--port",
        str(options.port),
        "--address",
        options.address,
        "--liveness",
        "--liveness-endpoint",
        LIVENESS_ENDPOINT,
        "--session-token-expiration",
        str(options.session_token_expiration),
        "--log-level",
        options.log_level,
        "--websocket-max-message-size",
        str(MAX_MESSAGE_BYTES),
    ]
    if options.trusted_networks:
        args.append("--use-xheaders")
    for origin in origins:
        args += ["--allow-websocket-origin", origin]
    if options.num_threads:
        args += ["--num-threads", str(options.num_threads)]
    if options.reuse_sessions:
        args.append("--reuse-sessions")
    if assets is not None:
        args += ["--static-dirs", f"{ASSETS_ROUTE}={assets}"]
    if options.show:
        args.append("--show")
    return args + extra, options


def _lab_serve_command():
    """Panel's serve command with the route renamed from the script's stem to /app, and
    /replica added (it names the process, so a page can tell it reconnected to another one),
    the class routes (/class/new, /class/device: app/server/class_routes.py), Panel's liveness
    and component routes narrowed and the security headers on every answer
    (app/server/guard.py)."""
    from app.server import guard
    from app.server.class_routes import ROUTES as CLASS_ROUTES
    from app.server.replica import ENDPOINT as REPLICA_ENDPOINT
    from app.server.replica import ReplicaHandler as Replica

    return serve_command(
        {"/" + SERVE_SCRIPT.stem: ROUTE},
        [(rf"/{REPLICA_ENDPOINT}", Replica), *CLASS_ROUTES],
        edit_patterns=guard.guard_extra_patterns,
        transforms=[guard.SecurityHeaders],
    )


def settle_secret(env: MutableMapping[str, str]) -> bool:
    """Sign every session token (Bokeh's BOKEH_SIGN_SESSIONS) with the deployment's secret:
    ATTENTION_LAB_SECRET_KEY, else BOKEH_SECRET_KEY, else one made now for this process alone
    (replicas behind a balancer must share one). Unsigned, a session id is all it takes to
    attach to another's page. Returns whether the secret was made here."""
    secret = (env.get(SECRET_ENV) or env.get(BOKEH_SECRET_ENV) or "").strip()
    made = not secret
    if made:
        secret = secrets.token_urlsafe(48)
    elif len(secret) < MIN_SECRET_CHARS:
        raise ConfigError(
            f"{SECRET_ENV} must be at least {MIN_SECRET_CHARS} characters "
            "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(48))')"
        )
    env[BOKEH_SECRET_ENV] = secret
    env["BOKEH_SIGN_SESSIONS"] = "true"
    env.pop(SECRET_ENV, None)  # the process's children and its page code need not see it
    return made


def guard_server(trusted: Sequence = ()) -> None:
    """The guard's process-wide parts (app/server/guard.py): the guarded page and websocket
    handlers in Bokeh's route table, `autoload.js` out of it, forwarded headers believed from
    `trusted` networks only, the reused page keyed on its path alone (Panel's default key
    also holds `?theme=`, so each new value built and kept a page for good), and the log
    lines that would print a session's id shortened."""
    import panel as pn

    from app.patches.forwarded import trust_forwarded_headers_from
    from app.server import guard
    from app.server.logs import shorten_session_ids

    guard.guard_routes()
    trust_forwarded_headers_from(trusted)
    pn.config.session_key_func = _page_path
    shorten_session_ids()


def _page_path(request) -> str:
    return request.path


def serve(
    args: Sequence[str],
    run: Callable[[argparse.Namespace], None] | None = None,
    trusted: Sequence = (),
) -> None:
    """Run Panel's serve command in this process with the given `panel serve` arguments;
    forwarded headers are believed from the `trusted` networks only."""
    # Bokeh reads this variable on every websocket handshake and lets it override the flag,
    # so the allowlist resolved above must be the only one in force.
    os.environ.pop(BOKEH_ORIGIN_ENV, None)
    # Bokeh and Panel JS from this server, never a CDN: the lab must work offline.
    os.environ["BOKEH_RESOURCES"] = "server"
    try:
        if settle_secret(os.environ):
            log.info(
                "sessions are signed with a secret made for this process; replicas behind a "
                "balancer need one shared secret in %s",
                SECRET_ENV,
            )
    except ConfigError as exc:
        raise SystemExit(f"attention-lab: error: {exc}") from None
    settle_bokeh_settings(os.environ)
    from app.server.echoed_models import quiet_echoed_models

    quiet_echoed_models()  # a model a page sent back: app/server/echoed_models.py
    gc.set_threshold(*GC_THRESHOLDS)
    # Every process-wide patch, before Bokeh builds its route table and before the first page
    # (app/patches/__init__.py lists them; docs/patches.md says why each).
    apply_all()
    guard_server(trusted)
    # The page's code, imported now rather than by the first page opened (which paid ~0.8 s
    # of imports for it, measured), and then frozen with the rest.
    import app.page.lab_page  # noqa: F401

    gc.freeze()  # what is loaded so far lives as long as the server: stop rescanning it
    command_cls = _lab_serve_command()
    parser = argparse.ArgumentParser(prog="panel serve")
    command = command_cls(parser=parser)
    namespace = parser.parse_args(list(args))
    (run or command.invoke)(namespace)


def settle_bokeh_settings(env: Mapping[str, str]) -> None:
    """Bokeh's checks for a programmer's mistakes off, unless `env` sets them: a served page
    paid for them on every session (measured: the document's integrity checks 29 ms of a page's
    ~0.33 s of server CPU to open, each callback's signature check 11 ms more). The test suite
    runs them instead: tests/app/test_page_integrity.py on every part of the page, and the
    in-process tests keep Bokeh's defaults. BOKEH_VALIDATE_DOC=true and
    BOKEH_PERFORM_ERROR_DIAGNOSTICS=true turn them back on."""
    from bokeh.settings import settings

    for check in (settings.perform_document_validation, settings.perform_error_diagnostics):
        if check.env_var not in env:
            check.set_value(False)
    # Read for every model's id, from the environment each time: fixed once (whatever it is).
    settings.simple_ids.set_value(settings.simple_ids())


def main(argv: Sequence[str] | None = None) -> None:
    args, options = panel_serve_args(argv)
    if options.print_command:
        print(shlex.join(["panel", "serve", *args]))
        return
    if not SERVE_SCRIPT.is_file():
        raise SystemExit(f"attention-lab: error: the served script {SERVE_SCRIPT} is missing")
    preload(options.preload)
    from app.classroom import shared

    shared.configure(options.store)  # Redis: connects (and retries) in the background
    serve(args, trusted=options.trusted_networks)


def preload(names: Sequence[str]) -> None:
    """Start loading each named model in a background thread of this (the server's) process;
    every session then shares the one copy. An unknown or missing model stops the start-up."""
    if not names:
        return
    from engine import trained

    known = {name: (ok, reason) for name, _, ok, reason in trained.available()}
    for name in names:
        if name not in known:
            raise SystemExit(
                f"attention-lab: error: --preload {name}: not one of {', '.join(known)}"
            )
        if not known[name][0]:
            raise SystemExit(f"attention-lab: error: --preload {name}: {known[name][1]}")
        trained.start_loading(name)


if __name__ == "__main__":
    main()
