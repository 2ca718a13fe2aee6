"""Authorisation for use cases: the actor's grants (its own stream) against a scope's lineage (the
org units' streams), both the write side's truth, so a grant or a new unit applies at once, with
no read-model lag. Also: domain/access.py."""

from collections.abc import Callable, Iterable
from uuid import UUID

from domain import access, applications, org_units, users
from domain.events import Event, EventMetadata
from domain.values import TENANT, Grant, Role, ScopeRef
from services.errors import NameTakenError, NotPermittedError
from services.kinds import fold_as
from services.ports.event_store import Stream, StreamLoader, StreamReader
from services.ports.name_lookups import NameHolder
from services.prefetch import actor_stream, prefetch


async def grants_of(actor: EventMetadata, *, streams: StreamLoader) -> tuple[Grant, ...]:
    """The roles an actor holds; none for an unknown, disabled or deleted application."""
    if actor.actor_kind == "user":
        return await user_grants(actor.actor_subject, streams=streams)
    try:
        application_id = UUID(actor.actor_subject)
    except ValueError:
        return ()
    state = await application(application_id, streams=streams)
    return () if state is None or not state.active else state.effective_grants


async def user_grants(subject: str, *, streams: StreamLoader) -> tuple[Grant, ...]:
    """A user's grants, from the user's stream (none for a user never granted anything)."""
    user = users.fold((await streams.load(users.stream_of(subject))).events)
    return () if user is None else user.grants


async def application(
    application_id: UUID, *, streams: StreamLoader
) -> applications.Application | None:
    """The application as its stream says (None: never created): its standing, for a login."""
    return fold_as(applications.fold, (await streams.load(application_id)).events)


async def lineage_of(scope: ScopeRef, *, streams: StreamLoader, field: str) -> tuple[ScopeRef, ...]:
    """The scope and its ancestors. A scope that does not exist is the request's fault: an
    UnknownScopeError naming `field`."""
    if scope.kind == "tenant":
        return (TENANT,)
    try:
        stream_id = org_units.stream_of(scope)
    except ValueError:  # a cluster id that is no UUID names no cluster
        raise org_units.UnknownScopeError(scope.kind, scope.id, field=field) from None
    state = fold_as(org_units.fold, (await streams.load(stream_id)).events)
    return org_units.parent(state, scope.kind, scope.id, field=field).lineage


async def sees(
    grants: tuple[Grant, ...], lineage: tuple[ScopeRef, ...], *, streams: StreamLoader
) -> bool:
    """Whether these grants show the things of `lineage[0]`: a grant on it or above it, or on a
    scope below it (the things above are usable there)."""
    if access.permits(grants, lineage, "viewer"):
        return True
    for grant in grants:
        try:
            below = await lineage_of(access.granted_scope(grant), streams=streams, field="")
        except org_units.UnknownScopeError:  # a grant on a unit since deleted shows nothing
            continue
        if lineage[0] in below:
            return True
    return False


def unseen_scope(scope: ScopeRef, *, field: str) -> Exception | None:
    """What `require` raises for a scope out of the actor's sight: that it does not exist. The
    tenant always exists, so there a refusal is only a refusal."""
    if scope.kind == "tenant":
        return None
    return org_units.UnknownScopeError(scope.kind, scope.id, field=field)


async def require(
    actor: EventMetadata,
    lineage: tuple[ScopeRef, ...],
    role: Role,
    action: str,
    *,
    streams: StreamLoader,
    unseen: Exception | None = None,
) -> None:
    """Raise NotPermittedError unless the actor holds `role` on the scope or above; `unseen`
    instead, when given, to one who may not even see it, so a refusal tells nothing of what is
    there. The service itself (bootstrap, migrations) acts as a system actor, always permitted."""
    if actor.actor_kind == "system":
        return
    grants = await grants_of(actor, streams=streams)
    if access.permits(grants, lineage, role):
        return
    if unseen is not None and not await sees(grants, lineage, streams=streams):
        raise unseen
    raise NotPermittedError(action)


async def require_in(
    actor: EventMetadata,
    scope: ScopeRef,
    role: Role,
    action: str,
    *,
    streams: StreamLoader,
    field: str,
) -> tuple[ScopeRef, ...]:
    """The scope's lineage, once the actor holds `role` on it or above (`require`). A scope
    that does not exist, or that the actor may not see, is one UnknownScopeError naming
    `field`."""
    lineage = await lineage_of(scope, streams=streams, field=field)
    unseen = unseen_scope(scope, field=field)
    await require(actor, lineage, role, action, streams=streams, unseen=unseen)
    return lineage


def require_held(
    grants: tuple[Grant, ...], lineage: tuple[ScopeRef, ...], role: Role, action: str
) -> None:
    """Raise NotPermittedError unless these grants hold `role` on the scope or above: for a
    read of the log, whose caller's grants came with the request (authentication read them
    from the caller's stream)."""
    if not access.permits(grants, lineage, role):
        raise NotPermittedError(action)


async def may_see(
    actor: EventMetadata, scope: ScopeRef, *, streams: StreamLoader, field: str
) -> bool:
    """Whether the actor may see `scope`'s things, from the write side (a unit or grant made a
    moment ago counts); UnknownScopeError naming `field` for a scope that does not exist. The
    service itself (a system actor) sees everything."""
    lineage = await lineage_of(scope, streams=streams, field=field)
    if actor.actor_kind == "system":
        return True
    return await sees(await grants_of(actor, streams=streams), lineage, streams=streams)


async def require_name_free(
    scope: ScopeRef,
    namespace: str,
    name: str,
    actor: EventMetadata,
    *,
    streams: StreamLoader,
    holder: NameHolder,
    fields: tuple[str, str],
) -> None:
    """Whether `name` is free in `namespace`, the names of things in `scope`, as a create would
    find it: UnknownScopeError (naming `fields[0]`) for a scope the actor may not see, whose
    names are not its to know; NameTakenError (naming `fields[1]`) when a stream holds it."""
    if not await may_see(actor, scope, streams=streams, field=fields[0]):
        raise org_units.UnknownScopeError(scope.kind, scope.id, field=fields[0])
    if await holder(namespace, name) is not None:
        raise NameTakenError(name, namespace=namespace, field=fields[1])


# Where a stream's events say the thing lives: None when they hold nothing live of the kind.
ScopeIn = Callable[[Iterable[Event]], ScopeRef | None]


async def require_visible(
    stream_id: UUID,
    actor: EventMetadata,
    *,
    streams: StreamLoader,
    scope_in: ScopeIn,
    missing: Exception,
) -> None:
    """Raise `missing` unless the stream (so a thing just made is found) holds something live in a
    scope the actor may see; checked before a change's body is read, so neither the thing's
    existence nor the body's shape leaks."""
    scope = scope_in((await streams.load(stream_id)).events)
    if scope is None:
        raise missing
    try:
        visible = await may_see(actor, scope, streams=streams, field="/meta")
    except org_units.UnknownScopeError:  # its scope went away: nothing there can be seen
        visible = False
    if not visible:
        raise missing


async def visible_now(
    stream_id: UUID,
    actor: EventMetadata,
    *,
    streams: StreamReader,
    scope_in: ScopeIn,
    missing: Exception,
) -> Stream:
    """The stream of something live the actor may see (else `missing`, as `require_visible`),
    read with the actor's roles in one round trip: what a change is made on, never a read
    model's copy, which may trail the write."""
    loader = await prefetch(streams, [stream_id, actor_stream(actor)])
    await require_visible(stream_id, actor, streams=loader, scope_in=scope_in, missing=missing)
    return await loader.load(stream_id)
