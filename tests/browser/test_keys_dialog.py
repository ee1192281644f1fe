"""The keyboard help is a modal dialog (issue 40), driven by keyboard alone in Chromium: Keys
opens it with focus inside, Tab and Shift+Tab never leave it, the page behind cannot take focus,
Esc closes it however many keys were pressed before, Close does too, and focus goes back to
Keys each time. It is a dialog with aria-modal and a name."""

from __future__ import annotations

import pytest

from .labpage import FOCUSED, wait_until_settled

pytestmark = pytest.mark.browser

# Where focus is: inside the open keyboard help (the dialog or one of its controls)?
FOCUS_IN_DIALOG = """() => {
  const dialog = document.querySelector('.lab-keys');
  return dialog !== null && !dialog.hidden && dialog.contains(document.activeElement);
}"""


def _tab_to_keys(page, limit: int = 30) -> None:
    """Tab from the top of the page until the Keys button has focus."""
    page.locator("body").focus()
    passed = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        name = page.evaluate(FOCUSED)
        if name == "Keys":
            return
        passed.append(name[:30])
    raise AssertionError(f"Keys not reached in {limit} Tabs, through {passed}")


def _assert_closed_onto_keys(page) -> None:
    dialog = page.locator(".lab-keys")
    dialog.wait_for(state="hidden", timeout=30000)
    assert page.evaluate(FOCUSED) == "Keys", page.evaluate(FOCUSED)
    assert (
        page.get_by_role("button", name="Keys", exact=True).get_attribute("aria-expanded")
        == "false"
    )


def test_the_keyboard_help_keeps_focus_and_esc_always_closes_it(open_lab):
    lab = open_lab("", more_settings=False)
    page = lab.page
    wait_until_settled(page)
    _tab_to_keys(page)
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Keyboard help")
    dialog.wait_for(state="visible", timeout=30000)
    assert dialog.get_attribute("aria-modal") == "true"
    assert page.evaluate(FOCUS_IN_DIALOG), "focus did not move into the dialog"
    # Round and round: Tab and Shift+Tab stay on the dialog's own controls.
    stops = []
    for key in ["Tab"] * 6 + ["Shift+Tab"] * 4:
        page.keyboard.press(key)
        assert page.evaluate(FOCUS_IN_DIALOG), (
            f"{key} took focus to {page.evaluate(FOCUSED)[:60]!r}"
        )
        stops.append(page.evaluate(FOCUSED))
    assert "Close" in stops, stops
    # The page behind is out of reach while the dialog is open (inert: no focus, no click).
    page.evaluate("() => document.getElementById('lab-skip-first').focus()")
    assert page.evaluate(FOCUS_IN_DIALOG), "a control behind the dialog took focus"
    # After all those keys, Esc still closes it, and focus is back on Keys.
    page.keyboard.press("Escape")
    _assert_closed_onto_keys(page)
    # The page behind works again: Tab leaves Keys for the next control.
    page.keyboard.press("Tab")
    assert page.evaluate(FOCUSED) not in ("Keys", ""), page.evaluate(FOCUSED)
    # Open again from Keys; Close, reached by Tab and pressed with Enter, shuts it as well.
    page.keyboard.press("Shift+Tab")
    assert page.evaluate(FOCUSED) == "Keys"
    page.keyboard.press("Enter")
    dialog.wait_for(state="visible", timeout=30000)
    page.keyboard.press("Tab")
    assert page.evaluate(FOCUSED) == "Close"
    page.keyboard.press("Enter")
    _assert_closed_onto_keys(page)
