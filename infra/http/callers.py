"""The authenticated caller of a request, and what its events record about it."""

from collections.abc import Callable, Iterable, Mapping
from typing import Any
from uuid import UUID

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.datastructures import State
from litestar.handlers import BaseRouteHandler
from litestar.types import Guard

from domain import access as access_rules
from domain.events import ActorKind, Event, EventMetadata
from domain.org_units import UnknownScopeError
from domain.values import ScopeRef
from infra.http.access_cache import AccessCache
from infra.http.auth import Principal
from services import access, idempotency
from services.ports import StreamLoader

Caller = Request[Principal, dict[str, Any], State]


def actor(caller: Caller) -> EventMetadata:
    """Who the events of this request are recorded as caused by (never a secret)."""
    kind: ActorKind = "user" if caller.user.kind == "user" else "application"
    request_id = caller.headers.get("x-request-id")
    return EventMetadata(actor_subject=caller.user.subject, actor_kind=kind, request_id=request_id)


def creation_id(caller: Caller, kind: str) -> tuple[UUID, bool]:
    """The id of what this create makes, from its `Idempotency-Key` when it sends one
    (services/idempotency.py), and whether it was minted for this request."""
    return idempotency.creation_id(caller.user.subject, kind, caller.headers.get("idempotency-key"))


Lineages = Mapping[ScopeRef, tuple[ScopeRef, ...]]


async def visibility(caller: Caller) -> tuple[set[ScopeRef], Lineages]:
    """The scopes whose things the caller may see, and every live scope's lineage: from its
    grants and the org tree as of the request's start, which authentication settled
    (infra/http/access_cache.py keeps them)."""
    lineages = await lineages_of(caller)
    return access_rules.visible_scopes(caller.user.grants, lineages), lineages


async def lineages_of(caller: Caller) -> Lineages:
    """Every live scope's lineage, as of the org tree's epoch at the request's start."""
    cache: AccessCache = caller.app.state.access
    return await cache.lineages(caller.user.tree_epoch)


async def seen_scopes(caller: Caller) -> set[ScopeRef]:
    """The scopes whose things the caller may see."""
    return (await visibility(caller))[0]


async def may_see(caller: Caller, scope: ScopeRef, streams: StreamLoader, *, field: str) -> bool:
    """Whether the caller may see the things of `scope`. From the write side, as authorisation
    is: a unit or a grant made a moment ago counts. A scope that does not exist raises
    UnknownScopeError naming `field`."""
    lineage = await access.lineage_of(scope, streams=streams, field=field)
    grants = await access.grants_of(actor(caller), streams=streams)
    return await access.sees(grants, lineage, streams=streams)


def visible_or_missing(
    scope_in: Callable[[Iterable[Event]], ScopeRef | None],
    missing: Callable[[UUID], Exception],
    *,
    param: str,
) -> Guard:
    """A guard run before the body is read: the stream the path's `param` names must hold
    something live, of the route's kind, in a scope (`scope_in` of its events; None when not)
    the caller may see; otherwise `missing(id)`, whatever the body, so neither its existence nor
    its shape leaks. From the stream, so a thing created a moment ago is found."""

    async def guard(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
        found_id: UUID = connection.path_params[param]
        state: Any = connection.app.state
        scope = scope_in((await state.streams.load(found_id)).events)
        if scope is None:
            raise missing(found_id)
        caller: Caller = connection  # type: ignore[assignment]  # guards run after auth
        try:
            visible = await may_see(caller, scope, state.streams, field="/meta")
        except UnknownScopeError:  # its scope went away: nothing there can be seen
            visible = False
        if not visible:
            raise missing(found_id)

    return guard
