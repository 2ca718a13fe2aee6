"""The event store: streams read, and appended to through one `append` taking one `Append`
(or many single-event appends at once, `append_each`). Why one port, and which statement
serves which append: docs/decisions/0005-one-write-port.md."""

import enum
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Final, Protocol
from uuid import UUID

import msgspec

from domain.events import Event, EventMetadata
from services.ports.kept_secrets import SecretRow


class Written(msgspec.Struct, frozen=True):
    """When an event was recorded (the database's clock) and whose request appended it (the
    actor's subject): what a response shows as created or updated at and by."""

    at: datetime
    by: str
    # A creation's request digest, when it was sent under a key: of the events its stream's
    # first transaction wrote (where a keyed create puts it), None for any later.
    request: str | None = None


class Stream(msgspec.Struct, frozen=True):
    """One stream's history: its current version and its events in version order, with when
    and by whom each was written (`written[i]` for `events[i]`)."""

    version: int
    events: tuple[Event, ...]
    written: tuple[Written, ...] = ()

    @property
    def first(self) -> Written | None:
        return self.written[0] if self.written else None

    @property
    def last(self) -> Written | None:
        return self.written[-1] if self.written else None


class AppendResult(msgspec.Struct, frozen=True, kw_only=True):
    """Where an append landed. `replayed`: it was an idempotent retry and wrote nothing.
    `recorded_at`: the time its events were recorded (of the first attempt's, for a replay);
    None when there was nothing to append."""

    stream_id: UUID
    version: int
    positions: tuple[int, ...]
    replayed: bool = False
    recorded_at: datetime | None = None

    @property
    def last_position(self) -> int | None:
        return self.positions[-1] if self.positions else None


class NameClaim(msgspec.Struct, frozen=True, kw_only=True):
    """A name that must be unique among the streams of one namespace (say, the environments of
    one project). `field` is where the name sits in the request, for the error that names it."""

    namespace: str
    name: str
    field: str = "/name"


class Uses(msgspec.Struct, frozen=True, kw_only=True):
    """The streams a stream uses once its events are appended, written in their transaction (a
    template its assets, an asset its credentials, everything its org unit). With `unused` on a
    deletion, a thing in use is never deleted nor a deleted one used, whatever the interleaving."""

    # How the stream is named to whoever finds the thing in use ("template my-run").
    user: str
    # Each used stream with the request field that named it, for the error when it was deleted
    # meanwhile. Nothing used: the stream uses nothing (as after its deletion).
    used: tuple[tuple[UUID, str], ...] = ()


# Builds the refusal of a deletion from the names of what still uses the stream.
InUse = Callable[[Sequence[str]], Exception]


class Keep(enum.Enum):
    """An append's `name` when it leaves the stream's name as it is (KEEP, the default)."""

    KEEP = "keep"


KEEP: Final = Keep.KEEP


class Append(msgspec.Struct, frozen=True):
    """One append: all its events or none, with what the stream holds and uses, and the secret
    row beside them, in one transaction. Appending no events writes no event."""

    stream_id: UUID
    events: Sequence[Event]
    # The version the caller decided on (0: a new stream; None: no expectation); a mismatch
    # raises VersionConflictError and writes nothing.
    expected_version: int | None
    metadata: EventMetadata
    # Already stored in this stream: the first result, nothing written, name and uses left as
    # they are (a retried create); stored in another: IdempotencyKeyReusedError.
    event_ids: Sequence[UUID] | None = None
    # What the stream holds afterwards (None: no name, as a deletion frees it; KEEP: its own);
    # NameTakenError, writing nothing, when another stream holds it in that namespace.
    name: NameClaim | Keep | None = KEEP
    # Exactly the streams it uses afterwards; InvalidRequestError naming the field, writing
    # nothing, when one of them is deleted.
    uses: Uses | None = None
    # Refuses the append with what it builds, writing nothing, while anything uses the stream.
    unused: InUse | None = None
    # Stream id -> the version a decision read (0: no events); StaleReadError, writing
    # nothing, when one has moved on.
    checked: Mapping[UUID, int] | None = None
    # A secret kept (or destroyed) beside the events, never in them (services/ports/
    # kept_secrets.py), written in their transaction unless the append is a replay.
    secret: SecretRow | None = None


class OneAppend(msgspec.Struct, frozen=True, kw_only=True):
    """One event for one stream, after the version its writer read, under a chosen id."""

    stream_id: UUID
    event: Event
    expected_version: int
    event_id: UUID


class StreamLoader(Protocol):
    """Anything that reads a stream's history."""

    async def load(self, stream_id: UUID) -> Stream: ...


class StreamReader(Protocol):
    """What reads several streams at once too."""

    async def load(self, stream_id: UUID) -> Stream: ...

    async def load_many(
        self, stream_ids: Sequence[UUID], *, remembered: bool = False
    ) -> dict[UUID, Stream]:
        """As EventStore.load_many."""
        ...


class EventStore(Protocol):
    """The one write port: every event of every use case is appended through `append` (or, one
    event to each of many streams, `append_each`). `transaction()` is the unit of work of a
    command that writes several streams."""

    # The most bytes one event may encode to: an append holding a larger one raises
    # EventTooLargeError naming its largest part, and writes nothing.
    max_event_bytes: int

    async def load(self, stream_id: UUID) -> Stream: ...

    async def load_many(
        self, stream_ids: Sequence[UUID], *, remembered: bool = False
    ) -> dict[UUID, Stream]:
        """Several streams at once; a stream with no events is absent. `remembered`: the store
        may answer from what it read before, which may have moved on since; a decision made on
        such streams appends with them as `checked`."""
        ...

    async def load_after(self, versions: Mapping[UUID, int]) -> dict[UUID, tuple[Event, ...]]:
        """Each stream's events after the version given (what a reader folded of it before),
        several streams at once; a stream with none after it is absent."""
        ...

    async def append(self, append: Append) -> AppendResult:
        """Append atomically, as `Append` describes; nothing is written when it raises."""
        ...

    async def append_each(
        self, appends: Sequence[OneAppend], *, metadata: EventMetadata
    ) -> frozenset[UUID]:
        """The batch form of `append`: the streams that took their event. A stream that moved
        on since it was read, or that already holds an event of that id (a replay), takes
        nothing, and the others are written all the same."""
        ...

    def transaction(self) -> AbstractAsyncContextManager["EventStore"]:
        """`async with store.transaction() as tx:` the same port, its appends and reads in one
        transaction: all commit when the block ends, none if it raises; inside one, it joins it.
        A refused append undoes only itself, so its caller may read what won a race and go on."""
        ...
