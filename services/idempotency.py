"""A create made safe to retry: its id is derived from the caller's `Idempotency-Key`, and a retry
is answered what the first attempt made, told by its request digest. The rules: docs/api/index.md
(Idempotency-Key); how they are kept: docs/decisions/0020-creates-safe-to-retry.md."""

import hashlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, TypeVar
from uuid import UUID, uuid4, uuid5

import msgspec

from domain.commands import SecretValues
from domain.events import Event, EventMetadata
from services import stamps
from services.errors import IdempotencyKeyReusedError, NameTakenError, VersionConflictError
from services.ports.event_store import Append, EventStore, NameClaim, Stream, Uses, Written
from services.ports.kept_secrets import SecretRow
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


def request_digest(command: msgspec.Struct, secrets: object = None) -> str:
    """What a create asked, digested the same every time: every field of its command but
    `metadata`, keys sorted. Secret values count by their names and by `secrets`, the keyed
    fingerprint its events record (CredentialVault.reference), never by the values."""
    fields = command.__struct_fields__
    asked = {field: getattr(command, field) for field in fields if field != "metadata"}
    encoded = msgspec.json.encode([asked, secrets], order="sorted", enc_hook=_named)
    return hashlib.sha256(encoded).hexdigest()


def _named(value: Any) -> Any:
    if isinstance(value, SecretValues):
        return sorted(value.reveal())  # the names given, not what they hold
    raise NotImplementedError(f"no request digest for {type(value).__name__}")


def digested(metadata: EventMetadata, digest: str | None) -> EventMetadata:
    """The creation's metadata, carrying its request's digest when it was sent under a key."""
    if digest is None:
        return metadata
    return msgspec.structs.replace(metadata, request_digest=digest)


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
    streams: EventStore,
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
    secret: SecretRow | None = None,
) -> Creation:
    """Append a creation's `events` as the stream's first (with its name claim, uses and
    `checked`) unless an earlier attempt under the same key did; the creation either way.
    `looked_up`: the caller just found the stream empty, so a race is met at the append."""
    if (
        keyed
        and not looked_up
        and (found := _first(await streams.load(stream_id), events, stream_id, same, metadata))
    ):
        return found
    try:
        result = await streams.append(
            Append(
                stream_id,
                events,
                expected_version=0,
                metadata=metadata,
                name=name,
                uses=uses,
                checked=checked,
                secret=secret,
            )
        )
    except (VersionConflictError, NameTakenError):
        if not keyed:
            raise
        # A concurrent attempt under the same key may have won: then its events are ours.
        stream = await streams.load(stream_id)
        if (found := _first(stream, events, stream_id, same, metadata)) is None:
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
    streams: EventStore,
    stream_id: UUID,
    decide: Callable[[bool], Awaitable[Decided]],
    *,
    request: msgspec.Struct | None,
    secrets: object = None,
    keyed: bool,
    metadata: EventMetadata,
    same: Same = _equal,
    looked_up: bool = False,
    secret: SecretRow | None = None,
) -> tuple[Decided | None, Creation]:
    """`create_once` what `decide` decides, on remembered streams first (`decided`). Keyed, with
    `request` (the command; None: the caller looked the stream up), an earlier attempt's creation
    of the same request is answered with no decision, even where the create would now be refused."""
    if keyed and request is not None:
        metadata = digested(metadata, request_digest(request, secrets))
        if not looked_up:
            stream = await streams.load(stream_id)
            if (first := answered(stream, stream_id, metadata)) is not None:
                return None, first
            looked_up = not stream.version

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
            secret=secret,
        )
        return decision, creation

    return await decided(decide, write)


def answered(stream: Stream, stream_id: UUID, metadata: EventMetadata) -> Creation | None:
    """The creation an earlier attempt under the key made, told by its request digest (see
    `_by_digest`); None when the stream is new, or was made before requests were digested."""
    return _by_digest(stream, stream_id, metadata) if stream.version else None


def _by_digest(stream: Stream, stream_id: UUID, metadata: EventMetadata) -> Creation | None:
    """The creation the stream begins with (the events of the append that carried the digest),
    when it is this request's; IdempotencyKeyReusedError for another's. None when either has no
    digest (the stream was written before requests were digested)."""
    first = stream.first
    if first is None or first.request is None or metadata.request_digest is None:
        return None
    if first.request != metadata.request_digest:
        raise IdempotencyKeyReusedError(stream_id)
    count = next(
        (i for i, written in enumerate(stream.written) if written.request != first.request),
        len(stream.written),
    )
    shown = Written(first.at, first.by)  # as the first attempt's answer stamped it
    return Creation(
        events=stream.events[:count], now=False, stamps=Stamps(created=shown, updated=shown)
    )


def _first(
    stream: Stream,
    events: Sequence[Event],
    stream_id: UUID,
    same: Same,
    metadata: EventMetadata,
) -> Creation | None:
    if (by_digest := answered(stream, stream_id, metadata)) is not None:
        return by_digest
    first = first_creation(stream, events, stream_id, same)
    if first is None:
        return None
    assert stream.first is not None
    return Creation(
        events=first, now=False, stamps=Stamps(created=stream.first, updated=stream.first)
    )
