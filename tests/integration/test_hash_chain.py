"""The per-stream hash chain detects an event edited behind the store's back."""

from uuid import UUID, uuid4

import asyncpg
import pytest

from infra.postgres.connections import Connection
from infra.postgres.hashchain import content_digest, link, micros, verify_all, verify_stream
from infra.postgres.streams import PostgresStreams
from infra.telemetry import tracing
from services.ports.event_store import Append
from tests.conftest import ACTOR
from tests.sample_events import CODEC, CounterIncremented, CounterOpened

pytestmark = pytest.mark.integration


async def _tamper(conn: Connection, sql: str, *args: object) -> object:
    """Edit history as an attacker with database rights would: past the append-only trigger."""
    await conn.execute("SET session_replication_role = replica")
    try:
        return await conn.fetchval(sql, *args)
    finally:
        await conn.execute("RESET session_replication_role")


async def _stream_of_five(pool: asyncpg.Pool) -> tuple[PostgresStreams, UUID]:
    store = PostgresStreams(pool, CODEC)
    sid = uuid4()
    await store.append(Append(sid, [CounterOpened(name="c")], expected_version=0, metadata=ACTOR))
    await store.append(
        Append(
            sid, [CounterIncremented(by=i) for i in range(4)], expected_version=1, metadata=ACTOR
        )
    )
    return store, sid


async def test_an_untouched_stream_verifies(clean_pool: asyncpg.Pool) -> None:
    _, sid = await _stream_of_five(clean_pool)
    async with clean_pool.acquire() as conn:
        report = await verify_stream(conn, sid)
    assert report.intact
    assert report.events == 5


async def test_links_made_by_the_writer_and_by_the_database_make_one_chain(
    clean_pool: asyncpg.Pool,
) -> None:
    """A writer that knows the head links the events itself; one that does not (no expected
    version, or a head another process moved) leaves it to the database: one arithmetic."""
    store, sid = await _stream_of_five(clean_pool)  # writer-linked: a new stream, a known head
    await store.append(
        Append(sid, [CounterIncremented(by=5)] * 2, expected_version=None, metadata=ACTOR)
    )
    other = PostgresStreams(clean_pool, CODEC)  # it has never seen the head
    await other.append(
        Append(sid, [CounterIncremented(by=6)] * 3, expected_version=7, metadata=ACTOR)
    )
    await store.append(
        Append(sid, [CounterIncremented(by=7)], expected_version=None, metadata=ACTOR)
    )
    async with clean_pool.acquire() as conn:
        report = await verify_stream(conn, sid)
    assert (report.intact, report.events) == (True, 11)


async def test_a_batch_of_awkward_payloads_is_stored_exactly(clean_pool: asyncpg.Pool) -> None:
    """Newlines, tabs, quotes and non-ASCII text inside a batch's payloads keep their bytes."""
    store, sid = PostgresStreams(clean_pool, CODEC), uuid4()
    names = ["line\nbreak", 'tab\tand "quotes"', "Grüße, 東京 🚀", "back\\slash\r\n", ""]
    await store.append(
        Append(
            sid, [CounterOpened(name=name) for name in names], expected_version=0, metadata=ACTOR
        )
    )
    loaded = await PostgresStreams(clean_pool, CODEC).load(sid)
    assert [e.name for e in loaded.events if isinstance(e, CounterOpened)] == names
    async with clean_pool.acquire() as conn:
        assert (await verify_stream(conn, sid)).intact


async def test_an_event_edited_with_sql_breaks_the_chain_at_that_event(
    clean_pool: asyncpg.Pool,
) -> None:
    _, sid = await _stream_of_five(clean_pool)
    async with clean_pool.acquire() as conn:
        edited = await _tamper(
            conn,
            "UPDATE events SET data = jsonb_set(data::jsonb, '{by}', '99')::json"
            " WHERE stream_id = $1 AND version = 3 RETURNING event_id",
            sid,
        )
        report = await verify_stream(conn, sid)
        everything = await verify_all(conn)
    assert report.broken_at is not None
    assert report.broken_at.event_id == edited
    assert report.broken_at.version == 3
    assert "contents" in report.broken_at.reason
    assert [r.stream_id for r in everything if not r.intact] == [sid]


async def test_a_rehashed_edit_is_caught_by_the_next_event(clean_pool: asyncpg.Pool) -> None:
    """Recomputing the edited row's own hash does not help: the next event names the old one."""
    _, sid = await _stream_of_five(clean_pool)
    async with clean_pool.acquire() as conn:
        row = await conn.fetchrow(
            "SELECT event_id, stream_type, type, schema_version, metadata::text AS metadata,"
            " recorded_at, prev_hash FROM events WHERE stream_id = $1 AND version = 3",
            sid,
        )
        assert row is not None
        forged = '{"type":"counter.incremented.v1","by":99}'
        digest = content_digest(
            event_id=row["event_id"],
            stream_type=row["stream_type"],
            stream_id=sid,
            type=row["type"],
            schema_version=row["schema_version"],
            data=forged,
            metadata=row["metadata"],
        )
        await _tamper(
            conn,
            "UPDATE events SET data = $2::json, hash = $3 WHERE stream_id = $1 AND version = 3",
            sid,
            forged,
            link(row["prev_hash"], digest, 3, row["recorded_at"]),
        )
        report = await verify_stream(conn, sid)
    assert report.broken_at is not None
    assert report.broken_at.version == 4
    assert "prev_hash" in report.broken_at.reason


async def test_the_store_refuses_to_update_or_delete_an_event(clean_pool: asyncpg.Pool) -> None:
    _, sid = await _stream_of_five(clean_pool)
    for sql in (
        "UPDATE events SET type = 'counter.forged.v1' WHERE stream_id = $1",
        "DELETE FROM events WHERE stream_id = $1",
    ):
        with pytest.raises(asyncpg.PostgresError, match="events are immutable"):
            await clean_pool.execute(sql, sid)
    assert await clean_pool.fetchval("SELECT count(*) FROM events WHERE stream_id = $1", sid) == 5


async def test_a_deleted_event_breaks_the_chain_where_it_was(clean_pool: asyncpg.Pool) -> None:
    _, sid = await _stream_of_five(clean_pool)
    async with clean_pool.acquire() as conn:
        await _tamper(conn, "DELETE FROM events WHERE stream_id = $1 AND version = 3", sid)
        report = await verify_stream(conn, sid)
    assert report.broken_at is not None
    assert (report.broken_at.version, report.events) == (4, 4)
    assert "where 3 was expected" in report.broken_at.reason


async def test_reordered_events_break_the_chain(clean_pool: asyncpg.Pool) -> None:
    """Swapping two events' places (their versions) is caught at the first of them."""
    _, sid = await _stream_of_five(clean_pool)
    async with clean_pool.acquire() as conn:
        for old, new in ((2, 1000), (3, 2), (1000, 3)):  # one unique key at a time
            await _tamper(
                conn,
                "UPDATE events SET version = $3 WHERE stream_id = $1 AND version = $2",
                sid,
                old,
                new,
            )
        report = await verify_stream(conn, sid)
    assert report.broken_at is not None
    assert report.broken_at.version == 2
    assert "prev_hash" in report.broken_at.reason


@pytest.mark.parametrize("zone", ["UTC", "Asia/Kolkata", "America/St_Johns", "Africa/Monrovia"])
async def test_the_database_counts_a_links_microseconds_as_the_verifier_does(
    clean_pool: asyncpg.Pool, zone: str
) -> None:
    """trainplate_micros, which every link takes its time from, agrees with the verifier's
    arithmetic to the microsecond: before and after the epoch, at fractions of a second, and
    whatever the session's time zone (some of these were once offset by odd seconds)."""
    async with clean_pool.acquire() as conn:
        await conn.execute(f"SET TimeZone = '{zone}'")
        rows = await conn.fetch(
            """SELECT t, trainplate_micros(t) AS micros
                 FROM (SELECT timestamptz '1970-01-01 00:00:00+00'
                              + g * interval '7919.123457 seconds' AS t
                         FROM generate_series(-800000, 400000, 97) AS g) AS s"""
        )
        await conn.execute("RESET TimeZone")
    assert len(rows) > 12_000
    assert [row["micros"] for row in rows] == [micros(row["t"]) for row in rows]


async def test_a_chain_of_events_with_and_without_trace_context_verifies_and_detects_an_edit(
    clean_pool: asyncpg.Pool,
) -> None:
    """Events written before traces were recorded, and after: the digest covers what is stored,
    trace context included, so rewriting a traceparent breaks the chain like any edit."""
    store, sid = await _stream_of_five(clean_pool)
    parent = tracing.parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
    with tracing.span("a request", parents=[parent]):
        await store.append(
            Append(sid, [CounterIncremented(by=9)], expected_version=5, metadata=ACTOR)
        )
    async with clean_pool.acquire() as conn:
        stored = await conn.fetchval(
            "SELECT metadata::text FROM events WHERE stream_id = $1 AND version = 6", sid
        )
        assert "4bf92f3577b34da6a3ce929d0e0e4736" in stored
        assert (await verify_stream(conn, sid)).intact
        forged = stored.replace("4bf92f35", "00000000")
        await _tamper(
            conn,
            "UPDATE events SET metadata = $2::json WHERE stream_id = $1 AND version = 6",
            sid,
            forged,
        )
        report = await verify_stream(conn, sid)
    assert report.broken_at is not None
    assert report.broken_at.version == 6
