"""Security promises of the served lab that need more than one HTTP request.

- Text a user controls (labels in a link, a bad value echoed in a warning) reaches the page as
  text: injected markup creates no element and runs no script.
- Nothing a user sends can reach eval/exec/pickle: the app and engine never call them.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from urllib.parse import urlencode

import pytest
from browser.labpage import server_round_trip
from labserver import ROOT, open_lab_page

MARKUP_LABEL = '<b id="injected">A</b>'
SCRIPT_LABEL = '<img src=x onerror="window.__pwned = 1">'
BAD_VALUE = '<img src=y onerror="window.__pwned = 2">'
BANNED_CALLS = {"eval", "exec", "compile", "__import__"}
BANNED_MODULES = {"pickle", "cPickle", "marshal", "shelve", "dill", "cloudpickle", "yaml"}


def _open_lab(chromium, lab, query: dict[str, str], check) -> None:
    """Load the lab with `query` in a fresh context of the shared Chromium; run `check(page)`."""
    context = chromium.new_context()
    try:
        check(open_lab_page(context, f"{lab.base}/app?{urlencode(query)}"))
    finally:
        context.close()


@pytest.mark.browser
@pytest.mark.server
def test_labels_from_a_link_are_shown_as_text(chromium, lab):
    def check(page):
        # Label A names the leading key in the summary line: it must appear literally.
        page.get_by_text(MARKUP_LABEL, exact=False).first.wait_for(timeout=60_000)
        server_round_trip(page)  # whatever else the labels were going to draw has arrived
        # CSS locators pierce Panel's open shadow roots.
        assert page.locator("#injected").count() == 0, "a label was rendered as HTML"
        assert page.locator("img[src='x']").count() == 0, "a label was rendered as HTML"
        assert page.evaluate("() => window.__pwned") is None, "a label ran a script"
        # The summary names it exactly: neither rendered nor shown as escaped entities.
        summary = page.locator(".lab-summary").inner_text()
        assert summary.startswith(f"{MARKUP_LABEL} gets "), summary

    _open_lab(chromium, lab, {"labels": json.dumps([MARKUP_LABEL, SCRIPT_LABEL, "C"])}, check)


@pytest.mark.browser
@pytest.mark.server
def test_a_bad_link_value_is_named_as_text_in_the_warning(chromium, lab):
    def check(page):
        # The invalid value is named in the link's warnings, which must show it, not render it.
        page.locator(".lab-link-list li").first.wait_for(timeout=60_000)
        server_round_trip(page)  # whatever else the warning was going to draw has arrived
        assert page.locator("img[src='y']").count() == 0, "a URL value was rendered as HTML"
        assert page.evaluate("() => window.__pwned") is None, "a URL value ran a script"
        messages = " ".join(page.locator(".lab-link-list li").all_inner_texts())
        assert "temperature" in messages and "onerror" in messages, messages

    _open_lab(chromium, lab, {"temperature": BAD_VALUE}, check)


def _python_files() -> list[Path]:
    return sorted(p for folder in ("app", "engine") for p in (ROOT / folder).rglob("*.py"))


def test_no_eval_exec_or_unpickling_anywhere_in_the_app_or_engine():
    offenders = []
    for path in _python_files():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id in BANNED_CALLS:
                    offenders.append(f"{where} calls {node.func.id}()")
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in BANNED_MODULES:
                        offenders.append(f"{where} imports {alias.name}")
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module.split(".")[0] in BANNED_MODULES:
                    offenders.append(f"{where} imports from {node.module}")
    assert not offenders, offenders


def test_the_scan_above_would_catch_a_violation(tmp_path):
    # The scan must be able to fail: feed it a file that breaks each rule.
    sample = "import pickle\nfrom yaml import load\nx = eval('1')\nexec('y = 2')\n"
    tree = ast.parse(sample)
    calls = [n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call)]
    imports = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    froms = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert set(calls) <= BANNED_CALLS and len(calls) == 2
    assert imports == ["pickle"] and froms == ["yaml"]
    assert {"pickle", "yaml"} <= BANNED_MODULES
