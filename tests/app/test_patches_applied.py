"""The process-wide patches are applied in one place, once: `app.patches.apply_all()`, which the
server calls at start. Importing the app applies none of them (docs/patches.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import app.patches
from app.patches import FIXES, PROCESS_WIDE, apply_all, choose, installers, summary, undo_all

ROOT = Path(__file__).resolve().parents[2]

# Prints, for each process-wide patch, whether it is in this process.
REPORT = """
import json
from bokeh.core.has_props import HasProps
from bokeh.server.urls import per_app_patterns
from panel.io import resources
from panel.io import location
from panel.pane.markup import Markdown
from panel.theme.base import Design
from panel.reactive import Syncable
from panel.pane.base import PaneBase
from panel.pane.markup import HTMLBasePane
from bokeh.core.property.wrappers import PropertyValueContainer
from param.parameterized import Parameters
print(json.dumps({
    "bokeh_speedups": HasProps.query_properties_with_values.__module__ != "bokeh.core.has_props",
    "mathjax_only_for_tex": resources._panel_use_mathjax.__module__ != "panel.io.resources",
    "design_modifiers_once": getattr(Design._get_modifiers, "lab_cached", False),
    "markdown_html_once": getattr(Markdown._transform_object, "lab_cached", False),
    "any_address_opens": location._get_location_params.__module__ != "panel.io.location",
    "websocket_nodelay": any(getattr(h, "sets_nodelay", False) for _, h, *_ in per_app_patterns),
    "clicks_under_the_lock": getattr(Syncable._server_event, "_lab_locked", False),
    "pane_layouts_on_demand": getattr(PaneBase.__init__, "lab_lazy_layout", False),
    "owners_in_tuples": PropertyValueContainer._register_owner.__module__ != "bokeh.core.property.wrappers",
    "compact_instance_watchers": Parameters._register_watcher.__module__ != "param.parameterized",
    "text_panes_styled_once": getattr(Design._apply_modifiers, "lab_text_panes", False),
    "text_panes_send_their_text": getattr(HTMLBasePane._update, "lab_text_only", False),
    "parameters_read_once": Syncable._init_params.__module__ != "panel.reactive",
    "stylesheets_from_this_server": hasattr(resources.patch_stylesheet, "lab_original"),
}))
"""


def _fresh_process(code: str) -> dict:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    out = subprocess.run(
        [sys.executable, "-c", code + REPORT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_importing_the_page_and_the_server_applies_no_patch():
    found = _fresh_process(
        "import app.page.lab_page, app.server.cli, app.server.class_routes, app.views.controls\n"
        "from app.page.lab_page import create_app\n"
    )
    assert found == dict.fromkeys(PROCESS_WIDE, False)


def test_apply_all_applies_every_process_wide_patch():
    found = _fresh_process("from app.patches import apply_all\nassert all(apply_all().values())\n")
    assert found == dict.fromkeys(PROCESS_WIDE, True)


def test_the_table_of_installers_names_every_process_wide_patch_in_order():
    assert tuple(installers()) == PROCESS_WIDE


def test_apply_all_applies_each_patch_once(monkeypatch):
    calls = []
    table = installers()

    def counted(name):
        def count():
            calls.append(name)
            return table[name]()

        return count

    monkeypatch.setattr(app.patches, "installers", lambda: {n: counted(n) for n in table})
    undo_all()  # as in a process that has applied none
    try:
        first = apply_all()
        assert apply_all() == first == dict.fromkeys(PROCESS_WIDE, True)
        assert calls == list(PROCESS_WIDE)
    finally:
        apply_all()


def test_the_environment_chooses_which_patches_apply():
    found = _fresh_process(
        "import os\nos.environ['ATTENTION_LAB_PATCHES'] = 'none'\n"
        "from app.patches import apply_all, summary\n"
        "assert not any(apply_all().values())\nassert summary() == 'patches: none'\n"
    )
    assert found == dict.fromkeys(PROCESS_WIDE, False)
    found = _fresh_process(
        "import os\nos.environ['ATTENTION_LAB_PATCHES'] = 'any_address_opens, bokeh_speedups'\n"
        "from app.patches import apply_all, summary\napply_all()\n"
        "assert summary() == 'patches: bokeh_speedups, any_address_opens', summary()\n"
    )
    assert found == {name: name in ("any_address_opens", "bokeh_speedups") for name in found}


def test_undo_all_leaves_panel_bokeh_and_param_as_they_ship():
    found = _fresh_process("from app.patches import apply_all, undo_all\napply_all()\nundo_all()\n")
    assert found == dict.fromkeys(PROCESS_WIDE, False)


def test_a_choice_is_all_none_or_names():
    assert choose("") == choose("all") == choose(" ALL ") == PROCESS_WIDE
    assert choose("none") == ()
    assert choose("fixes") == FIXES and set(FIXES) < set(PROCESS_WIDE)
    assert choose("owners_in_tuples,bokeh_speedups") == ("bokeh_speedups", "owners_in_tuples")
    for bad in ("nothing", "none,bokeh_speedups", "all,none", "fixes,none", "bokeh-speedups"):
        with pytest.raises(ValueError, match="names no patch"):
            choose(bad)


def test_the_summary_names_a_patch_skipped_on_another_source(monkeypatch):
    monkeypatch.setattr(app.patches, "_chosen", ("bokeh_speedups", "any_address_opens"))
    monkeypatch.setattr(app.patches.replace, "is_in", lambda name: name == "bokeh_speedups")
    assert summary() == (
        "patches: bokeh_speedups (skipped, not the source read: any_address_opens)"
    )


def test_the_load_tools_python_students_decode_with_the_bokeh_speedups():
    # tools/classload.py stands in for a class of browsers in one Python process on the
    # server's machine; without the speedups it cost about 3x the CPU and skewed the figures.
    found = _fresh_process("from tools import classload\nclassload.register_models()\n")
    assert found["bokeh_speedups"] is True
    assert found["websocket_nodelay"] is False  # a client: the server's route table is not its
