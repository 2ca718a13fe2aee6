"""One request header read off the ASGI scope.

Litestar's header map is built for all of a request's headers the first time any is asked
for; authentication and the read-your-writes wait need one each, on every request, and most
routes ask for no other. Header names are matched without regard to case, as HTTP has them (ASGI
servers send them lowercased already)."""

from collections.abc import Iterable


def header(raw: Iterable[tuple[bytes, bytes]], name: bytes) -> str | None:
    """The first value of header `name` (given lowercased), decoded as ASGI's latin-1; None
    when the request has none."""
    for key, value in raw:
        if key == name or key.lower() == name:
            return value.decode("latin-1")
    return None
