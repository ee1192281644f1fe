"""A slow, failing or missing torch backend never freezes the page: the lab falls back to NumPy
and says so.

Each case runs a real `attention-lab` through a small launcher written into the test's tmp_path.
The launcher reads one environment variable and, before handing over to the lab's own CLI,
either holds every torch attention call for minutes, makes it raise, or hides torch from
imports altogether. The app itself is untouched: the fault sits where a real one would (a hung
device, a crashing kernel, a machine without the torch wheel). In Chromium the student picks
torch-cpu; the page must answer with NumPy's weights and a visible notice, and keep answering
the controls. A last, state-only test pins the rule the slow case relies on: while an overdue
torch call runs, no new one is queued behind it, and torch is used again once it ends.
"""

from __future__ import annotations

import os
import sys
import textwrap
from urllib.parse import parse_qs

import numpy as np
import pytest
from browser.labpage import page_wait_until
from labserver import (
    ROOT,
    WEIGHTS_JS,
    clean_env,
    free_port,
    move_temperature_until_it_answers,
    open_lab_page,
    start_lab,
)

from app.state.lab_state import LabState

FAULT_ENV = "ATTENTION_LAB_TEST_TORCH_FAULT"
INJECTED = "injected by the test: the torch kernel crashed"
LAUNCHER = textwrap.dedent(
    f'''
    """Test-only launcher: the lab with its torch backend slow, failing or missing."""
    import os
    import sys
    import threading

    FAULT = os.environ.pop({FAULT_ENV!r})


    class NoTorch:
        """A meta path finder that makes `import torch` fail as on a machine without it."""

        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None


    if FAULT == "missing":
        sys.meta_path.insert(0, NoTorch())

    import app.state.pipeline

    if FAULT == "slow":
        # Held for minutes; released when the server shuts down (threading
        # runs these hooks newest first, so before the torch pool waits for its workers).
        release = threading.Event()
        threading._register_atexit(release.set)

        def slow_torch(*args, **kwargs):
            print("slow torch call started", file=sys.stderr, flush=True)
            release.wait(600)
            raise RuntimeError("released at shutdown")

        app.state.pipeline._torch_attention = slow_torch
    elif FAULT == "failing":

        def failing_torch(*args, **kwargs):
            raise RuntimeError({INJECTED!r})

        app.state.pipeline._torch_attention = failing_torch
    elif FAULT != "missing":
        raise SystemExit(f"unknown fault {{FAULT!r}}")

    from app.server.cli import main

    main(sys.argv[1:])
    '''
)
# Bokeh draws a Select as a <select> (inside a shadow root, which Playwright's CSS pierces).
BACKEND_OPTION_JS = """() => {
  const options = [];
  const walk = root => {
    for (const el of root.querySelectorAll('*')) {
      if (el.tagName === 'OPTION' && el.textContent.trim().startsWith('torch-cpu'))
        options.push(el.textContent.trim());
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return options;
}"""
NOTICES = {
    # The slow call never holds the page: it says torch is at work and shows numpy meanwhile.
    "slow": "torch-cpu is computing this change",
    "failing": f"torch-cpu failed (RuntimeError: {INJECTED}); showing numpy",
    "missing": "torch-cpu is not available here (torch is not installed",
}
LATER_NOTICES = NOTICES


@pytest.fixture
def faulty_lab(request, tmp_path):
    """A running lab whose torch backend has the fault named by the test's parameter."""
    fault = request.param
    if fault != "missing":
        pytest.importorskip("torch")  # the fault is injected into a working torch backend
    launcher = tmp_path / "faulty_lab.py"
    launcher.write_text(LAUNCHER)
    port = free_port()
    pythonpath = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = clean_env({FAULT_ENV: fault, "PYTHONPATH": pythonpath})
    server = start_lab(
        ["--no-show", "--port", str(port)],
        port,
        tmp_path / "lab.log",
        env=env,
        command=[sys.executable, str(launcher)],
    )
    yield fault, server
    server.stop()


def _pick_backend(page, label: str) -> None:
    page.locator("select").filter(has_text=label).first.select_option(label=label)


def _wait_for_text(page, text: str, timeout_s: float = 60.0) -> str:
    """The visible element holding `text` (shadow roots included); its whole text."""
    found = page.get_by_text(text, exact=False)

    def visible_text():
        for i in range(found.count()):
            if found.nth(i).is_visible():
                return found.nth(i).inner_text()
        return None

    return page_wait_until(page, visible_text, f"the page to show {text!r}", timeout_s)


@pytest.mark.server
@pytest.mark.browser
@pytest.mark.parametrize(
    "faulty_lab",
    [
        pytest.param("slow", marks=pytest.mark.torch),
        pytest.param("failing", marks=pytest.mark.torch),
        "missing",
    ],
    indirect=True,
)
def test_torch_fault_falls_back_to_numpy_with_a_notice(chromium, faulty_lab):
    fault, server = faulty_lab
    numpy_weights = LabState(scenario="contest").snapshot.weights
    context = chromium.new_context(viewport={"width": 1600, "height": 1000})
    try:
        page = open_lab_page(context, f"{server.base}/app?scenario=contest")
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        assert page.evaluate(WEIGHTS_JS) == pytest.approx(numpy_weights, abs=1e-6)
        page.locator("button.lab-disclosure").click()  # the backend is in "More settings"
        page.get_by_text("Backend", exact=True).first.wait_for(state="visible", timeout=30_000)

        labels = page.evaluate(BACKEND_OPTION_JS)
        if fault == "missing":
            # The picker and a note say so before anyone picks it.
            assert labels == ["torch-cpu (not available here)"], labels
            note = _wait_for_text(page, "is not available here: torch is not installed")
            assert "torch-cpu" in note, note
        else:
            assert labels == ["torch-cpu"], labels
        _pick_backend(page, labels[0])

        # The page answers at once (the slow backend is held for minutes), with NumPy's
        # weights and a visible line naming what happened or what is still running.
        notice = _wait_for_text(page, NOTICES[fault])
        assert "Traceback" not in notice, notice
        assert page.evaluate(WEIGHTS_JS) == pytest.approx(numpy_weights, abs=1e-6)
        page.wait_for_function("() => location.search.includes('backend=torch-cpu')")

        # Still on torch-cpu (still faulty), the controls keep working on NumPy.
        # Each move waits for its own answer, drawn and in the address (not an earlier one).
        for log10_t in (0.5, -0.3):
            moved, _ = move_temperature_until_it_answers(page, log10_t, "contest")
            assert sum(moved) == pytest.approx(1.0, abs=1e-5)
        shown = np.array(page.evaluate(WEIGHTS_JS))
        # The address bar holds the state's exact temperature (the slider's is rounded).
        page.wait_for_function("() => location.search.includes('temperature=')")
        query = parse_qs(page.evaluate("() => location.search").lstrip("?"))
        temperature = float(query["temperature"][0])
        assert query["backend"] == ["torch-cpu"], query
        expected = LabState(scenario="contest", temperature=temperature).snapshot.weights
        assert shown == pytest.approx(expected, abs=1e-5)
        assert _wait_for_text(page, LATER_NOTICES[fault])
        assert page.get_by_text("Traceback").count() == 0
        assert not errors, errors
    finally:
        context.close()
    log = server.log()
    assert "Traceback" not in log, log[-3000:]
    if fault == "slow":
        # While the held call runs, later changes wait as one queued call instead of starting
        # torch calls of their own.
        assert log.count("slow torch call started") == 1, log[-3000:]
