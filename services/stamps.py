"""When and by whom a thing was created and last changed, as a write's response shows it: from
its stream's recorded events (the database's clock), never from the API process's clock, and
never from a read model, which may not hold the thing yet."""

from typing import Generic, TypeVar

import msgspec

from domain.events import EventMetadata
from services.ports.event_store import AppendResult, Stream, Written

T = TypeVar("T")


class Stamps(msgspec.Struct, frozen=True, kw_only=True):
    created: Written
    updated: Written


class Stamped(msgspec.Struct, Generic[T], frozen=True, kw_only=True):
    """What a use case wrote (or found), with its stamps."""

    state: T
    stamps: Stamps


def loaded(stream: Stream) -> Stamps:
    """A stream's stamps as it stands (it holds at least one event)."""
    first, last = stream.first, stream.last
    assert first is not None, "an empty stream has no stamps"
    assert last is not None
    return Stamps(created=first, updated=last)


def appended(before: Stream, result: AppendResult, metadata: EventMetadata) -> Stamps:
    """The stamps after `result` appended to the stream read as `before` (empty: created by
    this append). An append of nothing leaves the stream's own."""
    if result.recorded_at is None:
        return loaded(before)
    now = Written(result.recorded_at, metadata.actor_subject)
    return Stamps(created=before.first or now, updated=now)
