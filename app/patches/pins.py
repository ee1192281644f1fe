"""The releases of Bokeh, Panel and Param whose internals app/patches/ was read and tested against.

A test (tests/app/test_patch_pins.py) fails when the lock files or the installed packages hold
another release, so moving Bokeh or Panel starts with re-checking the patches (docs/patches.md).
"""

from __future__ import annotations

from importlib import metadata

# The releases of the packages whose internals app/patches/ uses, as read and tested.
CHECKED_AGAINST = {"bokeh": "3.9.2", "panel": "1.9.4", "param": "2.4.2"}


def installed_version(package: str) -> str | None:
    """The installed release of `package`, or None when it is not installed."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None
