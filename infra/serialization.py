"""Event (de)serialization: one codec per event catalogue, built once and reused."""

import re
import typing
from collections.abc import Callable, Sequence
from typing import Any, Final

import msgspec

from domain.events import DomainEvent, Event, EventMetadata, event_tag
from domain.legacy_events import LEGACY, upcast

_TAG: Final = re.compile(r"^[a-z][a-z_]*\.[a-z][a-z_]*\.v(\d+)$")


def _same(event: Event) -> Event:
    return event


class EncodedEvent(msgspec.Struct, frozen=True):
    type: str
    schema_version: int
    data: str


class EventCodec:
    """Encodes events for storage and decodes stored ones (upcasting superseded shapes).

    Tags must read `<stream_type>.<fact>.v<N>`; N is stored as `schema_version`.
    """

    def __init__(
        self, event_types: Sequence[type[Event]], upcast: Callable[[Event], Event] = _same
    ) -> None:
        if not event_types:
            raise ValueError("an event catalogue needs at least one event type")
        self._versions: dict[str, int] = {}
        for event_type in event_types:
            tag = event_tag(event_type)
            match = _TAG.match(tag)
            if match is None:
                raise ValueError(
                    f"{event_type.__name__}: tag {tag!r} is not '<stream>.<fact>.v<N>'"
                )
            if tag in self._versions:
                raise ValueError(f"tag {tag!r} is used twice")
            self._versions[tag] = int(match.group(1))
        # A union built at run time from the catalogue; every member is an Event.
        union: Any = typing.Union[tuple(event_types)]  # noqa: UP007
        self._decoder: msgspec.json.Decoder[Event] = msgspec.json.Decoder(union)
        self._encoder = msgspec.json.Encoder()
        self._upcast = upcast

    @property
    def tags(self) -> frozenset[str]:
        return frozenset(self._versions)

    def encode(self, event: Event) -> EncodedEvent:
        tag = event_tag(type(event))
        if tag not in self._versions:
            raise ValueError(f"{type(event).__name__} is not in this event catalogue")
        return EncodedEvent(tag, self._versions[tag], self._encoder.encode(event).decode())

    def decode(self, data: bytes | str) -> Event:
        return self._upcast(self._decoder.decode(data))

    def knows(self, tag: str) -> bool:
        return tag in self._versions


_metadata_encoder: Final = msgspec.json.Encoder()
_metadata_decoder: Final = msgspec.json.Decoder(EventMetadata)


def encode_metadata(metadata: EventMetadata) -> str:
    return _metadata_encoder.encode(metadata).decode()


def decode_metadata(data: bytes | str) -> EventMetadata:
    return _metadata_decoder.decode(data)


def catalogue(union: Any) -> tuple[type[Event], ...]:
    """The event classes of a union alias (or the one class, when the union has a single member)."""
    return typing.get_args(union) or (union,)


# Current types and superseded ones still in storage; reading one of the latter upcasts it.
DOMAIN_CODEC: Final = EventCodec((*catalogue(DomainEvent), *LEGACY), upcast)
