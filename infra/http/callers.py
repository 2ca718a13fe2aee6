"""The authenticated caller of a request, and what its events record about it."""

from collections.abc import Awaitable, Callable, Mapping
from http import HTTPStatus
from typing import Any, Final
from uuid import UUID

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.datastructures import State
from litestar.handlers import BaseRouteHandler
from litestar.types import Guard

from domain.events import ActorKind, EventMetadata
from domain.values import ScopeRef
from infra.http.access_cache import AccessCache
from infra.http.audit_trail import request_id
from infra.http.auth import Principal
from infra.http.consistency import standings_of
from infra.http.edge import CONSOLE
from projections.queries import Viewer
from services import access, idempotency
from services.ports.event_store import StreamLoader
from services.prefetch import actor_stream, prefetch

Caller = Request[Principal, dict[str, Any], State]
SEE_OTHER: Final = int(HTTPStatus.SEE_OTHER)


def actor(caller: Caller) -> EventMetadata:
    """Who the events of this request are recorded as caused by (never a secret), and the
    request: its id, method, path, and the status a success is answered with."""
    kind: ActorKind = "user" if caller.user.kind == "user" else "application"
    path = str(caller.scope["path"])
    console = path == CONSOLE or path.startswith(f"{CONSOLE}/")
    return EventMetadata(
        actor_subject=caller.user.subject,
        actor_kind=kind,
        request_id=request_id(caller.scope),
        http_method=caller.scope["method"],
        http_path=path,
        # The console answers a form it took by sending the browser on (303 See Other).
        http_status=SEE_OTHER if console else caller.route_handler.status_code,
    )


def creation_id(caller: Caller, kind: str) -> tuple[UUID, bool]:
    """The id of what this create makes, from its `Idempotency-Key` when it sends one
    (services/idempotency.py), and whether it came from that key (`keyed`, as every create
    command takes it: domain/commands.py)."""
    return idempotency.creation_id(caller.user.subject, kind, caller.headers.get("idempotency-key"))


Lineages = Mapping[ScopeRef, tuple[ScopeRef, ...]]


async def visibility(caller: Caller) -> tuple[frozenset[ScopeRef], Lineages]:
    """The scopes whose things the caller may see, and every live scope's lineage: from its
    grants and the org tree as of the request's start, which authentication settled
    (infra/http/access_cache.py keeps them)."""
    lineages = await lineages_of(caller)
    return await seen_by(caller, caller.user), lineages


def listed(seen: frozenset[ScopeRef], lineages: Lineages) -> frozenset[ScopeRef] | None:
    """The scopes a list is to be narrowed to: None when they are every live scope (a tenant
    admin's), which a list need not name as no thing outlives its scope."""
    return None if len(seen) == len(lineages) else seen


async def listed_scopes(caller: Caller) -> frozenset[ScopeRef] | None:
    return listed(*await visibility(caller))


async def listed_by(
    connection: ASGIConnection[Any, Any, Any, Any], user: Principal
) -> frozenset[ScopeRef] | None:
    """`listed_scopes` for `user`, before the request is settled."""
    cache: AccessCache = connection.app.state.access
    return listed(await seen_by(connection, user), await cache.lineages(user.tree_epoch))


async def seen_by(
    connection: ASGIConnection[Any, Any, Any, Any], user: Principal
) -> frozenset[ScopeRef]:
    """The scopes whose things `user` may see (`visibility`, before the request is settled)."""
    cache: AccessCache = connection.app.state.access
    return await cache.seen(user.grants, user.tree_epoch)


async def viewer(caller: Caller) -> Viewer:
    """What the caller may see, as the read side's queries take it."""
    seen, lineages = await visibility(caller)
    return Viewer(seen, lineages)


async def lineages_of(caller: Caller) -> Lineages:
    """Every live scope's lineage, as of the org tree's epoch at the request's start (a write's
    once its assumed standing is checked: the store's writer_standing.py)."""
    await standings_of(caller).confirm()
    cache: AccessCache = caller.app.state.access
    return await cache.lineages(caller.user.tree_epoch)


async def seen_scopes(caller: Caller) -> frozenset[ScopeRef]:
    """The scopes whose things the caller may see."""
    return (await visibility(caller))[0]


# A use case's check of the thing a path names, for an actor, on the write side's streams.
Check = Callable[[UUID, EventMetadata, StreamLoader], Awaitable[None]]


def guarded(check: Check, *, param: str) -> Guard:
    """A guard run before the body is read, checking the caller against the stream the path's
    `param` names, so neither its existence nor the body's shape leaks; what it read is kept for
    the use case (`guard_reads`). See docs/decisions/0029-what-a-request-reads.md."""

    async def guard(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
        caller: Caller = connection  # type: ignore[assignment]  # guards run after auth
        state: Any = connection.app.state
        found_id, metadata = connection.path_params[param], actor(caller)
        reads = await prefetch(state.streams, [found_id, actor_stream(metadata)])
        connection.state[_GUARD_READS] = reads
        await check(found_id, metadata, reads)

    return guard


_GUARD_READS: Final = "trainplate.guard_reads"


def guard_reads(caller: Caller) -> StreamLoader | None:
    """The streams the route's guard (`guarded`) read for this request, if it has one."""
    reads: StreamLoader | None = caller.state.get(_GUARD_READS)
    return reads


def visible_or_missing(
    scope_in: access.ScopeIn, missing: Callable[[UUID], Exception], *, param: str
) -> Guard:
    """`guarded` by services/access.py `require_visible`: the stream must hold something live,
    in a scope (`scope_in` of its events) the caller may see; otherwise `missing(id)`."""

    async def check(found_id: UUID, metadata: EventMetadata, streams: StreamLoader) -> None:
        await access.require_visible(
            found_id, metadata, streams=streams, scope_in=scope_in, missing=missing(found_id)
        )

    return guarded(check, param=param)
