"""A live session's component stylesheets, pinned to this server (never the CDN).

Panel fills a document's `dist_url` template variable (where its components' stylesheets come
from) only when it renders the HTML page. With `--reuse-sessions` the page comes from a cached
session and the live session is built without it, so its stylesheets fall back to
cdn.holoviz.org, which a classroom without internet cannot reach (seen with Panel 1.9.4).
Setting it before any model exists keeps every stylesheet local. The key `dist_url`, and the
functions that say whether Panel serves from the CDN and from where, are Panel's internals.
"""

from __future__ import annotations

import logging

_log = logging.getLogger(__name__)


def serve_stylesheets_locally(doc) -> None:
    """Give a live session's document the `dist_url` Panel gives a rendered page."""
    try:  # private Panel names: if a later release moves them, serve as Panel does
        from panel.io.resources import get_dist_path, use_cdn

        if doc is not None and doc.session_context is not None and not use_cdn():
            doc.template_variables.setdefault("dist_url", get_dist_path())
    except (ImportError, AttributeError):
        _log.warning("could not pin stylesheets to this server")
