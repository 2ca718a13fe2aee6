"""The log's tap (infra/followers/log_tap.py) serves every follower what a read of the log would
answer, at any cursor and as the log grows; followers woken together send one read between
them; a full batch served is followed by a read of the next before it is asked for; an event
that cannot be decoded is an error to the follower that takes it, and to no other."""

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from uuid import uuid4

import asyncpg
import pytest

from domain.events import EventMetadata, TemplateCreated
from domain.template_specs import DistributedTemplateSpec
from domain.values import TemplateMeta
from infra.followers import global_log
from infra.followers.global_log import START, Cursor, LogEntry
from infra.followers.log_tap import LogTap
from infra.postgres.connections import Connection
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from services.ports.event_store import Append
from tests.integration.test_global_log import _append

pytestmark = pytest.mark.integration

ACTOR = EventMetadata(actor_subject="t", actor_kind="application")


async def created(pool: asyncpg.Pool, count: int) -> None:
    streams = PostgresStreams(pool, DOMAIN_CODEC)
    for index in range(count):
        template_id = uuid4()
        event = TemplateCreated(
            template_id=template_id,
            meta=TemplateMeta(name=f"t{index}", scope="tenant"),
            spec=DistributedTemplateSpec(distributed_framework="PyTorch"),
        )
        await streams.append(Append(template_id, [event], expected_version=0, metadata=ACTOR))


@contextmanager
def counted_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Cursor]]:
    """The reads of the log sent to the database (the real reads, counted), by their cursor."""
    sent: list[Cursor] = []
    real = global_log.read_after

    async def read_after(conn: Connection, cursor: Cursor, limit: int) -> list[LogEntry]:
        sent.append(cursor)
        return await real(conn, cursor, limit)

    with monkeypatch.context() as patch:
        patch.setattr(global_log, "read_after", read_after)
        yield sent


async def cursors_of(conn: Connection) -> list[Cursor]:
    return [START, *(e.cursor for e in await global_log.read_after(conn, START, 10_000))]


async def test_every_cursor_is_served_what_the_log_answers_as_it_grows(
    clean_pool: asyncpg.Pool,
) -> None:
    tap = LogTap(clean_pool, DOMAIN_CODEC, batch_size=8)
    async with clean_pool.acquire() as conn, clean_pool.acquire() as slow:
        for round_ in range(3):
            await created(clean_pool, 13)
            await _append(conn, uuid4(), f"a type this release does not know {round_}")
            for cursor in await cursors_of(conn):
                served = await tap.after(conn, cursor, 8, since=time.monotonic())
                assert [t.entry for t in served] == await global_log.read_after(conn, cursor, 8)
                known = [t for t in served if t.entry.type == "template.created.v1"]
                assert all(t.event().event_id == t.entry.event_id for t in known)
                assert all(t.recorded is None for t in served if t not in known)
        # An open transaction holds the horizon: nothing past it is served until it commits.
        end = (await cursors_of(conn))[-1]
        transaction = slow.transaction()
        await transaction.start()
        early = await _append(slow, uuid4(), "early position, late commit")
        await created(clean_pool, 2)
        assert await tap.after(conn, end, 8, since=time.monotonic()) == []
        await transaction.commit()
        served = await tap.after(conn, end, 8, since=time.monotonic())
        assert [t.entry for t in served] == await global_log.read_after(conn, end, 8)
        assert served[0].entry.cursor.position == early


async def test_followers_woken_together_send_one_read(
    clean_pool: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    tap = LogTap(clean_pool, DOMAIN_CODEC, batch_size=500)
    await created(clean_pool, 3)
    async with clean_pool.acquire() as conn:
        end = (await tap.after(conn, START, 500, since=time.monotonic()))[-1].entry.cursor
    await created(clean_pool, 4)
    connections = [await clean_pool.acquire() for _ in range(6)]
    try:
        woken = time.monotonic()  # the commit notice that wakes them all
        with counted_reads(monkeypatch) as sent:
            served = await asyncio.gather(
                *(tap.after(c, end, 500, since=woken) for c in connections)
            )
        assert sent == [end]
        assert all(len(batch) == 4 for batch in served)
        assert all([t.entry for t in batch] == [t.entry for t in served[0]] for batch in served)
    finally:
        for conn in connections:
            await clean_pool.release(conn)


async def test_a_full_batch_served_is_followed_by_a_read_of_the_next(
    clean_pool: asyncpg.Pool, monkeypatch: pytest.MonkeyPatch
) -> None:
    await created(clean_pool, 20)
    tap = LogTap(clean_pool, DOMAIN_CODEC, batch_size=8)
    async with clean_pool.acquire() as conn:
        expected = await global_log.read_after(conn, START, 100)
        since = time.monotonic()
        with counted_reads(monkeypatch) as sent:
            cursor, seen, batches = START, [], []
            while served := await tap.after(conn, cursor, 8, since=since):
                batches.append(served)
                seen += [t.entry for t in served]
                cursor = served[-1].entry.cursor
                await asyncio.sleep(0.05)  # applying the batch: meanwhile the next is read
                assert len(sent) == min(len(seen) // 8 + 1, 3), "the next batch was read ahead"
        assert seen == expected
        assert [len(batch) for batch in batches] == [8, 8, 4]  # as served, though the run grew
        # One read a batch, none twice; the last, short, told the end (read after `since`).
        assert sent == [START, expected[7].cursor, expected[15].cursor]


async def test_an_event_that_cannot_be_decoded_is_an_error_to_its_taker_only(
    clean_pool: asyncpg.Pool,
) -> None:
    async with clean_pool.acquire() as conn:
        # Stored as a writer would that this release decodes otherwise: a member missing.
        await conn.execute("ALTER TABLE events DISABLE TRIGGER USER")
        try:
            await _append(conn, uuid4(), "made undecodable below")
            await conn.execute(
                "UPDATE events SET type = 'template.created.v1',"
                " data = jsonb_build_object('type', 'template.created.v1')"
            )
        finally:
            await conn.execute("ALTER TABLE events ENABLE TRIGGER USER")
        await created(clean_pool, 1)
        tap = LogTap(clean_pool, DOMAIN_CODEC, batch_size=8)
        bad, good = await tap.after(conn, START, 8, since=time.monotonic())
        assert good.event().event_id == good.entry.event_id
        assert bad.recorded is None
        assert bad.error is not None
        with pytest.raises(type(bad.error)):
            bad.event()


async def test_a_follower_behind_by_batches_is_never_told_it_caught_up(
    clean_pool: asyncpg.Pool,
) -> None:
    """A short answer means caught up (the follower then sleeps until a commit): while the batch
    after a full one is still being read ahead, the tap waits for it rather than answer short."""
    await created(clean_pool, 50)
    tap = LogTap(clean_pool, DOMAIN_CODEC, batch_size=8)
    since = time.monotonic()  # the follower's last commit notice: before every read below
    sizes: list[int] = []
    async with clean_pool.acquire() as conn:
        cursor = START
        while served := await tap.after(conn, cursor, 8, since=since):
            sizes.append(len(served))
            cursor = served[-1].entry.cursor
    assert sizes == [8] * 6 + [2]
