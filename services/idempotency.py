"""One way to make a create safe to retry: the caller's `Idempotency-Key` names what it creates.

The new stream's id is derived from the caller and the key (`creation_id`), so a retry reaches
the stream its first attempt made (a department or project, whose id Run:ai numbers, is issued
its number for that id once: services/ports.py `IdSequence`). The use case then compares what
it would write with what the stream begins with (`create_once`): the same, and the answer is
the first result, with nothing written; anything else, and the key was reused for another
request (422). Where the events also hold what the create resolved from other streams, which
may have moved on before a retry, only the request is compared: a template's assets' versions
are left out (services/templates.py), and a workload's events carry its request digested, which
a retry compares before resolving anything again (services/workloads.py). Two attempts racing
each other meet on the stream's version (and the name claim): the loser reads the winner's
events and answers them, inside a unit of work too (Streams.transaction: a refused append undoes
only itself there). Without a key the id is fresh, and nothing is looked up. A service
account's first answer also shows its secret, which is not in its events: created under a key,
it is kept sealed for the retries, for a day at most (services/applications.py,
ApplicationRegistry.first_secret).

Appends to a stream that exists already (a workload's runs, the fan-out) take event ids derived
from what caused them instead (services/event_ids.py); the store's replay check turns a second
attempt into the first result.
"""

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Final, TypeVar
from uuid import UUID, uuid4, uuid5

import msgspec

from domain.events import Event, EventMetadata
from services import stamps
from services.errors import IdempotencyKeyReusedError, NameTakenError, VersionConflictError
from services.ports import CreationStore, NameClaim, Stream, Uses
from services.prefetch import decided
from services.stamps import Stamps

# A fixed namespace, so an id derived from a key is the same in every process and release.
_CREATIONS: Final = UUID("9a3c1f62-4b7e-4d2a-8f15-6e0b7c9d2a41")


def creation_id(subject: str, kind: str, key: str | None) -> tuple[UUID, bool]:
    """The id of what a create makes, and whether it came from a key (else it was minted for
    this request, and no stream can hold it yet). Keys are the caller's own: two callers' equal
    keys name two things."""
    if not key:
        return uuid4(), False
    return uuid5(_CREATIONS, f"{subject}\n{kind}\n{key}"), True


Same = Callable[[Event, Event], bool]


def _equal(first: Event, second: Event) -> bool:
    return first == second


def first_creation(
    stream: Stream, would_write: Sequence[Event], stream_id: UUID, same: Same = _equal
) -> tuple[Event, ...] | None:
    """The events the stream began with, when they are this creation's (an earlier attempt
    under the same key); None when the stream is new; IdempotencyKeyReusedError otherwise."""
    if not stream.version:
        return None
    first = stream.events[: len(would_write)]
    if len(first) == len(would_write) and all(map(same, first, would_write)):
        return first
    raise IdempotencyKeyReusedError(stream_id)


class Creation(msgspec.Struct, frozen=True, kw_only=True):
    """A creation's events, whether they were written now (else an earlier attempt under the
    same key wrote them), and when and by whom they were."""

    events: Sequence[Event]
    now: bool
    stamps: Stamps


async def create_once(
    streams: CreationStore,
    stream_id: UUID,
    events: Sequence[Event],
    *,
    keyed: bool,
    metadata: EventMetadata,
    name: NameClaim | None,
    uses: Uses | None = None,
    same: Same = _equal,
    checked: Mapping[UUID, int] | None = None,
    looked_up: bool = False,
) -> Creation:
    """Append a creation's `events` as the stream's first (with its name claim and uses, and
    what it was decided on `checked`) unless an earlier attempt under the same key did; the
    creation either way. `looked_up`: the caller has just found the keyed stream empty, so it
    is not read again before the append (an attempt that got there since is met at the
    append, as any race is)."""
    if (
        keyed
        and not looked_up
        and (found := _first(await streams.load(stream_id), events, stream_id, same))
    ):
        return found
    try:
        result = await streams.append(
            stream_id,
            events,
            expected_version=0,
            metadata=metadata,
            name=name,
            uses=uses,
            checked=checked,
        )
    except (VersionConflictError, NameTakenError):
        if not keyed:
            raise
        # A concurrent attempt under the same key may have won: then its events are ours.
        if (found := _first(await streams.load(stream_id), events, stream_id, same)) is None:
            raise
        return found
    return Creation(
        events=events, now=True, stamps=stamps.appended(Stream(0, ()), result, metadata)
    )


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """What a create decided: its events, the name and uses they hold, and what its append must
    find unmoved (services/prefetch.py `decided`)."""

    events: Sequence[Event]
    name: NameClaim | None
    uses: Uses | None
    checked: dict[UUID, int] | None


Decided = TypeVar("Decided", bound=Decision)


async def create_decided(
    streams: CreationStore,
    stream_id: UUID,
    decide: Callable[[bool], Awaitable[Decided]],
    *,
    keyed: bool,
    metadata: EventMetadata,
    same: Same = _equal,
    looked_up: bool = False,
) -> tuple[Decided, Creation]:
    """`create_once` what `decide` decides, on remembered streams first (`decided`); the
    decision written, and the creation."""

    async def write(decision: Decided) -> tuple[Decided, Creation]:
        creation = await create_once(
            streams,
            stream_id,
            decision.events,
            keyed=keyed,
            metadata=metadata,
            name=decision.name,
            uses=decision.uses,
            same=same,
            checked=decision.checked,
            looked_up=looked_up,
        )
        return decision, creation

    return await decided(decide, write)


def _first(stream: Stream, events: Sequence[Event], stream_id: UUID, same: Same) -> Creation | None:
    first = first_creation(stream, events, stream_id, same)
    if first is None:
        return None
    assert stream.first is not None
    return Creation(
        events=first, now=False, stamps=Stamps(created=stream.first, updated=stream.first)
    )
