"""The releases of Bokeh, Panel and Param whose internals app/patches/ was read and tested against.

A test (tests/app/test_patch_pins.py) fails when the lock files or the installed packages hold
another release, so moving Bokeh or Panel starts with re-checking the patches (docs/patches.md).
"""

from __future__ import annotations

import hashlib
import inspect
from importlib import metadata

# The releases of the packages whose internals app/patches/ uses, as read and tested.
CHECKED_AGAINST = {"bokeh": "3.9.2", "panel": "1.9.4", "param": "2.4.2"}


def installed_version(package: str) -> str | None:
    """The installed release of `package`, or None when it is not installed."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def source_hash(function) -> str:
    """The first 16 hex digits of the sha256 of `function`'s source: how a patch checks, at run
    time, that what it replaces is the code that was read (each keeps its `CHECKED_SOURCE`)."""
    return hashlib.sha256(inspect.getsource(function).encode()).hexdigest()[:16]
