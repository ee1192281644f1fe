"""The operator's model files on the command line and on a served page (issue 43): `--model PATH`
and `--model NAME=PATH`, `ATTENTION_LAB_MODELS`, `--max-model-mb`, the start-up errors that name
the file, and a real `attention-lab` process whose page opens a listed random file by
`?model=NAME`, shows a truncated file's error in its place, and opens no path a visitor types.
"""

from __future__ import annotations

import html
import os
import shlex

import pytest

pytest.importorskip("gguf")
pytest.importorskip("tokenizers")

from labserver import http_get, open_session  # noqa: E402
from waiting import wait_until  # noqa: E402

from app.server import cli  # noqa: E402
from app.server.cli import panel_serve_args  # noqa: E402
from engine import trained  # noqa: E402
from engine.trained import files  # noqa: E402
from engine.trained.random_gguf import write_random  # noqa: E402
from tools.harness import serve_lab  # noqa: E402

pytestmark = pytest.mark.server


@pytest.fixture
def gguf_files(tmp_path):
    """Two tiny random files, one with a space and a comma in its folder's name."""
    odd = tmp_path / "my models, v2"
    odd.mkdir()
    return (
        write_random(tmp_path / "tiny-llama.gguf", "llama", seed=3),
        write_random(odd / "small gpt2.gguf", "gpt2", seed=4),
    )


def _names(options) -> list[tuple[str, str]]:
    return [(entry.name, str(entry.path)) for entry in options.model_files]


def test_model_files_from_the_flags_or_the_environment(gguf_files):
    llama, gpt2 = gguf_files
    _, options = panel_serve_args(["--model", str(llama), "--model", f"gpt2={gpt2}"], env={})
    assert _names(options) == [("tiny-llama", str(llama)), ("gpt2", str(gpt2))]
    listed = os.pathsep.join([f"gpt2={gpt2}", str(llama)])
    _, options = panel_serve_args([], env={"ATTENTION_LAB_MODELS": listed})
    assert _names(options) == [("gpt2", str(gpt2)), ("tiny-llama", str(llama))]
    # A flag wins over the variable, which is then not read at all (a bad one is ignored).
    _, options = panel_serve_args(
        ["--model", str(llama)], env={"ATTENTION_LAB_MODELS": "/nowhere.gguf"}
    )
    assert _names(options) == [("tiny-llama", str(llama))]
    _, options = panel_serve_args([], env={})
    assert options.model_files == [] and options.max_model_mb is None


def test_the_limit_from_the_flag_or_the_environment():
    _, options = panel_serve_args(["--max-model-mb", "512"], env={})
    assert options.max_model_mb == 512.0
    _, options = panel_serve_args([], env={"ATTENTION_LAB_MAX_MODEL_MB": "1e4"})
    assert options.max_model_mb == 10000.0
    with pytest.raises(SystemExit, match="ATTENTION_LAB_MAX_MODEL_MB='-3' must be a positive"):
        panel_serve_args([], env={"ATTENTION_LAB_MAX_MODEL_MB": "-3"})


def test_the_documented_default_limit_is_the_engines():
    (option,) = [o for o in cli.OPTIONS if o.dest == "max_model_mb"]
    assert option.doc_default == f"`{trained.DEFAULT_MAX_MB:g}`" == f"`{option.help_default}`"


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ("{tmp}/absent.gguf", "names {tmp}/absent.gguf, which does not exist"),
        ("tiny={tmp}", "names {tmp}, which is not a file"),
        ("binding={llama}", "'binding' is the name of a model the lab ships"),
        ("no way={llama}", "'no way' cannot be a model's name"),
        ("{llama}" + os.pathsep + "tiny-llama={gpt2}", "the name 'tiny-llama' is taken by {llama}"),
    ],
)
def test_a_bad_entry_stops_the_start_up_naming_it(gguf_files, tmp_path, entry, says):
    llama, gpt2 = gguf_files
    values = {"tmp": tmp_path, "llama": llama, "gpt2": gpt2}
    entry, says = entry.format(**values), says.format(**values)
    with pytest.raises(SystemExit) as stopped:
        panel_serve_args([], env={"ATTENTION_LAB_MODELS": entry})
    assert says in str(stopped.value) and "ATTENTION_LAB_MODELS" in str(stopped.value)


def test_a_missing_file_on_the_command_line_is_an_error_naming_it(tmp_path, capsys):
    with pytest.raises(SystemExit):
        panel_serve_args(["--model", str(tmp_path / "gone.gguf")], env={})
    assert f"names {tmp_path / 'gone.gguf'}, which does not exist" in capsys.readouterr().err


def test_the_printed_command_carries_the_files_to_the_served_script(gguf_files, capsys):
    llama, gpt2 = gguf_files
    cli.main(
        [
            "--print-command",
            "--model",
            str(llama),
            "--model",
            f"gpt2={gpt2}",
            "--max-model-mb",
            "64",
        ]
    )
    words = shlex.split(capsys.readouterr().out)
    listed = os.pathsep.join([f"tiny-llama={llama}", f"gpt2={gpt2}"])
    assert words[:2] == [f"ATTENTION_LAB_MODELS={listed}", "ATTENTION_LAB_MAX_MODEL_MB=64"]
    assert words[2:4] == ["panel", "serve"]


def test_the_served_script_lists_the_environments_files_once(gguf_files, monkeypatch):
    llama, gpt2 = gguf_files
    monkeypatch.setitem(cli._MODEL_FILES, "settled", False)
    env = {"ATTENTION_LAB_MODELS": f"gpt2={gpt2}", "ATTENTION_LAB_MAX_MODEL_MB": "64"}
    try:
        cli.models_from_environment(env)
        assert [entry.name for entry in files.listed()][-1:] == ["gpt2"] and files.max_mb() == 64
        cli.models_from_environment({"ATTENTION_LAB_MODELS": str(llama)})  # settled: no change
        assert "tiny-llama" not in {entry.name for entry in files.listed()}
    finally:
        trained.remove_file("gpt2")
        trained.set_max_mb(trained.DEFAULT_MAX_MB)


# ------------------------------------------------------------------------------ a served page


def _shown(doc) -> dict:
    """What a page shows: the model menu's (name, title) choices and its choice, its words and
    the weights' labels."""
    menus = [
        m
        for m in doc.models
        if type(m).__name__ == "CustomSelect" and ["binding"] in [o[:1] for o in m.options]
    ]
    weights = doc.select_one({"name": "weights"})
    texts = [getattr(m, "text", None) for m in doc.models]
    return {  # (no menu: a page showing the hand-made vectors builds its model panel later)
        "menu": [tuple(option) for option in menus[0].options] if menus else [],
        "chosen": menus[0].value if menus else None,
        "words": html.unescape(" ".join(t for t in texts if isinstance(t, str))),
        "labels": [] if weights is None else list(weights.data["label"]),
    }


def _opened(url: str, arguments: dict[str, str], until, what: str) -> dict:
    """What a page opened for a link shows once `until(shown)` holds: a page opens on what the
    server has loaded so far, so a new page is opened until one shows it."""
    return wait_until(
        lambda: (lambda s: s if until(s) else None)(open_session(url, arguments, _shown)),
        what,
        timeout=60,
        interval=0.2,
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A lab listing a random llama file as `tiny` (preloaded by that name) and a truncated
    copy of it as `cut`."""
    folder = tmp_path_factory.mktemp("served")
    tiny = write_random(folder / "tiny.gguf", "llama", seed=5)
    cut = folder / "cut.gguf"
    cut.write_bytes(tiny.read_bytes()[:4000])
    listed = ("--model", str(tiny), "--model", f"cut={cut}")
    server = serve_lab(folder / "lab.log", *listed, "--preload", "tiny")
    yield server, tiny
    server.stop()


def _title(name: str) -> str:
    return {n: title for n, title, *_ in trained.available()}[name]


def test_a_link_opens_a_listed_file_by_its_name(served, tmp_path):
    server, tiny = served
    trained.add_file(tiny, "tiny")  # in this process too, for its title and its tokens
    try:
        title = _title("tiny")
        tokens = trained.load(tiny).run(next(iter(trained.load(tiny).examples.values()))).tokens
    finally:
        trained.remove_file("tiny")
    shown = _opened(
        server.url,
        {"model": "tiny"},
        lambda s: s["chosen"] == "tiny" and len(s["labels"]) == len(tokens),
        "the page to draw tiny's own example",
    )
    assert shown["menu"][2:] == [("tiny", title), ("cut", "cut (GGUF file)")]
    assert "could not be loaded" not in shown["words"]


def test_a_truncated_files_error_is_shown_and_the_page_goes_on(served):
    server, _ = served
    shown = _opened(
        server.url,
        {"model": "cut"},
        lambda s: "could not be loaded" in s["words"],
        "the truncated file's error on the page",
    )
    assert "cut.gguf" in shown["words"]  # the message names the file
    assert shown["labels"], "the page lost the head it drew meanwhile"


@pytest.mark.parametrize("typed", ["/etc/passwd", "../tiny.gguf", "tiny.gguf", "{tiny}"])
def test_a_path_a_visitor_types_is_an_unknown_model(served, typed):
    server, tiny = served
    typed = typed.format(tiny=tiny)
    shown = _opened(
        server.url,
        {"model": typed},
        lambda s: "is not one of" in s["words"],
        "the page to name the unknown model",
    )
    assert shown["chosen"] in (None, "binding")
    assert "could not be loaded" not in shown["words"]  # nothing was opened to fail
    log = server.log()
    assert "Traceback" not in log, log[-3000:]


def test_the_bare_address_keeps_the_links_query(served):
    """A link typed as host/?model=tiny reaches the page with its query (Bokeh's own root
    redirect dropped it, and the page opened on the first screen)."""
    server, _ = served
    status, headers, _ = http_get(f"{server.base}/?model=tiny&lesson=12")
    assert status == 302 and headers["Location"] == "./app?model=tiny&lesson=12"
    status, headers, _ = http_get(f"{server.base}/")
    assert status == 302 and headers["Location"] == "./app"
    status, headers, _ = http_get(f"{server.base}/?" + "x" * 20000)
    assert status == 302 and len(headers["Location"]) == len("./app?") + 8192
