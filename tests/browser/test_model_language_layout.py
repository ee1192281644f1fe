"""The trained-model page in the long pseudo-locale, in Chromium (issue 44): with the head grid
drawn, an experiment run and the Causal map measured and patched, every visible text of the
page, the hidden plots in words included, carries the `x-long` markers (so none escaped the
catalogue), and none is clipped, at a laptop's 1366x768 and a phone's 390x844.

Exempt from the markers, as on the first screen (test_language_layout.py): text with no word
of two Latin letters (numbers, head tags such as L1 H1), formulas; and the model's data, never
translated: its tokens as labels ("approved_limit @1"), the programs it reads, and a typed or
suggested changed sentence.
"""

from __future__ import annotations

import re

import pytest

from app.i18n.pseudo_locales import OPEN
from app.i18n.translator import Translator
from engine import trained

from . import marked_text
from .labpage import LOADED, page_wait_until, wait_until_settled

pytestmark = pytest.mark.browser

SIZES = ((1366, 768), (390, 844))
X_LONG = Translator("x-long").gettext  # the names the page shows, to find its buttons by
ROWS = (
    "n => { const s = Bokeh.documents[0].get_model_by_name(n); return s ? s.data.layer.length : 0 }"
)
# A token as the planes and tables label it, after a symbol where a table names a vector of
# it (the Jacobian's "s approved_limit @1", "w <bos> @0"): data.
TOKEN_LABEL = re.compile(r"^(?:[a-z] )?\S+ @\d+$")


def _model_data() -> set[str]:
    """The binding model's own words: its answers ("none" too), names and example programs."""
    model = trained.load("binding")
    return {*model.answers, *model.names, *model.examples.values()}


def _problems(page, stage: str) -> list[str]:
    """What escaped the catalogue or is clipped on the page as it is now."""
    wait_until_settled(page)
    return marked_text.problems(page, stage, data=_model_data(), is_data=TOKEN_LABEL.match)


def _walk(page) -> list[str]:
    """Draw the head grid, run an experiment, open the Causal map: measure, then patch; what
    each stage's page shows is checked as it stands (a tab's views leave with it)."""
    for button in page.locator(".lab-deferred button").all():
        if button.is_visible():
            button.click()
    page_wait_until(page, lambda: page.evaluate(ROWS, "head_grid") > 0, "the head grid")
    problems = _problems(page, "grid")
    tabs = page.locator(".lab-teaching .bk-tab")
    tabs.nth(1).click()
    page.get_by_role("button", name=X_LONG("Run"), exact=True).first.click()
    rows = page.locator("table.lab-experiments tr.run")
    page_wait_until(page, lambda: rows.count() == 1, "the experiment's row")
    edit = rows.first.locator("td").nth(2).inner_text()
    assert edit.startswith(OPEN), f"the experiment's edit is not translated: {edit!r}"
    problems += _problems(page, "experiments")
    tabs.nth(2).click()
    page_wait_until(page, lambda: page.evaluate(ROWS, "receipt") > 0, "the receipt", 60)
    page.get_by_role("button", name=X_LONG("Measure every head"), exact=True).click()
    page_wait_until(page, lambda: page.evaluate(ROWS, "causal_map") > 0, "the causal map", 60)
    patch = page.get_by_role("button", name=X_LONG("Patch every head"), exact=True)
    page_wait_until(page, patch.is_enabled, "a suggested change to patch into")
    patch.click()
    page_wait_until(page, lambda: page.evaluate(ROWS, "patching_map") > 0, "the patching map", 60)
    return problems + _problems(page, "causal map")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_model_pages_are_marked_and_unclipped_in_x_long(chromium, lab_server, size):
    page = chromium.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        page.goto(lab_server.url + "?model=binding&lang=x-long")
        page.wait_for_function(LOADED, timeout=30000)
        wait_until_settled(page)
        problems = _walk(page)
        assert not problems, f"{size}: " + "\n".join(problems[:15])
    finally:
        page.close()
