"""One request header read off the ASGI scope, its name matched without regard to case: every
request reads one or two, and Litestar builds its map of them all for the first it is asked.
Why: docs/decisions/0029-what-a-request-reads.md."""

from collections.abc import Iterable


def header(raw: Iterable[tuple[bytes, bytes]], name: bytes) -> str | None:
    """The first value of header `name` (given lowercased), decoded as ASGI's latin-1; None
    when the request has none."""
    for key, value in raw:
        if key == name or key.lower() == name:
            return value.decode("latin-1")
    return None
