"""The streams a process read last, kept to decide a command without reading them again.

A create reads the streams it is checked against (its actor's roles, its scope, the tenant's
settings, the assets it names) before it appends; they change far less often than they are read.
What is kept here may have moved on since, so a decision made on it appends with the versions it
read as `checked` (services/ports/event_store.py `Append`), and the append's own statement
refuses to write when one of them has moved (infra/postgres/sql/append_first_named.sql):
nothing rests on an old stream unless it is still the stream's head when the decision is
written. A stream with no events is kept too (version 0): most creates ask for a tenant's
settings that were never changed.
"""

from collections.abc import Iterable
from uuid import UUID

from services.bounded import Bounded
from services.kinds import forget_folds_of, keep_folds_of
from services.ports.event_store import Stream


class RememberedStreams:
    """Streams by id, as last read or known whole; bounded, least recently used first out."""

    def __init__(self, capacity: int = 2_000) -> None:
        self._streams: Bounded[UUID, Stream] = Bounded(capacity)

    def get(self, stream_id: UUID) -> Stream | None:
        return self._streams.get(stream_id)

    def __contains__(self, stream_id: object) -> bool:
        return stream_id in self._streams

    def keep(self, stream_id: UUID, stream: Stream) -> None:
        if (kept := self._streams.get(stream_id)) is not None and kept is not stream:
            forget_folds_of(kept.events)
        keep_folds_of(stream.events)  # handed out again until forgotten: fold it once
        if (oldest := self._streams.put(stream_id, stream)) is not None:
            forget_folds_of(oldest.events)

    def forget(self, stream_ids: Iterable[UUID]) -> None:
        """Streams that moved on (this process appended to them, or a check found them moved)."""
        for stream_id in stream_ids:
            if (stream := self._streams.pop(stream_id)) is not None:
                forget_folds_of(stream.events)
