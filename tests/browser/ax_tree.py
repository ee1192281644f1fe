"""Chromium's own accessibility tree (the Chrome DevTools Protocol's `Accessibility` domain),
what a screen reader is given: every node with its computed role and name, shadow roots and
all. axe reads the DOM; this reads what Chromium made of it."""

from __future__ import annotations

# The roles of a control a user fills in or picks from: each must have a name.
INPUT_ROLES = frozenset(
    {
        "combobox",
        "listbox",
        "textbox",
        "searchbox",
        "spinbutton",
        "slider",
        "checkbox",
        "radio",
        "switch",
        "radiogroup",
    }
)


def _value(node: dict, key: str) -> str:
    return str((node.get(key) or {}).get("value") or "")


def controls(page) -> list[tuple[str, str]]:
    """(role, accessible name) of every control in Chromium's tree of the page, hidden and
    ignored nodes left out."""
    cdp = page.context.new_cdp_session(page)
    try:
        nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        cdp.detach()
    found = []
    for node in nodes:
        role = _value(node, "role")
        if node.get("ignored") or role not in INPUT_ROLES:
            continue
        found.append((role, _value(node, "name").strip()))
    return found


def unnamed_controls(page) -> list[str]:
    """The roles of the controls Chromium gives no name, one entry each."""
    return [role for role, name in controls(page) if not name]
