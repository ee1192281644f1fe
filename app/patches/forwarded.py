"""Forwarded headers believed from trusted proxies only.

Tornado, under `--use-xheaders`, takes a request's address and scheme from its X-Real-IP,
X-Forwarded-For and X-Forwarded-Proto headers whoever sent them: a student could name any
address, and every per-address limit with it. `trust_forwarded_headers_from` lets Tornado apply
them only to connections from the listed networks (the balancer), process-wide. The served lab
applies it at start with `--trusted-proxy` (app/server/cli.py); docs/patches.md lists it.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence


def trust_forwarded_headers_from(networks: Sequence) -> bool:
    """Apply forwarded headers only for a peer in `networks` (none: never). A second call
    replaces the networks. Returns False if Tornado lacks the method it wraps."""
    from tornado.httpserver import _HTTPRequestContext

    original = getattr(_HTTPRequestContext, "_lab_original_apply", None)
    if original is None:
        original = getattr(_HTTPRequestContext, "_apply_xheaders", None)
        if original is None:
            return False
        _HTTPRequestContext._lab_original_apply = original
    trusted = tuple(networks)

    def _apply_xheaders(self, headers):
        try:
            peer = ipaddress.ip_address(self._orig_remote_ip)
        except (TypeError, ValueError):
            return None
        if any(peer in net for net in trusted):
            return original(self, headers)
        return None

    _HTTPRequestContext._apply_xheaders = _apply_xheaders
    return True
