"""The event query API for audit tooling (ours, docs/audit.md): stored events filtered and paged by
a cursor, a live tail that resumes from one, and the hash-chain check. A caller sees the events of
the scopes at or under its grants; a tenant-wide grant, all (the tenant's, deleted units')."""

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Annotated, Any, Final, Literal
from uuid import UUID

import msgspec
from litestar import get
from litestar.di import NamedDependency, Provide
from litestar.params import QueryParameter
from litestar.response import ServerSentEvent, ServerSentEventMessage

from domain import access
from domain.values import TENANT, ScopeKind, ScopeRef
from infra.http.adapters import Adapters
from infra.http.callers import Caller, lineages_of
from infra.http.numerals import natural
from infra.http.openapi_document import NOT_NEGATIVE
from projections.audit_index import AuditFilter, AuditRow
from projections.list_grammar import in_utc
from projections.queries import audit_reads as queries
from services.access import require_held
from services.errors import InvalidRequestError

BASE: Final = "/api/v1/audit"
TAIL_POLL_S: Final = 0.2
KEEPALIVE_S: Final = 15.0


class AuditScope(msgspec.Struct, frozen=True):
    type: str
    id: str


class AuditEvent(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    cursor: int
    position: int
    id: UUID
    type: str
    stream_type: str
    stream_id: UUID
    version: int
    time: datetime
    actor: str
    scope: AuditScope
    metadata: dict[str, Any]
    data: dict[str, Any]


class AuditPage(msgspec.Struct, frozen=True, kw_only=True):
    events: list[AuditEvent]
    next: int | None


class Break(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    stream_id: UUID
    version: int
    event_id: UUID | None
    reason: str


class Anchor(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Where the records' chain starts once its head was pruned (`trainplate audit prune`): the
    last deleted record's seq and hash (hex) and time, the cut's date, when, and its counts."""

    seq: int
    hash: str
    logged_at: datetime
    before: datetime
    pruned_at: datetime
    deleted: int
    kept: int


class RecordsVerification(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The chain of the audit log's entries that are no event (sign-ins, refused writes)."""

    records: int
    intact: bool
    first_broken_seq: int | None
    reason: str | None
    anchor: Anchor | None = None  # it starts at this anchor, not at its first record


class Verification(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    streams: int
    intact: bool
    first_break: Break | None
    audit_records: RecordsVerification | None = None


def wire(row: AuditRow) -> AuditEvent:
    return AuditEvent(
        cursor=row.seq,
        position=row.position,
        id=row.event_id,
        type=row.type,
        stream_type=row.stream_type,
        stream_id=row.stream_id,
        version=row.version,
        time=row.recorded_at,
        actor=row.actor,
        scope=AuditScope(row.scope.kind, row.scope.id),
        metadata=json.loads(row.metadata),
        data=json.loads(row.data),
    )


async def _scopes(
    request: Caller,
    scope_type: str | None,
    scope_id: str | None,
    include_descendants: bool,
) -> tuple[ScopeRef, ...] | None:
    """The scopes whose events the caller asks for and may see (None: every one)."""
    grants = request.user.grants
    everything = access.permits(grants, (TENANT,), "viewer")
    lineages = await lineages_of(request)
    allowed = None if everything else access.governed_scopes(grants, lineages)
    if scope_type is None:
        return None if allowed is None else tuple(sorted(allowed))
    if scope_type not in ("tenant", "cluster", "department", "project"):
        raise InvalidRequestError("scopeType", "tenant, cluster, department or project")
    kind: ScopeKind = scope_type  # type: ignore[assignment]
    asked = TENANT if kind == "tenant" else ScopeRef(kind, scope_id or "")
    wanted = {asked}
    if include_descendants:
        wanted |= {scope for scope, lineage in lineages.items() if asked in lineage}
    return tuple(sorted(wanted if allowed is None else wanted & allowed))


async def audit_filter(
    request: Caller,
    adapters: NamedDependency[Adapters],
    stream_type: Annotated[str | None, QueryParameter(name="streamType")] = None,
    stream_id: Annotated[UUID | None, QueryParameter(name="streamId")] = None,
    types: Annotated[list[str] | None, QueryParameter(name="type")] = None,
    actor_subject: Annotated[str | None, QueryParameter(name="actor")] = None,
    scope_type: Annotated[str | None, QueryParameter(name="scopeType")] = None,
    scope_id: Annotated[str | None, QueryParameter(name="scopeId")] = None,
    include_descendants: Annotated[bool, QueryParameter(name="includeDescendants")] = True,
    since: Annotated[datetime | None, QueryParameter(name="from")] = None,
    until: Annotated[datetime | None, QueryParameter(name="to")] = None,
) -> AuditFilter:
    """The query both the page and the tail answer (a dependency of both)."""
    for name, moment in (("from", since), ("to", until)):
        if moment is not None and in_utc(moment) is None:
            raise InvalidRequestError(name, "a time whose UTC falls in the years 1 to 9999")
    return AuditFilter(
        stream_type=stream_type,
        stream_id=stream_id,
        types=tuple(types or ()),
        actor=actor_subject,
        scopes=await _scopes(request, scope_type, scope_id, include_descendants),
        since=since,
        until=until,
    )


FILTERED: Final = {"wanted": Provide(audit_filter)}


@get(f"{BASE}/events", dependencies=FILTERED, tags=["Audit"])
async def query_events(
    wanted: NamedDependency[AuditFilter],
    adapters: NamedDependency[Adapters],
    after: Annotated[int | None, NOT_NEGATIVE] = None,
    order: Annotated[Literal["asc", "desc"], QueryParameter()] = "asc",
    limit: Annotated[int, QueryParameter(ge=1, le=1000)] = 100,
) -> AuditPage:
    """A page of events; `next` is the cursor to pass as `after` for the following page."""
    rows = await queries.page(
        adapters.reads, wanted, after=after, newest_first=order == "desc", limit=limit
    )
    following = rows[-1].seq if len(rows) == limit else None
    return AuditPage(events=[wire(r) for r in rows], next=following)


@get(f"{BASE}/events/stream", dependencies=FILTERED, tags=["Audit"])
async def tail_events(
    request: Caller,
    wanted: NamedDependency[AuditFilter],
    adapters: NamedDependency[Adapters],
    after: Annotated[int | None, NOT_NEGATIVE] = None,
    max_events: Annotated[int | None, QueryParameter(name="maxEvents", ge=1)] = None,
) -> ServerSentEvent:
    """Server-sent events, oldest first, each with its cursor as the SSE id: from `after` (or
    the `Last-Event-ID` a reconnecting client sends; neither: from now on), for as long as the
    client stays (or until `maxEvents` were sent)."""
    resume = request.headers.get("last-event-id")
    if after is None and resume is not None:
        after = natural(resume)
        if after is None:
            raise InvalidRequestError("Last-Event-ID", "a cursor this service sent")
    if after is None:
        after = await queries.latest(adapters.reads)

    async def messages() -> AsyncIterator[ServerSentEventMessage]:
        cursor, sent, idle = after, 0, 0.0
        while max_events is None or sent < max_events:
            rows = await queries.page(
                adapters.reads, wanted, after=cursor, newest_first=False, limit=100
            )
            for row in rows[: None if max_events is None else max_events - sent]:
                body = msgspec.json.encode(wire(row)).decode()
                yield ServerSentEventMessage(data=body, event="trainplate-event", id=row.seq)
                cursor, sent = row.seq, sent + 1
            if not rows:
                idle += TAIL_POLL_S
                if idle >= KEEPALIVE_S:  # keeps proxies from closing a quiet stream
                    idle = 0.0
                    yield ServerSentEventMessage(comment="keep-alive")
                await asyncio.sleep(TAIL_POLL_S)

    return ServerSentEvent(messages())


@get(f"{BASE}/verify", tags=["Audit"])
async def verify(
    request: Caller,
    adapters: NamedDependency[Adapters],
    stream_id: Annotated[UUID | None, QueryParameter(name="streamId")] = None,
) -> Verification:
    """Walk the hash chains (one stream, or all) and report the first broken link. Needs a
    tenant-wide grant: it reads every stream."""
    require_held(request.user.grants, (TENANT,), "viewer", "verify the event store")
    found = await adapters.chains.verify(stream_id)
    broken = found.first_break
    first = None
    if broken is not None:
        first = Break(
            stream_id=broken.stream_id,
            version=broken.version,
            event_id=broken.event_id,
            reason=broken.reason,
        )
    records = None
    if found.records is not None:
        at = found.records.broken_at
        cut = found.records.anchor
        records = RecordsVerification(
            records=found.records.records,
            intact=at is None,
            first_broken_seq=None if at is None else at.seq,
            reason=None if at is None else at.reason,
            anchor=None
            if cut is None
            else Anchor(
                seq=cut.seq, hash=cut.hash, logged_at=cut.logged_at, before=cut.before,
                pruned_at=cut.pruned_at, deleted=cut.deleted, kept=cut.kept,
            ),
        )  # fmt: skip
    return Verification(
        streams=found.streams, intact=found.intact, first_break=first, audit_records=records
    )


AUDIT_ROUTES: Final = (query_events, tail_events, verify)
