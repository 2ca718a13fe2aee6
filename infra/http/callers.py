"""The authenticated caller of a request, and what its events record about it."""

from typing import Any

from litestar import Request
from litestar.datastructures import State

from domain import access as access_rules
from domain.events import ActorKind, EventMetadata
from domain.org_units import UnknownScopeError
from domain.values import ScopeRef
from infra.http.auth import Principal
from services import access
from services.ports import OrgTree, StreamLoader

Caller = Request[Principal, dict[str, Any], State]


def actor(caller: Caller) -> EventMetadata:
    """Who the events of this request are recorded as caused by (never a secret)."""
    kind: ActorKind = "user" if caller.user.kind == "user" else "application"
    request_id = caller.headers.get("x-request-id")
    return EventMetadata(actor_subject=caller.user.subject, actor_kind=kind, request_id=request_id)


async def visibility(
    caller: Caller, streams: StreamLoader, tree: OrgTree
) -> tuple[set[ScopeRef], dict[ScopeRef, tuple[ScopeRef, ...]]]:
    """The scopes whose things the caller may see, and every live scope's lineage."""
    grants = await access.grants_of(actor(caller), streams=streams)
    lineages = await tree.lineages()
    return access_rules.visible_scopes(grants, lineages), lineages


async def seen_scopes(caller: Caller, streams: StreamLoader, tree: OrgTree) -> set[ScopeRef]:
    """The scopes whose things the caller may see."""
    return (await visibility(caller, streams, tree))[0]


async def may_see(caller: Caller, scope: ScopeRef, streams: StreamLoader, *, field: str) -> bool:
    """Whether the caller may see the things of `scope`: a grant on it or above it, or on a
    scope below it (the things above are usable there). From the write side, as authorisation
    is: a unit or a grant made a moment ago counts. A scope that does not exist raises
    UnknownScopeError naming `field`."""
    lineage = await access.lineage_of(scope, streams=streams, field=field)
    grants = await access.grants_of(actor(caller), streams=streams)
    if access_rules.permits(grants, lineage, "viewer"):
        return True
    for grant in grants:
        try:
            below = await access.lineage_of(
                access_rules.granted_scope(grant), streams=streams, field=field
            )
        except UnknownScopeError:  # a grant on a unit since deleted shows nothing
            continue
        if scope in below:
            return True
    return False
