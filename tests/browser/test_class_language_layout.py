"""A class in the x-long pseudo-locale, in Chromium (issue 44): the teacher's join panel, the
teacher's screen and a student's screen, at a laptop's 1366x768 and a phone's 390x844. Every
visible text node carries the markers (so none escaped the catalogue) and none is clipped by its
box or the window.

Exempt from the markers, by design: the class code and the address the panel shows (its QR is
an image), text with no word of two Latin letters (numbers, tokens A, B, q, formulas such as
w·v), the formulas written in words (softmax, d_k), and the language menu's own names. Text a
screen reader alone reads (a visually hidden table, a live region) is not looked at: it is not
laid out to be seen.
"""

from __future__ import annotations

import pytest

from . import marked_text
from .labpage import LOADED, wait_until_settled
from .test_class_browser import open_join_panel

pytestmark = pytest.mark.browser

SIZES = ((1366, 768), (390, 844))
EXEMPT = ".lab-join-code, .lab-join-link"


def check_at_every_size(page, screen: str, root: str = "body") -> int:
    """Assert the text under `root` is marked and unclipped at each size; the texts seen."""
    seen = 0
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        wait_until_settled(page)
        stage = f"{screen} {width}x{height}"
        problems = marked_text.problems(page, stage, root=root, exempt=EXEMPT)
        assert not problems, "\n".join(problems[:10])
        seen += len(marked_text.shown_texts(page, root, EXEMPT)["texts"])
    return seen


def open_page(chromium, url: str):
    """A page opened at the first size (a page narrowed from a wider window is not the case
    looked at here), loaded and settled."""
    page = chromium.new_page(viewport={"width": SIZES[0][0], "height": SIZES[0][1]})
    page.goto(url)
    page.wait_for_function(LOADED, timeout=30000)
    return page


def test_a_class_in_x_long_is_marked_and_unclipped_for_teacher_and_student(chromium, lab_server):
    page = open_page(chromium, lab_server.url + "?lang=x-long")
    student = None
    try:
        code = open_join_panel(page)
        assert "lang=x-long" in page.url  # the class keeps the teacher's language
        # The join panel is a modal over the page: its text alone is what the projector shows.
        join_texts = check_at_every_size(page, "the join panel", "#pn-Modal")
        page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
        start = page.locator(".lab-join-start button")
        start.click()
        start.wait_for(state="hidden", timeout=30000)
        page.locator(".lab-class-teaching").wait_for(state="visible", timeout=30000)
        teacher_texts = check_at_every_size(page, "the teacher's screen")

        student = open_page(chromium, lab_server.url + f"?class={code}&lang=x-long")
        student.locator(".lab-class-status").wait_for(state="visible", timeout=30000)
        student_texts = check_at_every_size(student, "a student's screen")
        assert join_texts >= 8 and min(teacher_texts, student_texts) > 60  # whole screens read
    finally:
        for opened in (page, student):
            if opened is not None:
                opened.close()
