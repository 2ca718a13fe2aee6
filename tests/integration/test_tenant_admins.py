"""The database keeps one enabled tenant admin whichever way an application's events are
appended, and two transactions that each remove one of the last two admins cannot both commit."""

import asyncio
from uuid import UUID, uuid4

import asyncpg
import pytest

from domain.applications import LastTenantAdminError
from domain.events import ApplicationCreated, ApplicationEnablementChanged, EventMetadata
from domain.values import TENANT_ADMIN
from infra.postgres.connections import translated
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from services.ports.event_store import Append

pytestmark = pytest.mark.integration

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")


async def admin(store: PostgresStreams, name: str) -> UUID:
    application_id = uuid4()
    created = ApplicationCreated(
        application_id=application_id, name=name, client_id=name, grants=(TENANT_ADMIN,)
    )
    await store.append(Append(application_id, [created], expected_version=0, metadata=SYSTEM))
    return application_id


async def blocked(pool: asyncpg.Pool, pid: int) -> None:
    """Until the backend `pid` waits for a lock (PostgreSQL says so); at most 10 s."""
    query = "SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1"
    for _ in range(1000):
        if await pool.fetchval(query, pid) == "Lock":
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the second transaction never waited for the first")


def disabling(application_id: UUID) -> ApplicationEnablementChanged:
    return ApplicationEnablementChanged(application_id=application_id, enabled=False)


async def test_of_two_transactions_removing_the_last_two_admins_the_second_is_refused(
    clean_pool: asyncpg.Pool,
) -> None:
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    first, second = await admin(store, "a"), await admin(store, "b")
    async with clean_pool.acquire() as one, clean_pool.acquire() as other:
        ones, others = one.transaction(), other.transaction()
        await ones.start()
        await others.start()
        await PostgresStreams(one, DOMAIN_CODEC).append(
            Append(first, [disabling(first)], expected_version=1, metadata=SYSTEM)
        )
        # The other waits for the first transaction (the access epoch's row) ...
        waiting = asyncio.create_task(
            PostgresStreams(other, DOMAIN_CODEC).append(
                Append(second, [disabling(second)], expected_version=1, metadata=SYSTEM)
            )
        )
        await blocked(clean_pool, other.get_server_pid())
        assert not waiting.done()
        await ones.commit()
        # ... then finds the first admin gone, and that it would remove the last one.
        with pytest.raises(LastTenantAdminError):
            async with translated("append"):
                await waiting
        await others.rollback()
    rows = await clean_pool.fetch("SELECT stream_id FROM tenant_admins")
    assert [row["stream_id"] for row in rows] == [second]


async def test_an_append_that_removes_the_last_admin_writes_nothing(
    clean_pool: asyncpg.Pool,
) -> None:
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    only = await admin(store, "root")
    before = await clean_pool.fetchval("SELECT count(*) FROM events")
    with pytest.raises(LastTenantAdminError):
        await store.append(Append(only, [disabling(only)], expected_version=1, metadata=SYSTEM))
    assert await clean_pool.fetchval("SELECT count(*) FROM events") == before
