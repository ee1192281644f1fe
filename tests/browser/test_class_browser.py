"""A class in Chromium on one server (the in-process store): the teacher starts it from the
header, students join by link and by typing the code, follow the teacher's steps and vote; the
teacher's chart counts them and the reveal reaches every student. Each page is its own browser
context, so each has its own cookies, as separate devices do."""

from __future__ import annotations

import pytest

from app.views.lesson_panel import ALL_LESSONS

from .labpage import LOADED, READ_SOURCE, LabPage, press
from .test_plot_text import read_tables

pytestmark = pytest.mark.browser


def open_join_panel(page) -> str:
    """Press Teach a class on `page` and wait for the join panel; the class's code."""
    page.locator("button.lab-teach").click()
    page.wait_for_url("**/app?*class=*", timeout=30000)
    page.wait_for_function(LOADED, timeout=30000)
    code_box = page.locator(".lab-join-code")
    code_box.wait_for(state="visible", timeout=30000)
    return code_box.get_attribute("data-class-code")


def start_class(open_lab):
    teacher = open_lab("", more_settings=False)
    page = teacher.page
    code = open_join_panel(page)
    start = page.get_by_role("button", name="Start the lesson")
    start.click()
    # The server closes the join panel (a modal). Until it has, the modal holds the focus: a key
    # pressed on a button behind it goes nowhere (CI, under load, lost a "Load this step" so).
    start.wait_for(state="hidden", timeout=30000)
    return teacher, code


def wait_for_step(lab, number: int) -> None:
    shown = f"Step {number} of {len(ALL_LESSONS)}"
    lab.wait_until(lambda: lab.shows(shown), shown, 30)


def class_votes(lab) -> dict[str, list]:
    """The page's class_votes source, or {} before the page has built its chart."""
    return lab.page.evaluate(READ_SOURCE, "class_votes") or {}


def votes(lab) -> dict[str, int]:
    data = class_votes(lab)
    return dict(zip(data.get("choice", []), data.get("count", []), strict=True))


def test_a_class_from_the_teachers_button_to_the_reveal(open_lab):
    teacher, code = start_class(open_lab)
    cookies = {c["name"]: c for c in teacher.page.context.cookies()}
    key = cookies[f"alab_teach_{code}"]
    assert key["httpOnly"] and key["sameSite"] == "Lax"
    # The key is nowhere the projector or a script could show it.
    assert key["value"] not in teacher.page.evaluate("() => document.cookie")
    assert key["value"] not in teacher.page.url
    assert key["value"] not in teacher.page.evaluate("() => document.body.innerText")

    by_link = open_lab(f"?class={code}", more_settings=False)
    by_typing = open_lab("", more_settings=False)
    card = by_typing.page.locator(".lab-class-join")
    card.get_by_role("button").first.click()  # unfold "Join a class"
    by_typing.page.get_by_placeholder("e.g. ACE F47").fill(code.lower())
    by_typing.page.get_by_role("button", name="Join", exact=True).click()
    by_typing.wait_until(lambda: f"class={code}" in by_typing.search(), "the typed join", 30)
    students = (by_link, by_typing)
    for s in students:
        assert s.page.locator("button.lab-teach").is_hidden()
        assert s.page.get_by_role("button", name="Reveal to the class").count() == 0 or (
            s.page.get_by_role("button", name="Reveal to the class").is_hidden()
        )

    teacher.page.get_by_role("button", name="Load this step").click()
    teacher.page.get_by_role("button", name="Next ▶").click()
    for s in students:
        wait_for_step(s, 2)
        assert f"class={code}" in s.search() and "lesson=2" in s.search()
    step = ALL_LESSONS[1]
    right, wrong = step.choices[step.answer], step.choices[(step.answer + 1) % len(step.choices)]
    by_link.page.get_by_text(right, exact=True).click()
    by_typing.page.get_by_text(wrong, exact=True).click()
    teacher.wait_until(lambda: sum(votes(teacher).values()) == 2, "two votes on the chart", 30)
    assert votes(teacher)[right] == 1 and votes(teacher)[wrong] == 1
    assert not any(class_votes(teacher)["correct"])  # not before the reveal
    by_link.wait_until(lambda: by_link.shows("your prediction is counted"), "counted", 30)

    # A reload is the same student: the vote still counts once, and comes back checked.
    by_link.page.reload()
    by_link.page.wait_for_function(LOADED, timeout=30000)
    wait_for_step(by_link, 2)
    by_link.wait_until(lambda: by_link.shows("your prediction is counted"), "counted again", 30)
    assert sum(votes(teacher).values()) == 2
    assert (
        teacher.page.locator("[data-class-joined]").first.get_attribute("data-class-joined") == "2"
    )

    teacher.page.get_by_role("button", name="Reveal to the class").click()
    for s in students:
        s.wait_until(lambda s=s: any(class_votes(s).get("correct", [])), "the reveal", 30)
        assert votes(s) == votes(teacher)
        assert s.shows("The right answer is ticked.")
    # The chart in words (app/state/chart_tables.py): students per choice, the right one named.
    table = by_link.wait_until(
        lambda: read_tables(by_link.page).get("class_votes"), "the votes' table", 30
    )
    counted = {row[0]: int(row[1]) for row in table["rows"]}
    assert counted[f"{right} (right)"] == 1 and counted[wrong] == 1, counted
    assert f"The right answer is {right}." in table["caption"]


def test_lock_keeps_a_student_on_the_teachers_step(open_lab):
    teacher, code = start_class(open_lab)
    student = open_lab(f"?class={code}", more_settings=False)
    teacher.page.get_by_role("button", name="Load this step").click()
    wait_for_step(student, 1)
    teacher.page.get_by_role("button", name="Lock to this step").click()
    next_button = student.page.get_by_role("button", name="Next ▶")
    student.wait_until(lambda: next_button.is_disabled(), "Next to be locked", 30)
    assert student.shows("the teacher keeps the class on this step")
    teacher.page.get_by_role("button", name="Lock to this step").click()
    student.wait_until(lambda: next_button.is_enabled(), "Next to be free again", 30)


def test_a_wrong_code_in_a_link_is_named_and_the_lab_still_works(open_lab):
    lab = open_lab("?class=AAAAAA&temperature=0.5", more_settings=False)
    lab.wait_until(lambda: lab.shows("there is no class AAAAAA"), "the refusal", 30)
    assert "class=" not in lab.search() and "temperature=0.5" in lab.search()


def test_a_late_student_votes_on_the_step_they_land_on_and_it_counts(open_lab):
    """Issue #28's lost vote: the teacher is on step 2 before the student opens the link."""
    teacher, code = start_class(open_lab)
    next_button = teacher.page.get_by_role("button", name="Next ▶")
    where = next_button.bounding_box()
    press(teacher.page.get_by_role("button", name="Load this step"))
    teacher.wait_until(lambda: class_votes(teacher).get("count"), "the teacher's chart", 30)
    # The chart came, under the step's question: Next did not move under the pointer (CI once
    # clicked where it had been).
    assert next_button.bounding_box() == where
    next_button.click()
    wait_for_step(teacher, 2)
    late = open_lab(f"?class={code}", more_settings=False)
    wait_for_step(late, 2)
    step = ALL_LESSONS[1]
    late.page.get_by_text(step.choices[step.answer], exact=True).click()
    teacher.wait_until(lambda: sum(votes(teacher).values()) == 1, "the late vote on the chart", 30)
    late.wait_until(lambda: late.shows("your prediction is counted"), "counted", 30)


class _SameBrowser:
    """The same browser again (a phone that reopens the link): a context with the first tab's
    cookies, its student id among them."""

    def __init__(self, chromium, page):
        self.context = chromium.new_context(viewport={"width": 1600, "height": 1000})
        self.context.add_cookies(page.context.cookies())

    def new_page(self, **_options):
        return self.context.new_page()


def test_a_student_who_opens_the_link_again_sees_their_vote_and_a_change_counts_once(
    open_lab, lab_server, problems, chromium
):
    """Issue #28: a student whose replica died opens the class link again and changes the
    vote; here the same browser opens the link in a new tab, after the teacher moved on."""
    teacher, code = start_class(open_lab)
    teacher.page.get_by_role("button", name="Load this step").click()
    student = open_lab(f"?class={code}", more_settings=False)
    wait_for_step(student, 1)
    teacher.page.get_by_role("button", name="Next ▶").click()
    wait_for_step(student, 2)
    step = ALL_LESSONS[1]
    first, second = step.choices[0], step.choices[1]
    student.page.get_by_text(first, exact=True).click()
    teacher.wait_until(lambda: votes(teacher).get(first) == 1, "the first vote", 30)
    browser = _SameBrowser(chromium, student.page)
    again = LabPage(
        browser,
        f"{lab_server.url}?class={code}",
        problems,
        more_settings=False,
    )
    try:
        wait_for_step(again, 2)
        radio = again.page.get_by_role("radio", name=first)
        again.wait_until(radio.is_checked, "the kept vote shown as made", 30)
        again.wait_until(lambda: again.shows("your prediction is counted"), "counted", 30)
        again.page.get_by_text(second, exact=True).click()
        teacher.wait_until(
            lambda: votes(teacher).get(second) == 1, "the changed vote on the chart", 30
        )
        assert sum(votes(teacher).values()) == 1
    finally:
        browser.context.close()


def test_a_students_step_behind_more_settings_points_at_the_button_then_the_controls(open_lab):
    # A class's Next does not build "More settings" on every student's page (85-110 ms of server
    # CPU each): the pointer outlines its button and says so; opened, it outlines the controls.
    from .test_classroom_browser import CONTROL_SHOWN, watch_outlined

    teacher, code = start_class(open_lab)
    teacher.page.get_by_role("button", name="Next ▶").click()  # step 2 needs no more settings
    student = open_lab(f"?class={code}", more_settings=False)
    wait_for_step(student, 2)
    page = student.page
    page.evaluate(watch_outlined("▸ More settings"))
    teacher.page.get_by_role("button", name="◀ Previous").click()  # step 1: swap two values
    wait_for_step(student, 1)
    page.wait_for_function("() => window.__labOutlined !== undefined", timeout=30000)
    assert '"More settings"' in page.evaluate("() => window.__labOutlined.said")
    assert page.evaluate(CONTROL_SHOWN, "Swap the value of") is None  # not built
    page.evaluate("() => { window.__labOutlined = undefined; }")
    page.evaluate(watch_outlined("Swap the value of"))
    page.locator("button.lab-disclosure").first.click()
    page.wait_for_function("() => window.__labOutlined !== undefined", timeout=30000)
    assert '"Swap the value of"' in page.evaluate("() => window.__labOutlined.said")
