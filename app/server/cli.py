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

from app.patches import PROCESS_WIDE, apply_all, summary
from app.patches.server_routes import serve_command
from app.server.options import (
    BOKEH_ORIGIN_ENV,
    OPTIONS,
    PANEL_ARGS_ENV,
    ConfigError,
    add_to,
    fill_from_environment,
    split_list,
)

ROUTE = "/app"
LIVENESS_ENDPOINT = "liveness"
ASSETS_ROUTE = "assets"
# Each session holds hundreds of Bokeh models, so with a class connected the default collector
# keeps walking a large heap and every change waits for it (docs/performance.md, "The garbage
# collector", has the class measured with and without these thresholds).
# Panel collects explicitly when a session is destroyed, so closed sessions are still freed.
GC_THRESHOLDS = (50_000, 20, 10)

SERVE_SCRIPT = Path(__file__).resolve().with_name("serve.py")
log = logging.getLogger("attention_lab.server")

# Option -> its environment variable (app/server/options.py declares both), and the variable
# that holds extra `panel serve` arguments.
ENV = {option.dest: option.env for option in OPTIONS} | {"panel_args": PANEL_ARGS_ENV}
# The secret that signs session tokens: from the environment only (a flag would show in `ps`).
SECRET_ENV = "ATTENTION_LAB_SECRET_KEY"
BOKEH_SECRET_ENV = "BOKEH_SECRET_KEY"
MIN_SECRET_CHARS = 32
# The largest websocket message a page may send: an import of the largest file the page takes
# (1 MiB, base64 in JSON: about 1.4 MB) with room to spare. Bokeh's default is 20 MiB.
MAX_MESSAGE_BYTES = 2 * 1024 * 1024


def default_assets_dir() -> Path:
    """The lab's static files: the installed package data (assets/ in a checkout)."""
    import attention_lab_assets

    return attention_lab_assets.folder()


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser: every option of app/server/options.py, unset (None) unless
    given, so that `settle_options` reads its variable only when the flag is absent."""
    parser = argparse.ArgumentParser(
        prog="attention-lab",
        description=(
            "Serve Attention Lab, an interactive laboratory for scaled dot-product attention, "
            f"at http://ADDRESS:PORT{ROUTE}. Every flag can also be set by the environment "
            "variable named in its help."
        ),
        epilog=(
            "Arguments after '--' go to `panel serve` unchanged, after those in env "
            f"{PANEL_ARGS_ENV} (e.g. -- --use-xheaders behind a proxy)."
        ),
    )
    add_to(parser)
    parser.add_argument(
        "--print-command",
        action="store_true",
        help="print the equivalent `panel serve` arguments and exit without serving",
    )
    return parser


def settle_options(options: argparse.Namespace, env: Mapping[str, str]) -> None:
    """Every option from its flag, else its variable, else its default; the trusted proxies
    read as networks. ConfigError names a bad value that is used."""
    fill_from_environment(options, env)
    try:
        from app.server.guard import parse_networks

        options.trusted_networks = parse_networks(options.trusted_proxy)
    except ValueError as exc:
        raise ConfigError(f"--trusted-proxy / {ENV['trusted_proxy']}: {exc}") from None
    options.model_files = checked_model_files(options.model)


def checked_model_files(entries: Sequence[tuple[str | None, Path]]) -> list:
    """The --model files as the registry will list them (`engine.trained.files.ModelFile`):
    their names safe, unique and no shipped model's. ConfigError naming the file otherwise.
    Their content is not read: a bad file shows its error on the page that opens it."""
    if not entries:
        return []
    from engine.trained import files

    try:
        return files.plan(entries)
    except ValueError as exc:
        raise ConfigError(f"--model / {ENV['model']}: {exc}") from None


def resolve_origins(flags: Sequence[str] | None, env: Mapping[str, str], port: int) -> list[str]:
    """The websocket allowlist: the option (its flags, else our variable), else Bokeh's
    variable, else localhost:PORT."""
    return list(flags or split_list(env.get(BOKEH_ORIGIN_ENV, "")) or [f"localhost:{port}"])


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
        settle_options(options, env)
    except ConfigError as exc:
        raise SystemExit(f"attention-lab: error: {exc}") from None
    origins = resolve_origins(options.allow_websocket_origin, env, options.port)
    if origins == ["localhost:0"]:
        parser.error("--port 0 needs an explicit --allow-websocket-origin")
    extra = shlex.split(env.get(PANEL_ARGS_ENV, "")) + extra

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
    the class routes (/class/new, /class/device: app/server/class_routes.py), the bare address
    sent to /app with its query (app/server/root_address.py), Panel's liveness
    and component routes narrowed, the security headers on every answer
    (app/server/guard.py), and the patches in force logged once the server is up."""
    from app.server import guard
    from app.server.class_routes import ROUTES as CLASS_ROUTES
    from app.server.replica import ENDPOINT as REPLICA_ENDPOINT
    from app.server.replica import ReplicaHandler as Replica
    from app.server.root_address import route as root_address

    return serve_command(
        {"/" + SERVE_SCRIPT.stem: ROUTE},
        [(rf"/{REPLICA_ENDPOINT}", Replica), *CLASS_ROUTES, root_address(ROUTE)],
        edit_patterns=guard.guard_extra_patterns,
        transforms=[guard.SecurityHeaders],
        started=log_patches,
    )


def log_patches() -> None:
    """The start-up log's line naming the patches in force (`patches: none` when off), at
    Bokeh's log level (`--log-level`), which Panel's serve command sets after this module's."""
    log.setLevel(logging.getLogger("bokeh").getEffectiveLevel())
    log.info("%s", summary())


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
    """The key of a reused page: one per path and language (at most six), so the HTML a
    browser receives carries its own <html lang dir> and title."""
    from app.page.session_language import page_key

    return f"{request.path}?lang={page_key(request)}"


def serve(
    args: Sequence[str],
    run: Callable[[argparse.Namespace], None] | None = None,
    trusted: Sequence = (),
    patches: Sequence[str] | None = None,
) -> None:
    """Run Panel's serve command in this process with the given `panel serve` arguments;
    forwarded headers are believed from the `trusted` networks only, and the process-wide
    patches named in `patches` apply (None: as ATTENTION_LAB_PATCHES says, else all)."""
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
    # (app/patches/__init__.py lists them; docs/patches.md says why each, and how to choose).
    apply_all(patches)
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
        settings = [*patches_setting(options.patches), *model_settings(options)]
        print(shlex.join([*settings, "panel", "serve", *args]))
        return
    if not SERVE_SCRIPT.is_file():
        raise SystemExit(f"attention-lab: error: the served script {SERVE_SCRIPT} is missing")
    list_model_files(options.model_files, options.max_model_mb)
    preload(options.preload)
    from app.classroom import shared

    shared.configure(options.store)  # Redis: connects (and retries) in the background
    serve(args, trusted=options.trusted_networks, patches=options.patches)


def patches_setting(patches: Sequence[str]) -> list[str]:
    """`ATTENTION_LAB_PATCHES=...` before a printed `panel serve` (the served script reads it),
    or nothing when all apply, as they do by default."""
    if tuple(patches) == PROCESS_WIDE:
        return []
    return [f"{ENV['patches']}={','.join(patches) or 'none'}"]


def model_settings(options: argparse.Namespace) -> list[str]:
    """The model files and their limit as the variables a printed `panel serve` needs (the
    served script reads them: `models_from_environment`), or nothing when none is set."""
    out = []
    if options.model_files:
        listed = os.pathsep.join(f"{entry.name}={entry.path}" for entry in options.model_files)
        out.append(f"{ENV['model']}={listed}")
    if options.max_model_mb is not None:
        out.append(f"{ENV['max_model_mb']}={options.max_model_mb:g}")
    return out


# Whether this process's model files are settled: by the command line, or once from the
# environment by the served script under a bare `panel serve`.
_MODEL_FILES = {"settled": False}


def list_model_files(listed: Sequence, max_mb: float | None) -> None:
    """List the files in this (the server's) process and set their limit: `panel serve` runs
    here, so every page it serves offers them, and --preload may name them."""
    from engine.trained import files

    for entry in listed:
        files.add_file(entry.path, entry.name)
    if max_mb is not None:
        files.set_max_mb(max_mb)
    _MODEL_FILES["settled"] = True


def models_from_environment(env: Mapping[str, str] | None = None) -> None:
    """Under a bare `panel serve app/server/serve.py` (what --print-command prints), list the
    files and set the limit that ATTENTION_LAB_MODELS and ATTENTION_LAB_MAX_MODEL_MB name, once
    per process; nothing after `attention-lab` has (its flags win over the variables)."""
    if _MODEL_FILES["settled"]:
        return
    env = os.environ if env is None else env
    read = {
        option.dest: option.value_of(env[option.env], option.env)
        for option in OPTIONS
        if option.dest in ("model", "max_model_mb") and env.get(option.env, "").strip()
    }
    list_model_files(checked_model_files(read.get("model", [])), read.get("max_model_mb"))


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
