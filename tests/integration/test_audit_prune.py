"""`trainplate audit prune --before`: the audit records logged before a date deleted in one
transaction, an anchor of the cut kept and printed, and the chain verified from it; a record is
deleted only under an anchor, anchors never change, and a broken chain is not cut."""

import json
import subprocess
from datetime import UTC, datetime

import asyncpg
import pytest

from infra.postgres.audit_records import PostgresAuditRecords, verify_records
from infra.postgres.audit_retention import BrokenChainError, prune_records
from tests.integration.test_audit_records import record
from tests.integration.test_verify_command import trainplate, verify

pytestmark = pytest.mark.integration


def audit(postgres_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return trainplate(postgres_url, "audit", *args)


async def appended(pool: asyncpg.Pool, *numbers: int) -> None:
    records = PostgresAuditRecords(pool)
    for n in numbers:
        await records.append(record(n))


async def test_the_head_is_cut_under_a_printed_anchor_and_the_chain_verifies_from_it(
    clean_pool: asyncpg.Pool, postgres_url: str
) -> None:
    await appended(clean_pool, 0, 1, 2)
    cut: datetime = await clean_pool.fetchval("SELECT clock_timestamp()")
    await appended(clean_pool, 3, 4)
    last = await clean_pool.fetchrow(
        "SELECT seq, hash FROM audit_records ORDER BY seq LIMIT 1 OFFSET 2"
    )
    assert last is not None

    pruned = audit(postgres_url, "prune", "--before", cut.isoformat())
    assert pruned.returncode == 0, pruned.stdout + pruned.stderr
    assert f"deleted 3 audit records logged before {cut.isoformat()}; 2 kept" in pruned.stdout
    anchor = json.loads(pruned.stdout.split("anchor (keep it apart from the database): ")[1])
    assert (anchor["seq"], anchor["hash"]) == (last["seq"], last["hash"].hex())
    assert (anchor["deleted"], anchor["kept"]) == (3, 2)
    subjects = await clean_pool.fetch("SELECT subject FROM audit_records ORDER BY seq")
    assert [row["subject"] for row in subjects] == ["bot-3", "bot-4"]

    checked = verify(postgres_url)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"audit records start at the anchor of record {last['seq']}" in checked.stdout
    assert "2 audit records checked, intact" in checked.stdout

    await appended(clean_pool, 5)  # the chain goes on
    async with clean_pool.acquire() as conn:
        report = await verify_records(conn)
    assert (report.records, report.intact, report.anchor is not None) == (3, True, True)
    again = audit(postgres_url, "prune", "--before", cut.isoformat())
    assert again.returncode == 0, again.stdout + again.stderr
    assert "nothing deleted" in again.stdout


async def test_every_record_pruned_the_next_goes_on_from_the_anchor(
    clean_pool: asyncpg.Pool,
) -> None:
    await appended(clean_pool, 0, 1)
    async with clean_pool.acquire() as conn:
        anchor = await prune_records(conn, datetime.now(UTC))
        assert anchor is not None
        assert (anchor.deleted, anchor.kept) == (2, 0)
        await appended(clean_pool, 2)
        first = await conn.fetchval("SELECT prev_hash FROM audit_records")
        report = await verify_records(conn)
    assert first.hex() == anchor.hash
    assert (report.records, report.intact) == (1, True)


async def test_a_record_goes_only_under_an_anchor_and_an_anchor_never_changes(
    clean_pool: asyncpg.Pool,
) -> None:
    await appended(clean_pool, 0)
    cut: datetime = await clean_pool.fetchval("SELECT clock_timestamp()")
    await appended(clean_pool, 1)
    async with clean_pool.acquire() as conn:
        assert await prune_records(conn, cut) is not None
    refused = (
        "DELETE FROM audit_records",  # the kept record: past the newest anchor
        "UPDATE audit_records SET subject = 'x'",
        "DELETE FROM audit_record_anchors",
        "UPDATE audit_record_anchors SET kept = 0",
    )
    for statement in refused:
        with pytest.raises(asyncpg.PostgresError, match="audit records are immutable"):
            await clean_pool.execute(statement)


async def test_a_broken_chain_is_not_cut_and_a_moved_anchor_is_seen(
    clean_pool: asyncpg.Pool, postgres_url: str
) -> None:
    await appended(clean_pool, 0, 1)
    async with clean_pool.acquire() as conn:
        await conn.execute("SET session_replication_role = replica")  # past the guards
        try:
            await conn.execute("UPDATE audit_records SET result = 'x' WHERE subject = 'bot-0'")
            with pytest.raises(BrokenChainError):
                await prune_records(conn, datetime.now(UTC))
            assert await conn.fetchval("SELECT count(*) FROM audit_records") == 2
            assert await conn.fetchval("SELECT count(*) FROM audit_record_anchors") == 0
            await conn.execute("UPDATE audit_records SET result = 'Failed'")  # as it was
            cut = await conn.fetchval("SELECT logged_at FROM audit_records WHERE subject = 'bot-1'")
            await prune_records(conn, cut)
            await conn.execute("UPDATE audit_record_anchors SET hash = sha256(hash)")
        finally:
            await conn.execute("RESET session_replication_role")
    broken = verify(postgres_url)
    assert broken.returncode == 1
    assert "prev_hash does not match the anchor's hash" in broken.stdout
