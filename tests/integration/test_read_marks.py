"""A request's standing query (infra/postgres/read_marks.py) as PostgreSQL plans it: a read's
check is planned once per connection, however many writes' standings the connection served."""

import asyncpg
import pytest

from infra.postgres.read_marks import standing
from infra.server.app import FOLLOWERS, READ_MODELS

pytestmark = pytest.mark.integration


async def test_a_reads_check_is_not_planned_afresh_at_every_execution(
    clean_pool: asyncpg.Pool, postgres_url: str
) -> None:
    subject = "a-caller"
    # A connection of its own: the shared pool's hold the statements earlier tests prepared.
    conn = await asyncpg.connect(postgres_url)
    try:
        # Writes first: their standings once made a shared statement's custom plans look cheap.
        for _ in range(10):
            assert (await standing(conn, subject, FOLLOWERS, READ_MODELS, reads=False)).ready
        for _ in range(20):
            assert (await standing(conn, subject, FOLLOWERS, READ_MODELS, reads=True)).ready
        found = await conn.fetch(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE '%downstream' || '_marks%'"  # split: not this query itself
        )
    finally:
        await conn.close()
    assert len(found) == 1  # the read's standing; a write's reads no marks
    plans = found[0]
    # PostgreSQL tries five custom plans before it weighs the generic one.
    assert plans["custom_plans"] <= 5
    assert plans["generic_plans"] >= 15
