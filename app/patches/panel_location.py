"""A page's address read as a browser reads it, so any link a student pastes opens the lab.

Panel 1.9 builds `pn.state.location` from the request with `_get_location_params`, which
splits the path on every `?` and the query on every `#`, and the host on every `:`. A link
with a `?` inside a value (`/app?note=why?&scenario=contest`, which browsers send as typed),
a `#` before the `?`, two `#`s, or an IPv6 host (`[::1]:5006`, a Host header behind a proxy)
raised ValueError while the page was built: the student saw a blank page and the server
logged a traceback.

`read_addresses_as_browsers_do()` puts `location_params` in its place: the same keys and the
same values for every address Panel reads correctly (tests/app/test_patch_functions.py compares
them), and for the rest what `new URL(...)` gives in a browser: the query is everything from
the first `?` to the first `#`, the fragment everything after the first `#`, and an IPv6 host
keeps its brackets with the port after them.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from app.patches.replace import Replacement, guarded_replace

# sha256 (first 16 hex digits) of Panel 1.9.4's `_get_location_params`, as read: what
# `location_params` must answer alike (app/patches/replace.py).
CHECKED_SOURCE = "f8c8259bce008054"


def split_host(host: str) -> tuple[str, str | None]:
    """(hostname, port or None) of a Host header: `[v6]:port`, `[v6]`, `name:port`, `name`."""
    if host.startswith("["):
        end = host.find("]")
        if end != -1:
            rest = host[end + 1 :]
            return host[: end + 1], (rest[1:] if rest.startswith(":") and rest[1:] else None)
    if host.count(":") == 1:
        name, port = host.split(":")
        return name, port or None
    return host, None  # a bare name, or an unbracketed IPv6 address: no port to split off


def location_params(protocol: str | None, host: str | None, uri: str | None) -> dict:
    """What Panel's `_get_location_params` returns, for any address."""
    params: dict = {}
    href = ""
    if protocol:
        params["protocol"] = href = f"{protocol}:"
    if host:
        # As Panel does: an IPv4-mapped address without its prefix, the loopback by name.
        if host.startswith("::ffff:"):
            host = host.replace("::ffff:", "")
        elif host == "::1":
            host = "localhost"
        href += f"//{host}"
        params["hostname"], port = split_host(host)
        if port is not None:
            params["port"] = port
    if uri:
        if uri.startswith("https,"):
            uri = uri.replace("https,", "")
        if uri.startswith("http"):
            parsed = urlsplit(uri)
            uri, search, fragment = parsed.path, parsed.query, parsed.fragment
            params["pathname"] = uri
        else:
            before, _, fragment = uri.partition("#")
            params["pathname"], _, search = before.partition("?")
        href += uri
        if search:
            params["search"] = f"?{search}"
        if fragment:
            params["hash"] = f"#{fragment}"
    params["href"] = href
    return params


def read_addresses_as_browsers_do() -> bool:
    """Put `location_params` in place of Panel's function, once per process; False if this
    Panel's function is not the source read (then nothing is changed)."""
    from panel.io import location

    found = getattr(location, "_get_location_params", None)
    if found is not location_params:
        location_params.original = found
    return guarded_replace(
        "any_address_opens",
        Replacement(location, "_get_location_params", location_params, CHECKED_SOURCE),
    )
