"""Application (service account) use cases. No SQL, no hashing, no HTTP in this module.

Applications, layer by layer: domain/applications.py the rules, services/applications.py the use
cases.
"""

import msgspec

from domain import applications
from domain.commands import (
    CreateApplication,
    DeleteApplication,
    RotateApplicationSecret,
    SetApplicationEnabled,
)
from domain.events import EventMetadata
from domain.values import TENANT
from services import access, stamps
from services.errors import FirstSecretGoneError, VersionConflictError
from services.idempotency import first_creation
from services.kinds import fold_as
from services.ports.event_store import Append, AppendResult, EventStore, Stream, StreamLoader
from services.ports.kept_secrets import (
    ApplicationRegistry,
    ApplicationSecret,
    ApplicationSecretDestroyed,
    ApplicationSecretReplaced,
)
from services.races import decided_again
from services.stamps import Stamped


async def require_admin(actor: EventMetadata, action: str, *, streams: StreamLoader) -> None:
    """Applications are the tenant admins' to list, read and change: NotPermittedError for
    anyone else (through services/access, as every authorisation; the service itself, a
    system actor, is permitted)."""
    await access.require(actor, (TENANT,), "admin", action, streams=streams)


class Registration(msgspec.Struct, frozen=True, kw_only=True):
    """A created application's secret: the one given, or, when an earlier attempt under the
    same Idempotency-Key created it, that attempt's. `now`: created by this call."""

    secret: str
    now: bool


@decided_again
async def create_application(
    cmd: CreateApplication, *, secret: str, store: EventStore, registry: ApplicationRegistry
) -> Registration:
    """Register an application whose client id is its name; the secret is shown to the caller
    once, by the caller, and kept here only as a hash (and, for a create under an
    Idempotency-Key, sealed, to answer its retries: services/idempotency.py)."""
    await require_admin(cmd.metadata, "create service accounts", streams=store)
    stream = await store.load(cmd.application_id)
    if cmd.keyed and stream.version:
        return await _first_answer(registry, cmd, stream)
    events = applications.create(
        fold_as(applications.fold, stream.events),
        cmd.application_id,
        name=cmd.name,
        client_id=cmd.name,
        grants=cmd.grants,
    )
    try:
        await store.append(
            Append(
                cmd.application_id,
                events,
                expected_version=stream.version,
                metadata=cmd.metadata,
                secret=ApplicationSecret(
                    client_id=cmd.name, secret=secret, kept_for_retries=cmd.keyed
                ),
            )
        )
    except VersionConflictError:
        # A concurrent attempt under the same key may have won: then its answer is ours.
        stream = await store.load(cmd.application_id)
        if not cmd.keyed or not stream.version:
            raise
        return await _first_answer(registry, cmd, stream)
    return Registration(secret=secret, now=True)


async def _first_answer(
    registry: ApplicationRegistry, cmd: CreateApplication, stream: Stream
) -> Registration:
    """What the earlier attempt under the same key, which began `stream`, was answered.
    IdempotencyKeyReusedError when the key made something else; FirstSecretGoneError when the
    secret is kept no more."""
    would_write = applications.create(
        None, cmd.application_id, name=cmd.name, client_id=cmd.name, grants=cmd.grants
    )
    first = first_creation(stream, would_write, cmd.application_id)
    assert first is not None, "the stream has begun"
    kept = await registry.first_secret(cmd.application_id)
    if kept is None:
        raise FirstSecretGoneError(cmd.application_id)
    return Registration(secret=kept, now=False)


@decided_again
async def delete_application(cmd: DeleteApplication, *, store: EventStore) -> None:
    """Delete an application and destroy its secret; deleting it again is a no-op."""
    await require_admin(cmd.metadata, "delete service accounts", streams=store)
    stream = await store.load(cmd.application_id)
    events = applications.delete(fold_as(applications.fold, stream.events), cmd.application_id)
    if events:
        await store.append(
            Append(
                cmd.application_id,
                events,
                expected_version=stream.version,
                metadata=cmd.metadata,
                secret=ApplicationSecretDestroyed(),
            )
        )


@decided_again
async def rotate_application_secret(
    cmd: RotateApplicationSecret, *, secret: str, store: EventStore
) -> AppendResult:
    """Give a live application a new secret; the old one stops working at once."""
    await require_admin(cmd.metadata, "regenerate service account secrets", streams=store)
    stream = await store.load(cmd.application_id)
    events = applications.rotate_secret(
        fold_as(applications.fold, stream.events), cmd.application_id
    )
    return await store.append(
        Append(
            cmd.application_id,
            events,
            expected_version=stream.version,
            metadata=cmd.metadata,
            secret=ApplicationSecretReplaced(secret),
        )
    )


@decided_again
async def set_application_enabled(
    cmd: SetApplicationEnabled, *, store: EventStore
) -> Stamped[applications.Application]:
    """Disable (or enable again) an application; return it as it now is."""
    await require_admin(cmd.metadata, "update service accounts", streams=store)
    stream = await store.load(cmd.application_id)
    state = fold_as(applications.fold, stream.events)
    events = applications.set_enabled(state, cmd.application_id, enabled=cmd.enabled)
    updated = fold_as(applications.fold, (*stream.events, *events))
    assert updated is not None
    if not events:
        return Stamped(state=updated, stamps=stamps.loaded(stream))
    result = await store.append(
        Append(cmd.application_id, events, expected_version=stream.version, metadata=cmd.metadata)
    )
    return Stamped(state=updated, stamps=stamps.appended(stream, result, cmd.metadata))
