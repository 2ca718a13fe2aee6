"""Read model for audit tooling: every event with its actor, scope, type and time, filterable and
paged by a cursor (`seq`, the order rows were indexed in). An event's scope is its thing's: an org
unit's own, where an asset, template or workload was created, a policy's scope, else the tenant."""

from collections.abc import Sequence
from datetime import datetime
from typing import Final
from uuid import UUID

import asyncpg
import msgspec

from domain.events import (
    ClusterCreated,
    ComputeCreated,
    CredentialCreated,
    DataSourceCreated,
    DataVolumeCreated,
    DepartmentCreated,
    EnvironmentCreated,
    Event,
    PolicyApplied,
    ProjectCreated,
    RecordedEvent,
    RegistryCreated,
    TemplateCreated,
    WorkloadRequested,
)
from domain.values import TENANT, ScopeRef
from projections.executor import Executor

NAME: Final = "audit_index"
TABLES: Final = ("audit_index", "audit_streams")


def scope_stated(event: Event) -> ScopeRef | None:
    """The scope a stream's first event names, if it names one."""
    match event:
        case ClusterCreated():
            return ScopeRef("cluster", str(event.cluster_id))
        case DepartmentCreated():
            return ScopeRef("department", event.department_id)
        case ProjectCreated():
            return ScopeRef("project", event.project_id)
        case (
            EnvironmentCreated() | ComputeCreated() | DataSourceCreated() | CredentialCreated()
            | RegistryCreated() | DataVolumeCreated() | TemplateCreated()
        ):  # fmt: skip
            return event.meta.scope_ref
        case WorkloadRequested():
            return ScopeRef("project", event.project_id)
        case PolicyApplied():  # each policy is its scope's
            return ScopeRef(event.scope, event.scope_id)
        case _:
            return None


async def apply_batch(conn: Executor, batch: Sequence[RecordedEvent]) -> None:
    """Index a batch as event by event would, in at most three round trips: the streams' scopes
    read once, then followed in memory; safe to run twice (positions are unique)."""
    if not batch:
        return
    streams = list(dict.fromkeys(recorded.stream_id for recorded in batch))
    rows = await conn.fetch(
        "SELECT stream_id, scope_kind, scope_id FROM audit_streams"
        " WHERE stream_id = ANY($1::uuid[])",
        streams,
    )
    scopes = {row["stream_id"]: ScopeRef(row["scope_kind"], row["scope_id"]) for row in rows}
    new: dict[UUID, ScopeRef] = {}
    scoped: list[ScopeRef] = []  # each event's scope, in order
    for recorded in batch:
        scope = scope_stated(recorded.event)
        if scope is None:
            scope = scopes.get(recorded.stream_id, TENANT)
        elif recorded.stream_id not in scopes:  # a stream's first stated scope is its own
            scopes[recorded.stream_id] = new[recorded.stream_id] = scope
        scoped.append(scope)
    if new:
        await conn.execute(
            "INSERT INTO audit_streams (stream_id, scope_kind, scope_id)"
            " SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[])"
            " ON CONFLICT (stream_id) DO NOTHING",
            list(new), [s.kind for s in new.values()], [s.id for s in new.values()],
        )  # fmt: skip
    # `seq` is given in the batch's order (the ordinality), as event by event.
    await conn.execute(
        "INSERT INTO audit_index (global_position, event_id, stream_type, stream_id, version,"
        " type, actor, scope_kind, scope_id, recorded_at)"
        " SELECT r.global_position, r.event_id, r.stream_type, r.stream_id, r.version, r.type,"
        "   r.actor, r.scope_kind, r.scope_id, r.recorded_at"
        " FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::uuid[], $5::int[], $6::text[],"
        "   $7::text[], $8::text[], $9::text[], $10::timestamptz[]) WITH ORDINALITY"
        "   AS r(global_position, event_id, stream_type, stream_id, version, type, actor,"
        "   scope_kind, scope_id, recorded_at, n)"
        " ORDER BY r.n"
        " ON CONFLICT (global_position) DO NOTHING",
        [r.position for r in batch], [r.event_id for r in batch],
        [r.stream_type for r in batch], [r.stream_id for r in batch],
        [r.version for r in batch], [_tag(r.event) for r in batch],
        [r.metadata.actor_subject for r in batch], [s.kind for s in scoped],
        [s.id for s in scoped], [r.recorded_at for r in batch],
    )  # fmt: skip


async def apply(conn: Executor, recorded: RecordedEvent) -> None:
    """Index one event: a batch of one."""
    await apply_batch(conn, [recorded])


def _tag(event: Event) -> str:
    tag = type(event).__struct_config__.tag
    return tag if isinstance(tag, str) else type(event).__name__


class AuditFilter(msgspec.Struct, frozen=True, kw_only=True):
    stream_type: str | None = None
    stream_id: UUID | None = None
    types: tuple[str, ...] = ()
    actor: str | None = None
    scopes: tuple[ScopeRef, ...] | None = None  # None: any scope
    since: datetime | None = None
    until: datetime | None = None


class AuditRow(msgspec.Struct, frozen=True, kw_only=True):
    seq: int
    position: int
    event_id: UUID
    stream_type: str
    stream_id: UUID
    version: int
    type: str
    actor: str
    scope: ScopeRef
    recorded_at: datetime
    metadata: str  # the stored JSON, as written
    data: str


async def find(
    conn: Executor, wanted: AuditFilter, *, after: int | None, newest_first: bool, limit: int
) -> list[AuditRow]:
    """A page of matching events, after the cursor `after` in the chosen direction."""
    scope_kinds = [s.kind for s in wanted.scopes] if wanted.scopes is not None else None
    scope_ids = [s.id for s in wanted.scopes] if wanted.scopes is not None else None
    order = "DESC" if newest_first else "ASC"
    beyond = "a.seq < $11" if newest_first else "a.seq > $11"
    rows = await conn.fetch(
        "SELECT a.seq, a.global_position, a.event_id, a.stream_type, a.stream_id, a.version,"
        " a.type, a.actor, a.scope_kind, a.scope_id, a.recorded_at,"
        " e.metadata::text AS metadata, e.data::text AS data"
        " FROM audit_index a JOIN events e ON e.global_position = a.global_position"
        " WHERE ($1::text IS NULL OR a.stream_type = $1)"
        " AND ($2::uuid IS NULL OR a.stream_id = $2)"
        " AND (cardinality($3::text[]) = 0 OR a.type = ANY($3))"
        " AND ($4::text IS NULL OR a.actor = $4)"
        " AND ($5::text[] IS NULL OR (a.scope_kind, a.scope_id) IN"
        "      (SELECT * FROM unnest($5::text[], $6::text[])))"
        " AND ($7::timestamptz IS NULL OR a.recorded_at >= $7)"
        " AND ($8::timestamptz IS NULL OR a.recorded_at < $8)"
        f" AND ($9::bool OR {beyond})"
        f" ORDER BY a.seq {order} LIMIT $10",
        wanted.stream_type, wanted.stream_id, list(wanted.types), wanted.actor, scope_kinds,
        scope_ids, wanted.since, wanted.until, after is None, limit, after or 0,
    )  # fmt: skip
    return [_row(r) for r in rows]


def _row(record: asyncpg.Record) -> AuditRow:
    return AuditRow(
        seq=record["seq"],
        position=record["global_position"],
        event_id=record["event_id"],
        stream_type=record["stream_type"],
        stream_id=record["stream_id"],
        version=record["version"],
        type=record["type"],
        actor=record["actor"],
        scope=ScopeRef(record["scope_kind"], record["scope_id"]),
        recorded_at=record["recorded_at"],
        metadata=record["metadata"],
        data=record["data"],
    )
