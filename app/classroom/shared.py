"""This process's one class store, shared by every session it serves.

`attention-lab --store URL` (or ATTENTION_LAB_STORE) chooses it before the first page; unset,
the in-process store holds the classes, which is all one machine needs.
"""

from __future__ import annotations

import os
import threading

from app.classroom.store import STORE_ENV, ClassStore, open_store

_store: ClassStore | None = None
_lock = threading.Lock()


def configure(url: str | None) -> ClassStore:
    """Open the store `url` names (see store.open_store) as this process's; returns it."""
    global _store
    with _lock:
        if _store is not None:
            _store.close()
        _store = open_store(url)
        return _store


def current() -> ClassStore:
    """The process's store, opened from ATTENTION_LAB_STORE on first use."""
    with _lock:
        store = _store
    return store if store is not None else configure(os.environ.get(STORE_ENV, ""))
