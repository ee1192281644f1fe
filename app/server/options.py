"""The `attention-lab` command's options, each declared once: its flag, its environment variable,
how one text of it is read, its default, its --help line and its row in docs/configuration.md.
The parser, the environment fill and the documentation table are all made from `OPTIONS`, so a
flag and its variable accept exactly the same values."""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from app.patches import ENV as PATCHES_ENV
from app.patches import PROCESS_WIDE, choose

DEFAULT_PORT = 5006
DEFAULT_ADDRESS = "localhost"
# Long enough for a laptop that sleeps through an hour-long class to reconnect (bokeh#14416).
DEFAULT_TOKEN_EXPIRATION_S = 7200
LOG_LEVELS = ("trace", "debug", "info", "warning", "error", "critical")
# Bokeh's own variable for the websocket allowlist, honoured when ours is unset.
BOKEH_ORIGIN_ENV = "BOKEH_ALLOW_WS_ORIGIN"
# Extra `panel serve` arguments: a variable only (on the command line they follow `--`).
PANEL_ARGS_ENV = "ATTENTION_LAB_PANEL_ARGS"

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class ConfigError(ValueError):
    """A flag or environment variable holds a value the lab cannot use."""


# -- how one text of an option is read (a ValueError says what is wrong with it, as a predicate:
# "is not an integer", for "ATTENTION_LAB_PORT='abc' is not an integer") ----------------------


def port_number(text: str) -> int:
    value = whole_number(text)
    if not 0 <= value <= 65535:
        raise ValueError("is outside 0..65535")
    return value


def whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError("is not an integer") from None


def at_least(minimum: int) -> Callable[[str], int]:
    def read(text: str) -> int:
        value = whole_number(text)
        if value < minimum:
            raise ValueError(f"must be >= {minimum}")
        return value

    return read


def switch(text: str) -> bool:
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError("is not a boolean; use one of 1/0, true/false, yes/no, on/off")


def log_level(text: str) -> str:
    value = text.strip().lower()
    if value not in LOG_LEVELS:
        raise ValueError(f"is not one of {', '.join(LOG_LEVELS)}")
    return value


def store_url(text: str) -> str:
    url = text.strip()
    parts = urlsplit(url)
    if url in ("memory", "memory://") or (parts.scheme == "unix" and parts.path):
        return url
    if parts.scheme in ("redis", "rediss") and parts.hostname:
        return url
    raise ValueError(
        "is no class store the lab can use: use 'memory' or redis://HOST:PORT/DB "
        "(rediss:// with TLS, unix:///path/to/socket)"
    )


def text_value(text: str) -> str:
    return text.strip()


def split_list(text: str) -> list[str]:
    """A list option's text: items separated by commas, semicolons or spaces."""
    return [part for part in re.split(r"[,;\s]+", text) if part]


def split_paths(text: str) -> list[str]:
    """A list of paths, separated as PATH is (`:`; `;` on Windows): a file's name may hold a
    comma or a space, never the separator of the system's own lists of paths."""
    return [part.strip() for part in text.split(os.pathsep) if part.strip()]


def positive_number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError("is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise ValueError("must be a positive number")
    return value


def model_file(text: str) -> tuple[str | None, Path]:
    """`PATH` or `NAME=PATH` of a GGUF file: (NAME or None, PATH); the path must be a file
    (its name and its content are checked later: cli.settle_options, then when it loads)."""
    name, given, rest = text.strip().partition("=")
    if not given or not name or any(sep in name for sep in "/\\"):
        name, rest = None, text.strip()  # a path holding '=' (/data/run=3/model.gguf)
    path = Path(rest.strip()).expanduser()
    if not path.exists():
        raise ValueError(f"names {path}, which does not exist")
    if not path.is_file():
        raise ValueError(f"names {path}, which is not a file")
    return name.strip() if name else None, path


# -- the table ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """One option. `kind` is "value", "switch" (--x / --no-x) or "list" (a repeatable flag, a
    comma-separated variable). `doc_default` is the default as the documentation says it."""

    dest: str
    env: str
    read: Callable[[str], Any]
    default: Any
    help: str
    doc: str
    doc_default: str
    kind: str = "value"
    metavar: str | None = None
    fallback_env: str = ""  # a variable read when this one is unset (Bokeh's own)
    help_default: str = ""  # the default as --help says it, where it is not a value
    split: Callable[[str], list[str]] = split_list  # a list option's text into its items
    split_doc: str = "comma-separated"  # how the documentation says they are separated

    @property
    def flag(self) -> str:
        return "--" + self.dest.replace("_", "-")

    def value_of(self, text: str, where: str) -> Any:
        """`text` read as this option's value, or ConfigError naming `where` it came from."""
        try:
            if self.kind == "list":
                return [self.read(item) for item in self.split(text)]
            return self.read(text)
        except ValueError as exc:
            raise ConfigError(f"{where}={text!r} {exc}") from None

    def doc_row(self) -> str:
        if self.kind == "switch":
            flag = f"`{self.flag}` / `--no-{self.flag[2:]}`"
            env = f"`{self.env}` (`1`/`0`)"
        else:
            flag = f"`{self.flag} {self.metavar}`" if self.metavar else f"`{self.flag}`"
            env = f"`{self.env}`"
            if self.kind == "list":
                flag += " (repeatable)"
                env += f" ({self.split_doc})"
        if self.fallback_env:
            env += f", else `{self.fallback_env}`"
        return f"| {flag} | {env} | {self.doc_default} | {self.doc} |"


OPTIONS: tuple[Option, ...] = (
    Option(
        "port",
        "ATTENTION_LAB_PORT",
        port_number,
        DEFAULT_PORT,
        "TCP port to listen on; 0 picks a free one",
        "TCP port.",
        f"`{DEFAULT_PORT}`",
        metavar="N",
    ),
    Option(
        "address",
        "ATTENTION_LAB_ADDRESS",
        text_value,
        DEFAULT_ADDRESS,
        "interface to bind; 0.0.0.0 for every interface, as in a container",
        "Interface to bind; `0.0.0.0` for all (the container does this).",
        f"`{DEFAULT_ADDRESS}`",
        metavar="ADDR",
    ),
    Option(
        "allow_websocket_origin",
        "ATTENTION_LAB_ALLOWED_ORIGINS",
        text_value,
        None,  # resolved with the port: localhost:PORT (cli.resolve_origins)
        "a host whose pages may open the lab's websocket",
        "Pages from these hosts may open the lab's websocket; any other origin is refused.",
        "`localhost:PORT`",
        kind="list",
        metavar="HOST[:PORT]",
        fallback_env=BOKEH_ORIGIN_ENV,
        help_default="localhost:PORT",
    ),
    Option(
        "num_threads",
        "ATTENTION_LAB_NUM_THREADS",
        at_least(0),
        0,
        "threads that run session callbacks; 0 runs them on the event loop",
        "Run session callbacks on a thread pool of N threads; 0 keeps them on the event loop.",
        "`0`",
        metavar="N",
    ),
    Option(
        "show",
        "ATTENTION_LAB_SHOW",
        switch,
        True,
        "open the lab in a browser once the server is up",
        "Open a browser once the server is up.",
        "show",
        kind="switch",
    ),
    Option(
        "session_token_expiration",
        "ATTENTION_LAB_SESSION_TOKEN_EXPIRATION",
        at_least(1),
        DEFAULT_TOKEN_EXPIRATION_S,
        "how long a page's session token stays valid for (re)connecting",
        "Seconds a page's session token stays valid, so a laptop that slept through an hour "
        "reconnects instead of showing a blank page.",
        f"`{DEFAULT_TOKEN_EXPIRATION_S}`",
        metavar="SECONDS",
    ),
    Option(
        "reuse_sessions",
        "ATTENTION_LAB_REUSE_SESSIONS",
        switch,
        True,
        "render first page loads from a cached session, much faster under a crowd",
        "Render first page loads from a cached session (much faster when a class arrives at once).",
        "reuse",
        kind="switch",
    ),
    Option(
        "log_level",
        "ATTENTION_LAB_LOG_LEVEL",
        log_level,
        "info",
        f"server log level: {', '.join(LOG_LEVELS)}",
        ", ".join(f"`{level}`" for level in LOG_LEVELS[:-1]) + f" or `{LOG_LEVELS[-1]}`.",
        "`info`",
        metavar="LEVEL",
    ),
    Option(
        "assets_dir",
        "ATTENTION_LAB_ASSETS_DIR",
        Path,
        None,  # the installed package's (cli.default_assets_dir)
        "folder served at /assets/",
        "Folder served at `/assets/`.",
        "the lab's own assets (the installed package `attention_lab_assets`; `assets/` in a "
        "checkout)",
        metavar="DIR",
        help_default="the lab's own assets, wherever it is installed",
    ),
    Option(
        "trusted_proxy",
        "ATTENTION_LAB_TRUSTED_PROXIES",
        text_value,
        [],
        "a balancer's address or network (e.g. 10.0.0.0/8) whose X-Real-IP, X-Forwarded-For "
        "and X-Forwarded-Proto the lab believes; without it the lab ignores forwarded headers",
        "A balancer's address or network (`10.0.0.0/8`, `127.0.0.1`): the lab believes the "
        "`X-Real-IP`, `X-Forwarded-For` and `X-Forwarded-Proto` headers of connections from "
        "it, and only of those (Tornado's `--use-xheaders` believes anyone's). Without it the "
        "lab sees each connection's own address. The per-browser and per-address limits of a "
        "class (see [teaching.md](teaching.md#limits-that-fit-a-room)) read the address it "
        "gives.",
        "none",
        kind="list",
        metavar="CIDR",
    ),
    Option(
        "model",
        "ATTENTION_LAB_MODELS",
        model_file,
        [],
        "a GGUF model file (Llama, Qwen2 or GPT-2 family) the model menu offers, under its file "
        "name without .gguf or under NAME",
        "A GGUF file of the Llama, Qwen2 or GPT-2 family that the model menu offers, under its "
        "file name without `.gguf` (or `NAME`: letters, digits, `.`, `_`, `-`), and a link opens "
        "as `?model=NAME`. A path that is not a file stops the start-up; a file the lab cannot "
        "run (not GGUF, truncated, another architecture, too large) shows its error on the page "
        "when it is opened. A page opens only the files listed here, never a path a visitor "
        "types. See [models.md](models.md).",
        "none",
        kind="list",
        metavar="[NAME=]PATH",
        split=split_paths,
        split_doc="separated by `:` as in PATH, `;` on Windows",
    ),
    Option(
        "max_model_mb",
        "ATTENTION_LAB_MAX_MODEL_MB",
        positive_number,
        None,  # the engine's (engine.trained.files.DEFAULT_MAX_MB), read only when a file loads
        "the largest model a --model file may load into, as float32 weights in MB",
        "The largest model a `--model` file may load into, counted as its float32 weights in "
        "MB (4 bytes a parameter: 4096 MB is about a billion parameters, what a laptop holds "
        "beside the lab); a larger file shows its size and this limit on the page instead.",
        "`4096`",
        metavar="MB",
        help_default="4096",
    ),
    Option(
        "preload",
        "ATTENTION_LAB_PRELOAD",
        text_value,
        [],
        "load this trained model (e.g. smollm2-135m, or a --model file's name) in the "
        "background as soon as the server "
        "starts, so the first page to open it does not wait; a class should preload",
        "Load a trained model (e.g. `smollm2-135m`, or a `--model` file's name) in the "
        "background as soon as the server "
        "starts, so no page waits for it; otherwise it loads, once per process, when a page "
        "first asks for it (SmolLM2-135M-Instruct: about 10 s from a cold disk, 6 s warm, "
        "370 MB; [performance.md](performance.md)).",
        "none",
        kind="list",
        metavar="MODEL",
    ),
    Option(
        "store",
        "ATTENTION_LAB_STORE",
        store_url,
        "memory",
        "where classes keep their steps and votes: 'memory' (this process alone) or "
        "redis://HOST:PORT/DB, shared by every replica behind a balancer",
        "Where classes keep their steps, votes and nicknames: `memory` in this process (one "
        "machine), or `redis://HOST:PORT/DB` (`rediss://` with TLS, `unix:///path`) shared by "
        "every replica behind a balancer. A Redis that is down does not stop the server: pages "
        "work as single labs and say the class connection is lost until it is back. See "
        "[teaching.md](teaching.md).",
        "`memory`",
        metavar="URL",
    ),
    Option(
        "patches",
        PATCHES_ENV,
        choose,
        PROCESS_WIDE,
        "which of the lab's patches of Panel, Bokeh and Param apply: all, none (Panel as its "
        "documentation describes it), fixes (the three bug fixes alone) or names separated by "
        "commas",
        "Which process-wide patches of Panel, Bokeh and Param apply: `all`, `none` (the lab "
        "then runs on Panel, Bokeh and Param as they ship: slower, and without the three fixes "
        "of what a user sees), `fixes` (those three alone), or some of their names, separated "
        "by commas. The start-up log names those applied (`patches: none` when off); each "
        "name and what it buys is in [patches.md](patches.md#choosing-the-patches).",
        "`all`",
        metavar="NAMES",
        help_default="all",
    ),
)


def add_to(parser: argparse.ArgumentParser) -> None:
    """Every option as a flag whose value is None when it is not given (the environment fill
    then reads its variable), read by the same function as its variable."""
    for option in OPTIONS:
        env = option.env + (f", else {option.fallback_env}" if option.fallback_env else "")
        shown = option.help_default or (option.default if option.default not in (None, []) else "")
        help_line = f"{option.help} ({f'default {shown}; ' if shown else ''}env {env})"
        if option.kind == "switch":
            parser.add_argument(
                option.flag,
                dest=option.dest,
                action="store_true",
                default=None,
                help=f"{option.help} (default; env {option.env}=1)",
            )
            parser.add_argument(
                f"--no-{option.flag[2:]}",
                dest=option.dest,
                action="store_false",
                help=f"the opposite (env {option.env}=0)",
            )
            continue
        if option.kind == "list":
            help_line += f"; repeatable, or {option.split_doc.replace('`', '')}"
        parser.add_argument(
            option.flag,
            dest=option.dest,
            type=_flag_type(option),
            action="extend" if option.kind == "list" else "store",  # a list flag: one list
            metavar=option.metavar,
            help=help_line,
        )


def _flag_type(option: Option) -> Callable[[str], Any]:
    def read(text: str) -> Any:
        try:
            return option.value_of(text, option.flag)
        except ConfigError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    read.__name__ = option.dest  # argparse names the type in its message
    return read


def fill_from_environment(options: argparse.Namespace, env: Mapping[str, str]) -> None:
    """Give every option no flag set its variable's value, else its default. Only the variables actually used are read, so a flag always wins
    and a bad value it replaced is ignored; a bad value that is used raises ConfigError naming
    the variable."""
    for option in OPTIONS:
        if getattr(options, option.dest) is not None:
            continue
        raw = env.get(option.env, "")
        value = option.value_of(raw, option.env) if raw.strip() else option.default
        setattr(options, option.dest, list(value) if isinstance(value, list) else value)


def markdown_rows() -> str:
    """docs/configuration.md's rows for the options (tests/server/test_server_readme.py)."""
    return "\n".join(option.doc_row() for option in OPTIONS)
