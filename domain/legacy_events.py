"""Event shapes superseded but still in storage, and `upcast` to their successors when read: a
change other than a field added with a default moves the old class here, tag kept, and the new
one takes the next tag. The contract test accepts a removed tag only if it is here."""

from typing import Final

from domain.events import Event

LEGACY: Final[tuple[type[Event], ...]] = ()


def upcast(event: Event) -> Event:
    """The current shape of a stored event (itself when it is current)."""
    return event
