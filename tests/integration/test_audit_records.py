"""The audit records (sign-ins, refused writes): appended concurrently on one unforked chain,
never changed or deleted, and a tampered one named by `trainplate verify`."""

import asyncio
from uuid import uuid4

import asyncpg
import pytest

from infra.postgres.audit_records import PostgresAuditRecords, verify_records
from services.ports.audit_records import AuditRecord
from tests.integration.test_verify_command import verify

pytestmark = pytest.mark.integration


def record(n: int) -> AuditRecord:
    return AuditRecord(
        id=uuid4(),
        subject=f"bot-{n}",
        subject_type="App",
        action="sign-in",
        result="Failed",
        http_method="POST",
        url="/api/v1/token",
        http_status_code=401,
        metadata={"n": str(n)},
    )


async def test_concurrent_appends_make_one_chain(clean_pool: asyncpg.Pool) -> None:
    records = PostgresAuditRecords(clean_pool)
    await asyncio.gather(*(records.append(record(n)) for n in range(20)))
    async with clean_pool.acquire() as conn:
        report = await verify_records(conn)
        links = await conn.fetch("SELECT prev_hash FROM audit_records")
    assert (report.records, report.intact) == (20, True)
    assert len({row["prev_hash"] for row in links}) == 20  # no two rows follow the same one


async def test_a_record_is_never_changed_or_deleted(clean_pool: asyncpg.Pool) -> None:
    await PostgresAuditRecords(clean_pool).append(record(1))
    for statement in ("UPDATE audit_records SET subject = 'x'", "DELETE FROM audit_records"):
        with pytest.raises(asyncpg.PostgresError, match="audit records are immutable"):
            await clean_pool.execute(statement)


async def test_verify_names_the_tampered_record(
    clean_pool: asyncpg.Pool, postgres_url: str
) -> None:
    records = PostgresAuditRecords(clean_pool)
    for n in range(3):
        await records.append(record(n))
    intact = verify(postgres_url)
    assert intact.returncode == 0, intact.stdout + intact.stderr
    assert "3 audit records checked, intact" in intact.stdout
    async with clean_pool.acquire() as conn:
        await conn.execute("SET session_replication_role = replica")  # past the append-only guard
        try:
            seq = await conn.fetchval(
                "UPDATE audit_records SET result = 'Succeeded' WHERE subject = 'bot-1'"
                " RETURNING seq"
            )
        finally:
            await conn.execute("RESET session_replication_role")
    broken = verify(postgres_url)
    assert broken.returncode == 1
    assert f"broken at record {seq}: the stored hash does not match" in broken.stdout
