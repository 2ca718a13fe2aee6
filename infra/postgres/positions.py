"""The log position a request's appends reached, for its response's read-your-writes header.

A context variable: each request (an asyncio task with its own context) sees only its own
appends; the HTTP layer resets it when a request starts.
"""

from contextvars import ContextVar

last_position: ContextVar[int | None] = ContextVar("trainplate_last_position", default=None)


def note_append(position: int | None) -> None:
    """Remember the newest position this request's appends reached."""
    if position is not None:
        current = last_position.get()
        last_position.set(position if current is None else max(current, position))
