"""The `attention-lab` command line: flags, environment variables, and the panel serve call."""

from __future__ import annotations

import subprocess
import sys

import pytest
from labserver import ROOT, clean_env, lab_command

import app.patches
from app.server import cli
from app.server.options import DEFAULT_ADDRESS, DEFAULT_PORT, OPTIONS

FLAGS = [
    "--port",
    "--address",
    "--allow-websocket-origin",
    "--num-threads",
    "--no-show",
    "--show",
    "--session-token-expiration",
    "--reuse-sessions",
    "--no-reuse-sessions",
    "--log-level",
    "--assets-dir",
    "--print-command",
]


def _option(args: list[str], flag: str) -> list[str]:
    return [args[i + 1] for i, arg in enumerate(args) if arg == flag]


def test_help_lists_every_flag_and_environment_variable():
    result = subprocess.run(
        [*lab_command(), "--help"], cwd=ROOT, env=clean_env(), capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    for name in [*FLAGS, *cli.ENV.values(), cli.BOKEH_ORIGIN_ENV]:
        assert name in result.stdout, f"--help does not mention {name}"


def test_python_dash_m_app_is_the_same_command():
    result = subprocess.run(
        [sys.executable, "-m", "app", "--print-command", "--no-show", "--port", "7001"],
        cwd=ROOT,
        env=clean_env(),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("panel serve ")
    assert "--port 7001" in result.stdout and str(cli.SERVE_SCRIPT) in result.stdout


def test_the_printed_command_carries_a_choice_of_patches(capsys):
    cli.main(["--print-command", "--patches", "none"])
    assert capsys.readouterr().out.startswith("ATTENTION_LAB_PATCHES=none panel serve ")
    cli.main(["--print-command", "--patches", "owners_in_tuples,bokeh_speedups"])
    printed = capsys.readouterr().out
    assert printed.startswith("ATTENTION_LAB_PATCHES=bokeh_speedups,owners_in_tuples panel serve ")


def test_production_defaults():
    args, options = cli.panel_serve_args([], env={})
    assert args[0] == str(cli.SERVE_SCRIPT)
    assert _option(args, "--port") == ["5006"]
    assert _option(args, "--address") == ["localhost"]
    assert _option(args, "--allow-websocket-origin") == ["localhost:5006"]
    assert "--liveness" in args and _option(args, "--liveness-endpoint") == ["liveness"]
    assert int(_option(args, "--session-token-expiration")[0]) >= 3600
    assert "--reuse-sessions" in args
    assert "--show" in args and options.show
    assert "--admin" not in args and "--num-threads" not in args
    assert _option(args, "--static-dirs") == [f"assets={ROOT / 'assets'}"]


def test_flags_map_onto_panel_serve():
    args, _ = cli.panel_serve_args(
        [
            "--port",
            "7002",
            "--address",
            "0.0.0.0",
            "--allow-websocket-origin",
            "lab.example.org",
            "--allow-websocket-origin",
            "other.example.org:8443",
            "--num-threads",
            "4",
            "--no-show",
            "--no-reuse-sessions",
            "--session-token-expiration",
            "9000",
            "--",
            "--use-xheaders",
        ],
        env={},
    )
    assert _option(args, "--port") == ["7002"]
    assert _option(args, "--address") == ["0.0.0.0"]
    assert _option(args, "--allow-websocket-origin") == [
        "lab.example.org",
        "other.example.org:8443",
    ]
    assert _option(args, "--num-threads") == ["4"]
    assert _option(args, "--session-token-expiration") == ["9000"]
    assert "--show" not in args and "--reuse-sessions" not in args
    assert args[-1] == "--use-xheaders"


def test_environment_variables_configure_every_flag(tmp_path):
    env = {
        "ATTENTION_LAB_PORT": "7003",
        "ATTENTION_LAB_ADDRESS": "0.0.0.0",
        "ATTENTION_LAB_ALLOWED_ORIGINS": "lab.example.org, class.example.org:8080",
        "ATTENTION_LAB_NUM_THREADS": "2",
        "ATTENTION_LAB_SHOW": "0",
        "ATTENTION_LAB_SESSION_TOKEN_EXPIRATION": "4000",
        "ATTENTION_LAB_REUSE_SESSIONS": "false",
        "ATTENTION_LAB_LOG_LEVEL": "WARNING",
        "ATTENTION_LAB_ASSETS_DIR": str(tmp_path),
        "ATTENTION_LAB_PANEL_ARGS": "--prefix lab",
        "ATTENTION_LAB_PRELOAD": "smollm2-135m",
        "ATTENTION_LAB_STORE": "redis://redis.internal:6379/2",
        "ATTENTION_LAB_TRUSTED_PROXIES": "10.0.0.0/8, 172.16.0.5",
        "ATTENTION_LAB_PATCHES": "owners_in_tuples, bokeh_speedups",
        "ATTENTION_LAB_MODELS": f"mine={tmp_path / 'mine.gguf'}",  # (its content is not read)
        "ATTENTION_LAB_MAX_MODEL_MB": "2048",
    }
    (tmp_path / "mine.gguf").write_bytes(b"GGUF")
    assert set(cli.ENV.values()) == set(env), "a flag has no environment variable tested here"
    args, options = cli.panel_serve_args([], env=env)
    assert _option(args, "--port") == ["7003"]
    assert _option(args, "--address") == ["0.0.0.0"]
    assert _option(args, "--allow-websocket-origin") == [
        "lab.example.org",
        "class.example.org:8080",
    ]
    assert _option(args, "--num-threads") == ["2"]
    assert not options.show and "--show" not in args
    assert _option(args, "--session-token-expiration") == ["4000"]
    assert "--reuse-sessions" not in args
    assert _option(args, "--log-level") == ["warning"]
    assert _option(args, "--static-dirs") == [f"assets={tmp_path}"]
    assert args[-2:] == ["--prefix", "lab"] and "--use-xheaders" in args
    assert [str(n) for n in options.trusted_networks] == ["10.0.0.0/8", "172.16.0.5/32"]
    assert _option(args, "--websocket-max-message-size") == [str(cli.MAX_MESSAGE_BYTES)]
    assert options.preload == ["smollm2-135m"]
    assert options.store == "redis://redis.internal:6379/2"
    assert options.patches == ("bokeh_speedups", "owners_in_tuples")
    assert [(f.name, f.path.name) for f in options.model_files] == [("mine", "mine.gguf")]
    assert options.max_model_mb == 2048.0


def test_flags_win_over_environment():
    env = {"ATTENTION_LAB_PORT": "7004", "ATTENTION_LAB_ALLOWED_ORIGINS": "a.example.org"}
    args, _ = cli.panel_serve_args(
        ["--port", "7005", "--allow-websocket-origin", "b.example.org"], env=env
    )
    assert _option(args, "--port") == ["7005"]
    assert _option(args, "--allow-websocket-origin") == ["b.example.org"]


@pytest.mark.parametrize(
    ("env", "argv", "option", "value"),
    [
        ({"ATTENTION_LAB_PORT": "abc"}, ["--port", "5007"], "--port", ["5007"]),
        ({"ATTENTION_LAB_LOG_LEVEL": "loud"}, ["--log-level", "debug"], "--log-level", ["debug"]),
        ({"ATTENTION_LAB_NUM_THREADS": "-1"}, ["--num-threads", "2"], "--num-threads", ["2"]),
        (
            {"ATTENTION_LAB_SESSION_TOKEN_EXPIRATION": "soon"},
            ["--session-token-expiration", "60"],
            "--session-token-expiration",
            ["60"],
        ),
    ],
)
def test_a_flag_replaces_a_bad_environment_value_without_reading_it(env, argv, option, value):
    args, _ = cli.panel_serve_args(argv, env=env)
    assert _option(args, option) == value


def test_a_flag_for_show_or_reuse_replaces_a_bad_environment_value():
    env = {"ATTENTION_LAB_SHOW": "maybe", "ATTENTION_LAB_REUSE_SESSIONS": "2"}
    args, options = cli.panel_serve_args(["--no-show", "--reuse-sessions"], env=env)
    assert options.show is False and "--show" not in args and "--reuse-sessions" in args


def test_unset_options_take_their_defaults_without_any_environment():
    args, options = cli.panel_serve_args([], env={})
    assert _option(args, "--port") == [str(DEFAULT_PORT)]
    assert _option(args, "--address") == [DEFAULT_ADDRESS]
    assert options.show is True and options.reuse_sessions is True and options.preload == []


def test_bokeh_origin_variable_is_the_fallback_and_ours_wins():
    args, _ = cli.panel_serve_args([], env={"BOKEH_ALLOW_WS_ORIGIN": "x.example.org,y.example.org"})
    assert _option(args, "--allow-websocket-origin") == ["x.example.org", "y.example.org"]
    args, _ = cli.panel_serve_args(
        [],
        env={
            "BOKEH_ALLOW_WS_ORIGIN": "x.example.org",
            "ATTENTION_LAB_ALLOWED_ORIGINS": "z.example.org",
        },
    )
    assert _option(args, "--allow-websocket-origin") == ["z.example.org"]


def test_default_origin_follows_the_port():
    args, _ = cli.panel_serve_args(["--port", "8123"], env={})
    assert _option(args, "--allow-websocket-origin") == ["localhost:8123"]


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"ATTENTION_LAB_PORT": "http"}, "ATTENTION_LAB_PORT"),
        ({"ATTENTION_LAB_PORT": "70000"}, "ATTENTION_LAB_PORT"),
        ({"ATTENTION_LAB_SHOW": "maybe"}, "ATTENTION_LAB_SHOW"),
        ({"ATTENTION_LAB_NUM_THREADS": "-1"}, "ATTENTION_LAB_NUM_THREADS"),
        ({"ATTENTION_LAB_SESSION_TOKEN_EXPIRATION": "0"}, "ATTENTION_LAB_SESSION_TOKEN_EXPIRATION"),
        ({"ATTENTION_LAB_REUSE_SESSIONS": "2"}, "ATTENTION_LAB_REUSE_SESSIONS"),
        ({"ATTENTION_LAB_LOG_LEVEL": "loud"}, "ATTENTION_LAB_LOG_LEVEL"),
    ],
)
def test_bad_environment_values_are_named(env, named):
    with pytest.raises(SystemExit) as exit_info:
        cli.panel_serve_args([], env=env)
    assert named in str(exit_info.value)


@pytest.mark.parametrize(
    "argv",
    [
        ["--port", "70000"],
        ["--port", "web"],
        ["--num-threads", "-2"],
        ["--port", "0"],
        ["--assets-dir", "/no/such/folder"],
        ["--admin"],
    ],
)
def test_bad_flags_are_refused(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.panel_serve_args(argv, env={})
    assert exit_info.value.code == 2
    assert "attention-lab: error" in capsys.readouterr().err


def test_lab_websockets_turn_off_nagles_delay(monkeypatch):
    """Every lab websocket sets TCP_NODELAY before Panel opens the session."""
    from bokeh.server.urls import per_app_patterns
    from panel.io.server import WSHandler

    from app.patches.server_routes import send_updates_without_delay

    assert send_updates_without_delay()
    handler = {p: h for p, h, *_ in per_app_patterns}["/ws"]
    assert send_updates_without_delay()  # installed once per process
    assert {p: h for p, h, *_ in per_app_patterns}["/ws"] is handler
    assert issubclass(handler, WSHandler) and handler is not WSHandler

    calls = []
    monkeypatch.setattr(WSHandler, "open", lambda self, *a, **k: calls.append("panel opens"))
    socket = object.__new__(handler)  # no request needed: only open() is exercised
    socket.set_nodelay = lambda flag: calls.append(("nodelay", flag))
    handler.open(socket)
    assert calls == [("nodelay", True), "panel opens"]


def test_serve_installs_the_no_delay_websocket(monkeypatch, bokeh_settings):
    import bokeh.server.urls
    from panel.io.server import WSHandler

    # The route table as Panel leaves it, whatever earlier tests installed in this process.
    per_app_patterns = [
        (pattern, WSHandler if pattern == "/ws" else handler, *rest)
        for pattern, handler, *rest in bokeh.server.urls.per_app_patterns
    ]
    monkeypatch.setattr(bokeh.server.urls, "per_app_patterns", per_app_patterns)
    # As in a fresh process: apply_all applies its patches once per process, and an earlier
    # test here may already have (the route table above is Panel's own again).
    app.patches.undo_all()
    # serve() tunes the process (collector, environment); undo that after the test.
    monkeypatch.setattr(cli.gc, "freeze", lambda: None)
    monkeypatch.setattr(cli.gc, "set_threshold", lambda *thresholds: None)
    monkeypatch.delenv("BOKEH_RESOURCES", raising=False)
    monkeypatch.delenv(cli.BOKEH_ORIGIN_ENV, raising=False)
    seen = []
    cli.serve(["--port", "0", str(cli.SERVE_SCRIPT)], run=lambda ns: seen.append(ns))
    assert seen, "serve() did not reach the serve command"
    assert not bokeh_settings.perform_document_validation()  # settle_bokeh_settings ran
    handler = {p: h for p, h, *_ in per_app_patterns}["/ws"]
    assert getattr(handler, "sets_nodelay", False)


@pytest.fixture
def bokeh_settings():
    """Bokeh's settings, as Bokeh had them again after the test (serve() fixes some)."""
    from bokeh.settings import settings

    yield settings
    for name in ("perform_document_validation", "perform_error_diagnostics", "simple_ids"):
        getattr(settings, name).unset_value()


def test_the_server_leaves_bokehs_developer_checks_to_the_test_suite(bokeh_settings):
    """Bokeh's document and callback checks cost every page 40 ms to open; the test suite runs
    them instead (tests/app/test_page_integrity.py). An operator's explicit setting wins."""
    checks = (bokeh_settings.perform_document_validation, bokeh_settings.perform_error_diagnostics)
    assert all(check() for check in checks)  # Bokeh's defaults
    cli.settle_bokeh_settings({})
    assert not any(check() for check in checks)
    assert bokeh_settings.simple_ids()  # as Bokeh's default, now read once

    for check in checks:
        check.unset_value()
    cli.settle_bokeh_settings({check.env_var: "true" for check in checks})
    assert all(check() for check in checks)


@pytest.mark.parametrize(
    "url", ["postgres://db:5432/x", "redis://", "redis:6379", "localhost:6379", "unix://"]
)
def test_a_class_store_url_the_lab_cannot_use_stops_it_by_name(url, capsys):
    with pytest.raises(SystemExit, match="ATTENTION_LAB_STORE=.* class store"):
        cli.panel_serve_args([], env={"ATTENTION_LAB_STORE": url})
    # A flag is refused as any bad flag is (argparse: exit 2), by the same reading.
    with pytest.raises(SystemExit) as exit_info:
        cli.panel_serve_args(["--store", url], env={})
    assert exit_info.value.code == 2 and "class store" in capsys.readouterr().err


def test_the_class_store_defaults_to_this_process():
    _, options = cli.panel_serve_args([], env={})
    assert options.store == "memory"
    _, options = cli.panel_serve_args(["--store", "unix:///run/redis.sock"], env={})
    assert options.store == "unix:///run/redis.sock"


def test_a_trusted_proxy_that_is_no_address_is_named():
    with pytest.raises(SystemExit, match="not-a-net"):
        cli.panel_serve_args(["--trusted-proxy", "not-a-net"], env={})
    args, options = cli.panel_serve_args([], env={})
    assert options.trusted_networks == [] and "--use-xheaders" not in args


def test_sessions_are_signed_with_the_deployments_secret_or_one_made_for_the_process():
    env = {}
    assert cli.settle_secret(env) and len(env["BOKEH_SECRET_KEY"]) >= cli.MIN_SECRET_CHARS
    assert env["BOKEH_SIGN_SESSIONS"] == "true"
    shared = {"ATTENTION_LAB_SECRET_KEY": "s" * 40}
    assert not cli.settle_secret(shared)
    assert shared["BOKEH_SECRET_KEY"] == "s" * 40 and "ATTENTION_LAB_SECRET_KEY" not in shared
    with pytest.raises(cli.ConfigError, match="at least 32"):
        cli.settle_secret({"ATTENTION_LAB_SECRET_KEY": "short"})


# Texts offered to every option, by flag and by variable: each must be taken by both or by neither.
PROBES = [
    "0",
    "1",
    "-1",
    "7200",
    "70000",
    "abc",
    "yes",
    "INFO",
    "memory",
    "redis://r:6379/0",
    "a,b",
]


@pytest.mark.parametrize("option", [o for o in OPTIONS if o.kind != "switch"], ids=lambda o: o.dest)
def test_a_flag_and_its_variable_take_the_same_values(option, tmp_path, capsys):
    """One reading per option (app/server/options.py): --session-token-expiration took 0 while
    its variable refused it."""

    def taken(argv, env) -> bool:
        try:
            cli.panel_serve_args([*argv, "--allow-websocket-origin", "x"], env=env)
        except SystemExit:
            capsys.readouterr()
            return False
        return True

    for text in [*PROBES, str(tmp_path)]:
        by_flag = taken([option.flag, text], {})
        by_variable = taken([], {option.env: text})
        assert by_flag == by_variable, (option.flag, text, by_flag, by_variable)


def test_the_token_expiration_takes_no_zero_from_a_flag_either(capsys):
    with pytest.raises(SystemExit):
        cli.panel_serve_args(["--session-token-expiration", "0"], env={})
    assert "must be >= 1" in capsys.readouterr().err
