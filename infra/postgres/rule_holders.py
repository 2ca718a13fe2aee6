"""Whose stream holds an access rule, from the write side (migration 0020 keeps the table in the
transaction of each grant and revocation)."""

import asyncpg

from infra.postgres.connections import translated


async def rule_holder(pool: asyncpg.Pool, rule_id: int) -> tuple[str, str] | None:
    """(subject kind, subject id) of the rule's holder, "application" or "user"; None when no
    rule of that id is in force."""
    async with translated("rule_holder"):
        row = await pool.fetchrow(
            "SELECT subject_kind, subject_id FROM access_rule_holders WHERE rule_id = $1", rule_id
        )
    return None if row is None else (row["subject_kind"], row["subject_id"])
