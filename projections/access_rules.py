"""Read model of access rules: one row per role an application was granted and still holds.

Access rules, layer by layer: services/access_rules.py the use cases, projections/access_rules.py
the read model, infra/http/access_rules.py the HTTP routes.
"""

from datetime import datetime
from typing import Final

import asyncpg
import msgspec

from domain.events import (
    ApplicationDeleted,
    ApplicationRoleGranted,
    ApplicationRoleRevoked,
    RecordedEvent,
    UserRoleGranted,
    UserRoleRevoked,
)
from domain.values import AccessRule, Role, ScopeKind
from projections.executor import Executor

NAME: Final = "access_rules"


class AccessRuleRow(msgspec.Struct, frozen=True, kw_only=True):
    rule_id: int
    subject_type: str  # "app" or "user"
    subject_id: str
    role: Role
    scope_kind: ScopeKind
    scope_id: str
    scope_name: str
    created_at: datetime
    created_by: str


async def apply(conn: Executor, recorded: RecordedEvent) -> None:
    """Fold one event in; safe to run twice."""
    match recorded.event:
        case ApplicationRoleGranted() as e:
            await _insert(conn, recorded, "app", str(e.application_id), e.rule)
        case UserRoleGranted() as e:
            await _insert(conn, recorded, "user", e.subject, e.rule)
        case ApplicationRoleRevoked() | UserRoleRevoked() as e:
            await conn.execute("DELETE FROM access_rules WHERE rule_id = $1", e.rule_id)
        case ApplicationDeleted() as e:
            await conn.execute(
                "DELETE FROM access_rules WHERE subject_type = 'app' AND subject_id = $1",
                str(e.application_id),
            )
        case _:
            pass  # not an event this read model cares about


async def _insert(
    conn: Executor, recorded: RecordedEvent, subject_type: str, subject_id: str, rule: AccessRule
) -> None:
    await conn.execute(
        "INSERT INTO access_rules (rule_id, subject_type, subject_id, role, scope_kind, scope_id,"
        " created_at, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
        " ON CONFLICT (rule_id) DO NOTHING",
        rule.rule_id, subject_type, subject_id, rule.grant.role, rule.grant.scope_kind,
        rule.grant.scope_id, recorded.recorded_at, recorded.metadata.actor_subject,
    )  # fmt: skip


# The scope's name comes from the org units read model at read time: names can change.
SELECT: Final = """
SELECT r.rule_id, r.subject_type, r.subject_id, r.role, r.scope_kind, r.scope_id,
       coalesce(o.name, r.scope_id) AS scope_name, r.created_at, r.created_by
  FROM access_rules r
  LEFT JOIN org_units o ON o.kind = r.scope_kind AND o.id = r.scope_id
"""


def row_of(record: asyncpg.Record) -> AccessRuleRow:
    return AccessRuleRow(**dict(record))


async def list_rules(conn: Executor) -> list[AccessRuleRow]:
    return [row_of(r) for r in await conn.fetch(f"{SELECT} ORDER BY r.rule_id")]


async def get_rule(conn: Executor, rule_id: int) -> AccessRuleRow | None:
    if not 0 < rule_id < 2**31:  # rule ids are positive int4: no rule has another
        return None
    row = await conn.fetchrow(f"{SELECT} WHERE r.rule_id = $1", rule_id)
    return None if row is None else row_of(row)


async def rules_of(conn: Executor, subject_type: str, subject_id: str) -> list[AccessRuleRow]:
    """The rules one subject holds (`app` or `user`), oldest first."""
    rows = await conn.fetch(
        f"{SELECT} WHERE r.subject_type = $1 AND r.subject_id = $2 ORDER BY r.rule_id",
        subject_type,
        subject_id,
    )
    return [row_of(r) for r in rows]
