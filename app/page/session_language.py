"""The language a page's session speaks, read from the request that opened it: its `?lang=`
and its `Accept-Language` header (app/i18n/negotiation.py chooses; this only reads).

A page built without a request (a test, the benchmark, a notebook) speaks English.
"""

from __future__ import annotations

from app.i18n.negotiation import MAX_HEADER_CHARS, MAX_QUERY_CHARS, Choice, choose

LANG_PARAM = "lang"
HEADER = "accept-language"


def requested_language(doc) -> Choice:
    """The choice for the session of `doc` (a Bokeh document), from its request."""
    request = getattr(getattr(doc, "session_context", None), "request", None)
    if request is None:
        return choose(None, None)
    return choose(_argument(request), _header(request))


def page_key(request) -> str:
    """The language of a page request (a Tornado or Bokeh request), for the key of a reused
    page: one per path and language, so each served page says its own language."""
    return choose(_argument(request), _header(request)).code


def _argument(request) -> str | None:
    values = (getattr(request, "arguments", None) or {}).get(LANG_PARAM) or []
    if not values:
        return None
    first = values[0]
    if isinstance(first, bytes):
        # One character more than a tag may have, so that choose() sees it was cut.
        return first[: 4 * (MAX_QUERY_CHARS + 1)].decode("utf-8", "replace")[: MAX_QUERY_CHARS + 1]
    return str(first)[: MAX_QUERY_CHARS + 1]


def _header(request) -> str | None:
    headers = getattr(request, "headers", None) or {}
    for name, value in headers.items():
        if str(name).lower() == HEADER:
            value = value[0] if isinstance(value, list) and value else value
            return str(value)[:MAX_HEADER_CHARS]
    return None
