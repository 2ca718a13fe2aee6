"""Read model of policies: one row per scope's live policy, with what it sets. A scope's
effective policy is its lineage's rows merged (domain/policies.py `effective`), at read time:
a lineage holds at most four policies."""

from collections.abc import Sequence
from datetime import datetime
from typing import Final
from uuid import UUID

import asyncpg
import msgspec

from domain.events import PolicyApplied, PolicyDeleted, RecordedEvent
from domain.policies import Effective, Placement, PolicyBody, effective
from domain.values import ScopeRef
from projections import epochs
from projections.executor import Executor

NAME: Final = "policy_catalogue"
EPOCH: Final = "policy_epoch"


class PolicyRow(msgspec.Struct, frozen=True, kw_only=True):
    policy_id: UUID
    name: str
    scope: ScopeRef
    placement: Placement
    body: PolicyBody
    created_at: datetime
    created_by: str
    updated_at: datetime
    updated_by: str


class _Body(PolicyBody, frozen=True, kw_only=True, rename="camel"):
    """The row's `body`: what the scope sets, as its event has it (camelCase)."""


_encode = msgspec.json.Encoder().encode

_decode = msgspec.json.Decoder(_Body).decode


async def apply(conn: Executor, recorded: RecordedEvent) -> None:
    """Fold one event in; safe to run twice (the row carries the stream version)."""
    at, by, version = recorded.recorded_at, recorded.metadata.actor_subject, recorded.version
    match recorded.event:
        case PolicyApplied() as e:
            body = _Body(
                worker_defaults=e.worker_defaults, master_defaults=e.master_defaults, rules=e.rules
            )
            await conn.execute(
                "INSERT INTO policy_catalogue (policy_id, workload_type, scope_kind, scope_id,"
                " cluster_id, department_id, project_id, body, created_at, created_by,"
                " updated_at, updated_by, version, name)"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $9, $10, $11, $12)"
                " ON CONFLICT (policy_id) DO UPDATE SET body = EXCLUDED.body,"
                " name = EXCLUDED.name,"
                " cluster_id = EXCLUDED.cluster_id, department_id = EXCLUDED.department_id,"
                " project_id = EXCLUDED.project_id, updated_at = EXCLUDED.updated_at,"
                " updated_by = EXCLUDED.updated_by, version = EXCLUDED.version"
                " WHERE policy_catalogue.version < EXCLUDED.version",
                e.policy_id, e.workload_type, e.scope, e.scope_id, e.cluster_id,
                e.department_id, e.project_id, _encode(body).decode(), at, by, version, e.name,
            )  # fmt: skip
        case PolicyDeleted() as e:
            await conn.execute(
                "DELETE FROM policy_catalogue WHERE policy_id = $1 AND version < $2",
                e.policy_id, version,
            )  # fmt: skip
        case _:
            return  # not an event this read model cares about
    await epochs.touch(conn, "policy_epoch")


_COLUMNS: Final = """policy_id, name, scope_kind, scope_id, cluster_id, department_id, project_id,
    body::text AS body, created_at, created_by, updated_at, updated_by"""


def _row(record: asyncpg.Record) -> PolicyRow:
    body = _decode(record["body"])
    return PolicyRow(
        policy_id=record["policy_id"],
        name=record["name"],
        scope=ScopeRef(record["scope_kind"], record["scope_id"]),
        placement=Placement(
            cluster_id=record["cluster_id"],
            department_id=record["department_id"],
            project_id=record["project_id"],
        ),
        body=PolicyBody(
            worker_defaults=body.worker_defaults,
            master_defaults=body.master_defaults,
            rules=body.rules,
        ),
        created_at=record["created_at"],
        created_by=record["created_by"],
        updated_at=record["updated_at"],
        updated_by=record["updated_by"],
    )


async def of_scopes(conn: Executor, scopes: Sequence[ScopeRef]) -> dict[ScopeRef, PolicyRow]:
    """The distributed policies these scopes hold, by scope."""
    rows = await conn.fetch(
        f"SELECT {_COLUMNS} FROM policy_catalogue WHERE workload_type = 'distributed'"
        " AND (scope_kind, scope_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))",
        [s.kind for s in scopes], [s.id for s in scopes],
    )  # fmt: skip
    found = [_row(r) for r in rows]
    return {row.scope: row for row in found}


async def list_all(conn: Executor) -> list[PolicyRow]:
    rows = await conn.fetch(
        f"SELECT {_COLUMNS} FROM policy_catalogue WHERE workload_type = 'distributed'"
        " ORDER BY scope_kind, scope_id"
    )
    return [_row(r) for r in rows]


def in_force(lineage: Sequence[ScopeRef], held: dict[ScopeRef, PolicyRow]) -> Effective:
    """The effective policy at `lineage[0]`, from the rows its lineage holds."""
    chain = [(scope, held[scope].body) for scope in reversed(lineage) if scope in held]
    return effective(chain)


async def effective_at(conn: Executor, lineage: Sequence[ScopeRef]) -> Effective:
    return in_force(lineage, await of_scopes(conn, lineage))
