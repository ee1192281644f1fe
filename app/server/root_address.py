"""The bare address, `/`, sends the browser to the lab's page with its query kept.

Bokeh's and Panel's own root route redirect to the one app but drop the query, so a link a
teacher types or prints as `host/?lesson=12&model=gpt2&lang=es` opened the lab's first screen in
English. This route sits before theirs (Bokeh matches the server's extra routes first)."""

from __future__ import annotations

from tornado.web import RequestHandler

MAX_QUERY = 8192  # bytes of query carried over: any real link is far shorter


class RootAddress(RequestHandler):
    def initialize(self, page: str) -> None:
        self.page = page

    def get(self) -> None:
        query = (self.request.query or "")[:MAX_QUERY]
        self.redirect(f".{self.page}" + (f"?{query}" if query else ""))


def route(page: str) -> tuple:
    """The tornado route for `/`, sending a browser to `page` (such as "/app")."""
    return (r"/", RootAddress, {"page": page})
