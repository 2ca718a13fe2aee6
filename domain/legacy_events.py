"""Event shapes that are superseded but still in storage, and `upcast`, which turns each into its
current successor when it is read. Empty until an event's shape changes in a way that is not an
added field with a default: then the old class moves here (keeping its tag), the new one takes
the next version tag (`template.created.v2`), and `upcast` maps old to new. The contract test
(tests/unit/test_event_contract.py) accepts a removed tag only when it is listed here.
"""

from typing import Final

from domain.events import Event

LEGACY: Final[tuple[type[Event], ...]] = ()


def upcast(event: Event) -> Event:
    """The current shape of a stored event (itself when it is current)."""
    return event
