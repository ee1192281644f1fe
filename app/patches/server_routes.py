"""The served route table: the lab's route name, its liveness check, extra routes and a
websocket that sets TCP_NODELAY.

`attention-lab` runs Panel's own serve command in its process, so every behaviour (liveness,
session reuse, static routes, origin checks) is exactly Panel's. What it changes reaches into
the tables Panel and Bokeh build:

- Panel names a route after its script's file stem; the served script is
  `app/server/serve.py`, so its route is renamed (to /app) through the serve command's
  `customize_applications` hook, which Panel's own subclass of Bokeh's command defines.
- Panel builds the liveness handler's own application table, as a keyword of that handler's
  entry in `extra_patterns`; it is renamed the same way, so /liveness?endpoint=/app checks
  the lab itself.
- Extra Tornado routes (the lab's /replica) join `extra_patterns`.
- Bokeh's module-level route table (`bokeh.server.urls.per_app_patterns`) gets a websocket
  handler that turns Nagle's algorithm off (see `send_updates_without_delay`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from app.patches.replace import Replacement, guarded_replace


def serve_command(
    renames: Mapping[str, str],
    extra_patterns: Sequence[tuple] = (),
    *,
    edit_patterns: Callable[[list], None] | None = None,
    transforms: Sequence[type] = (),
    started: Callable[[], None] | None = None,
) -> type:
    """Panel's serve command with routes renamed (old -> new) and `extra_patterns` added;
    `edit_patterns` may then change Panel's own extra routes in place, `transforms` (Tornado
    output transforms) apply to every HTTP answer, and `started` is called once the server is
    built (its log configured)."""
    from panel.command.serve import Serve
    from panel.io.liveness import LivenessHandler

    def rename(applications: dict) -> dict:
        return {renames.get(route, route): app for route, app in applications.items()}

    class LabServe(Serve):
        def customize_applications(self, args, applications):
            return rename(super().customize_applications(args, applications))

        def customize_kwargs(self, args, server_kwargs):
            kwargs = super().customize_kwargs(args, server_kwargs)
            # Panel builds the liveness handler's own application table; keep it in step.
            for pattern in kwargs.get("extra_patterns", []):
                if len(pattern) > 2 and pattern[1] is LivenessHandler:
                    pattern[2]["applications"] = rename(pattern[2]["applications"])
            kwargs.setdefault("extra_patterns", []).extend(extra_patterns)
            if edit_patterns is not None:
                edit_patterns(kwargs["extra_patterns"])
            return kwargs

        def customize_server(self, server):
            server = super().customize_server(server)
            for transform in transforms:
                if transform not in server._tornado.transforms:
                    server._tornado.transforms.append(transform)
            if started is not None:
                started()
            return server

    return LabServe


def send_updates_without_delay() -> bool:
    """Serve the lab's websocket with TCP_NODELAY set; False (nothing changed) when Bokeh's
    route table has no Panel websocket route to subclass.

    Bokeh writes one update as several websocket frames (header, metadata, content, one per
    array). Neither Bokeh nor Tornado turns Nagle's algorithm off, so a frame written while an
    earlier one is unacknowledged can wait for the browser's delayed ACK (up to a fifth of a
    second, on some systems). Panel swaps its own handler into Bokeh's route table the same way.
    """
    from bokeh.server.urls import per_app_patterns
    from panel.io.server import WSHandler

    index, handler = next(
        (
            (i, handler)
            for i, (_pattern, handler, *_rest) in enumerate(per_app_patterns)
            if isinstance(handler, type) and issubclass(handler, WSHandler)
        ),
        (len(per_app_patterns), None),  # none: the guard finds the entry missing
    )
    if getattr(handler, "sets_nodelay", False):
        return True  # installed in this process (by an earlier call, or the served guard's)

    class NoDelayWSHandler(handler or WSHandler):
        sets_nodelay = True

        def open(self, *args, **kwargs):
            self.set_nodelay(True)
            return super().open(*args, **kwargs)

    entry = None
    if handler is not None:
        pattern, _handler, *rest = per_app_patterns[index]
        entry = (pattern, NoDelayWSHandler, *rest)
    return guarded_replace(
        "websocket_nodelay",
        Replacement(per_app_patterns, index, entry, what="Panel's websocket route"),
    )


def edit_app_routes(edit: Callable[[str, type], type | None]) -> None:
    """Pass each route of Bokeh's per-application table (the page, its websocket, its metadata,
    autoload.js: Panel's handlers by now) through `edit(pattern, handler)`, which returns the
    handler to serve it with, or None to drop the route. The served lab's guard uses it
    (app/server/guard.py); applying it twice is harmless when `edit` keeps what it made."""
    from bokeh.server.urls import per_app_patterns

    kept = []
    for pattern, handler, *rest in per_app_patterns:
        if isinstance(handler, type):
            handler = edit(pattern, handler)
            if handler is None:
                continue
        kept.append((pattern, handler, *rest))
    per_app_patterns[:] = kept
