"""This process's one class store, shared by every session it serves, and where a store is opened.

`attention-lab --store URL` (or ATTENTION_LAB_STORE) chooses it before the first page; unset,
the in-process store holds the classes, which is all one machine needs. `open_store` lives here,
above both implementations, so that store.py (the rules) never imports memory.py or
redis_store.py, which import it.
"""

from __future__ import annotations

import os
import threading
from urllib.parse import urlsplit

from app.classroom.store import ClassStore

STORE_ENV = "ATTENTION_LAB_STORE"

_store: ClassStore | None = None
_lock = threading.Lock()


def configure(url: str | None) -> ClassStore:
    """Open the store `url` names (see open_store) as this process's; returns it."""
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


def open_store(url: str | None = None, **options) -> ClassStore:
    """The store a URL names: empty or "memory" for this process alone, redis://host:port/db
    (or rediss://, unix://) for a class shared by several replicas."""
    text = (url or "").strip()
    if text in ("", "memory", "memory://"):
        from app.classroom.memory import MemoryStore

        return MemoryStore(**options)
    scheme = urlsplit(text).scheme
    if scheme in ("redis", "rediss", "unix"):
        from app.classroom.redis_store import RedisStore

        return RedisStore(text, **options)
    raise ValueError(
        f"class store {text!r}: use 'memory' (one process) or redis://host:port/db (replicas)"
    )
