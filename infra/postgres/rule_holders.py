"""Whose stream holds an access rule, from the write side (migration 0020 keeps the table in the
transaction of each grant and revocation)."""

import asyncpg

from domain.commands import SubjectKind
from infra.postgres.connections import translated


class PostgresRuleHolders:
    """services/ports/name_lookups.py `RuleHolders`, from `access_rule_holders`."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def holder(self, rule_id: int) -> tuple[SubjectKind, str] | None:
        async with translated("rule_holder"):
            row = await self._pool.fetchrow(
                "SELECT subject_kind, subject_id FROM access_rule_holders WHERE rule_id = $1",
                rule_id,
            )
        if row is None:
            return None
        return ("user" if row["subject_kind"] == "user" else "application"), row["subject_id"]
