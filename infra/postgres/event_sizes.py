"""How large an event may be (docs/decisions/0002-message-sizes.md): every append is checked
here, by the one encoder (infra/postgres/encoding.py), before anything is written. An event
past the limit would be stored, then refused by the broker, and the relay would stop at it."""

from collections.abc import Sequence
from typing import Any

import msgspec

from infra.serialization import EncodedEvent
from services.errors import EventTooLargeError


def check(encoded: Sequence[EncodedEvent], limit: int) -> None:
    """Raise EventTooLargeError for the first event whose JSON passes `limit` bytes."""
    for event in encoded:
        # A character is at most 4 bytes of UTF-8: most events are told apart by their length.
        if len(event.data) * 4 > limit and (size := len(event.data.encode())) > limit:
            raise EventTooLargeError(
                largest_part(event.data), event_type=event.type, size=size, limit=limit
            )


def largest_part(data: str) -> str:
    """A JSON pointer to what makes the document large: from the top, down into the member
    that holds more than half of it, as long as there is one (a list of many small entries
    stops at the list; one huge value, at that value)."""
    pointer, node = "", msgspec.json.decode(data)
    while isinstance(node, dict | list):
        members: list[tuple[str, Any]] = (
            [(str(key), value) for key, value in node.items()]
            if isinstance(node, dict)
            else [(str(index), value) for index, value in enumerate(node)]
        )
        if not members:
            break
        sizes = [len(msgspec.json.encode(value)) for _, value in members]
        biggest = max(range(len(members)), key=sizes.__getitem__)
        if sizes[biggest] * 2 <= len(msgspec.json.encode(node)):
            break
        key, node = members[biggest]
        pointer += "/" + key.replace("~", "~0").replace("/", "~1")
    return pointer
