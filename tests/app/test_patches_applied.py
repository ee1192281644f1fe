"""The process-wide patches are applied in one place, once: `app.patches.apply_all()`, which the
server calls at start. Importing the app applies none of them (docs/patches.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import app.patches
from app.patches import (
    PROCESS_WIDE,
    apply_all,
    bokeh_owners,
    bokeh_speedups,
    panel_design,
    panel_events,
    panel_location,
    panel_markdown,
    panel_panes,
    panel_params,
    panel_resources,
    param_watchers,
    server_routes,
)

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


def test_apply_all_applies_each_patch_once(monkeypatch):
    monkeypatch.setattr(app.patches, "_applied", None)  # as in a process that has applied none
    calls = []

    def counted(module, name):
        original = getattr(module, name)

        def count():
            calls.append(name)
            return original()

        monkeypatch.setattr(module, name, count)

    counted(bokeh_speedups, "apply")
    counted(panel_resources, "load_mathjax_only_for_tex")
    counted(panel_design, "cache_design_modifiers")
    counted(panel_markdown, "cache_markdown_html")
    counted(panel_location, "read_addresses_as_browsers_do")
    counted(server_routes, "send_updates_without_delay")
    counted(panel_events, "clicks_under_the_document_lock")
    counted(panel_panes, "pane_layouts_on_demand")
    counted(bokeh_owners, "owners_in_tuples")
    counted(param_watchers, "compact_instance_watchers")
    counted(panel_design, "style_text_panes_as_their_updates_do")
    counted(panel_markdown, "update_text_panes_with_their_text")
    counted(panel_params, "read_parameters_once")
    counted(panel_resources, "serve_stylesheets_from_this_server")
    first = apply_all()
    assert apply_all() == first == dict.fromkeys(PROCESS_WIDE, True)
    assert sorted(calls) == sorted(
        [
            "apply",
            "load_mathjax_only_for_tex",
            "cache_design_modifiers",
            "cache_markdown_html",
            "read_addresses_as_browsers_do",
            "send_updates_without_delay",
            "clicks_under_the_document_lock",
            "pane_layouts_on_demand",
            "owners_in_tuples",
            "compact_instance_watchers",
            "style_text_panes_as_their_updates_do",
            "update_text_panes_with_their_text",
            "read_parameters_once",
            "serve_stylesheets_from_this_server",
        ]
    )


def test_the_load_tools_python_students_decode_with_the_bokeh_speedups():
    # tools/classload.py stands in for a class of browsers in one Python process on the
    # server's machine; without the speedups it cost about 3x the CPU and skewed the figures.
    found = _fresh_process("from tools import classload\nclassload.register_models()\n")
    assert found["bokeh_speedups"] is True
    assert found["websocket_nodelay"] is False  # a client: the server's route table is not its
