"""Join codes and the secrets beside them.

A code is read off a projector and typed on a phone, so its alphabet leaves out every
character that looks like another: 0/O/Q/D, 1/I/L, 2/Z, 5/S, 6/G, 8/B and U/V. 20 characters
to the 6th power is 64 million codes; with join attempts rate-limited per client
(store.JOIN_FAILURES_PER_WINDOW), guessing one gets nowhere.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

ALPHABET = "ACEFHJKMNPRTWXY34679"
LENGTH = 6
_SEPARATORS = re.compile(r"[\s\-_.]+")


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))


def normalize(text: str) -> str | None:
    """The code a person meant (case, spaces and dashes ignored), or None if it cannot be one."""
    if not isinstance(text, str) or len(text) > 32:
        return None
    code = _SEPARATORS.sub("", text).upper()
    if len(code) != LENGTH or any(c not in ALPHABET for c in code):
        return None
    return code


def new_secret() -> str:
    """A teacher's key or a one-time link: 128 random bits, URL- and cookie-safe."""
    return secrets.token_urlsafe(16)


def digest(secret: str) -> str:
    """What a store keeps of a secret: never the secret itself."""
    return hashlib.sha256(secret.encode()).hexdigest()


def same(secret: str | None, digests) -> bool:
    if not isinstance(secret, str) or not secret or len(secret) > 64:
        return False
    mine = digest(secret)
    return any(hmac.compare_digest(mine, d) for d in digests)


_STUDENT = re.compile(r"^[A-Za-z0-9_-]{16,40}$")


def new_student_id() -> str:
    return secrets.token_urlsafe(16)


def is_student_id(text) -> bool:
    return isinstance(text, str) and bool(_STUDENT.match(text))
