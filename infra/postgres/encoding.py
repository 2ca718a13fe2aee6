"""What every append sends: its events encoded once, with their ids and digests (the one encoder,
`encode`, of every append statement, the fan-out's included), and the arguments of each statement.
Every event is checked against the size limit here, before anything is written (`check`).
"""

import os
from collections.abc import Sequence
from typing import Any, Final, NamedTuple
from uuid import UUID

import msgspec

from domain.events import Event, EventMetadata, stream_type_of
from infra.postgres.hashchain import content_digests
from infra.serialization import EncodedEvent, EventCodec, encode_metadata
from infra.settings import EVENT_BYTES
from infra.telemetry.tracing import stamped
from services.errors import EventTooLargeError


class Encoded(NamedTuple):
    """Events of one stream type, encoded, with the digests their hash chain links take."""

    stream_type: str
    events: list[EncodedEvent]
    metadata: str
    digests: list[bytes]
    caller: str | None  # the events' `caller` column (infra/postgres/read_marks.py)


def encode(
    codec: EventCodec,
    events: Sequence[Event],
    metadata: EventMetadata,
    ids: bytes,
    streams: Sequence[bytes],
    *,
    max_bytes: int = EVENT_BYTES,
) -> Encoded:
    """Encode `events`, the i-th with the id `ids[16i:16i+16]` for the stream of the i-th of
    `streams` (16 bytes each), and digest each (infra/postgres/hashchain.py). One append goes to
    one stream type: the events' tags say which; no event may pass `max_bytes`."""
    encoded = [codec.encode(event) for event in events]
    if not encoded:
        raise ValueError("an append has at least one event")
    check(encoded, max_bytes)
    stream_type = stream_type_of(encoded[0].type)
    if len(encoded) > 1:  # (the tags of a batch are few: each is looked at once)
        stream_types = {stream_type_of(tag) for tag in {e.type for e in encoded}}
        if stream_types != {stream_type}:
            raise ValueError(f"one append goes to one stream type, not {sorted(stream_types)}")
    meta = encode_metadata(stamped(metadata))  # the span appending them, if any
    if len(streams) != len(encoded) or len(ids) != 16 * len(encoded):
        raise ValueError("one id and one stream per event")
    digests = content_digests(stream_type, meta, ids, streams, encoded)
    return Encoded(stream_type, encoded, meta, digests, caller_of(metadata))


# How large an event may be (docs/decisions/0002-message-sizes.md): an event past the limit
# would be stored, then refused by the broker, and the relay would stop at it.
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


class StreamBatch(NamedTuple):
    """The events of one append to one stream, encoded, with their ids (16 bytes each)."""

    stream_id: UUID
    ids: bytes
    stream_type: str
    encoded: list[EncodedEvent]
    metadata: str
    digests: list[bytes]
    caller: str | None

    @classmethod
    def of(
        cls,
        codec: EventCodec,
        stream_id: UUID,
        events: Sequence[Event],
        metadata: EventMetadata,
        event_ids: Sequence[UUID] | None,
        *,
        max_bytes: int = EVENT_BYTES,
    ) -> "StreamBatch":
        if event_ids is None:
            ids = random_ids(len(events))
        else:
            ids = b"".join(event_id.bytes for event_id in event_ids)
        streams = [stream_id.bytes] * len(events)
        encoded = encode(codec, events, metadata, ids, streams, max_bytes=max_bytes)
        return cls(stream_id, ids, *encoded)

    def uuids(self) -> list[UUID]:
        return [UUID(bytes=self.ids[i : i + 16]) for i in range(0, len(self.ids), 16)]

    def single(self, expected: int) -> tuple[object, ...]:
        """The arguments of append_one.sql (and, less the last, of append_first_named.sql)."""
        e = self.encoded[0]
        return (
            self.stream_id,
            self.stream_type,
            expected,
            self.ids.hex(),  # asyncpg takes a uuid as its 32 hex digits
            e.type,
            e.schema_version,
            e.data,
            self.metadata,
            self.digests[0],
            self.caller,
        )

    def after(self, version_before: int, head: bytes) -> tuple[object, ...]:
        """The arguments of append_known.sql for one event, else of append_known_many.sql."""
        if len(self.encoded) == 1:
            e = self.encoded[0]
            return (
                self.stream_id,
                self.stream_type,
                self.ids.hex(),  # asyncpg takes a uuid as its 32 hex digits
                version_before + 1,
                e.type,
                e.schema_version,
                e.data,
                self.metadata,
                self.digests[0],
                head,
                self.caller,
            )
        # Packed (see append_known_many.sql): one line per event. Tags match the codec's
        # pattern and payloads are compact JSON, where a newline is always escaped.
        data = "\n".join(e.data for e in self.encoded)
        if data.count("\n") != len(self.encoded) - 1:
            raise ValueError("an event payload holds a raw newline: not compact JSON")
        return (
            self.stream_id,
            self.stream_type,
            self.ids,
            "\n".join(e.type for e in self.encoded),
            "\n".join(str(e.schema_version) for e in self.encoded),
            data,
            self.metadata,
            b"".join(self.digests),
            head,
            version_before,
            self.caller,
        )

    def several(self, expected: int) -> tuple[object, ...]:
        """The arguments of append_many.sql."""
        return (
            self.stream_id,
            self.stream_type,
            expected,
            self.uuids(),
            *columns(self.encoded),
            self.metadata,
            b"".join(self.digests),
            self.caller,
        )


def columns(encoded: Sequence[EncodedEvent]) -> tuple[list[str], list[int], list[str]]:
    """The events' tags, schema versions and payloads, one array each (a statement's unnest)."""
    return (
        [e.type for e in encoded],
        [e.schema_version for e in encoded],
        [e.data for e in encoded],
    )


def caller_of(metadata: EventMetadata) -> str | None:
    """Who reads these events back (a user or an application), or None for the service's own
    writes: the events' `caller` column, which read-your-writes finds the caller's last event by."""
    return None if metadata.actor_kind == "system" else metadata.actor_subject


def random_ids(count: int) -> bytes:
    """`count` version-4 UUIDs, 16 bytes each, from one read of the OS's randomness (uuid4()
    makes a syscall and an object per id; most appends never need the objects)."""
    random = int.from_bytes(os.urandom(16 * count))
    keep, version_and_variant = _ID_BITS.get(count) or _id_bits(count)
    return (random & keep | version_and_variant).to_bytes(16 * count)


# Per id: byte 6 keeps its low nibble under version 4, byte 8 its low six bits under variant 10.
_KEEP: Final = b"\xff" * 6 + b"\x0f\xff\x3f" + b"\xff" * 7
_SET: Final = bytes(6) + b"\x40\x00\x80" + bytes(7)
_ID_BITS: Final[dict[int, tuple[int, int]]] = {}


def _id_bits(count: int) -> tuple[int, int]:
    bits = int.from_bytes(_KEEP * count), int.from_bytes(_SET * count)
    if count <= 1000:  # the sizes appends use, not every size ever seen
        _ID_BITS[count] = bits
    return bits
