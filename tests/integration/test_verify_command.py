"""`trainplate verify`: exit 0 on an intact store, 1 naming the event where a chain breaks."""

import os
import subprocess
import sys
from uuid import uuid4

import asyncpg
import pytest

from infra.postgres.streams import PostgresStreams
from services.ports.event_store import Append
from tests.conftest import ACTOR
from tests.sample_events import CODEC, CounterIncremented, CounterOpened

pytestmark = pytest.mark.integration


def verify(postgres_url: str) -> subprocess.CompletedProcess[str]:
    return trainplate(postgres_url, "verify")


def trainplate(postgres_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The `trainplate` tool command `args`, against that database."""
    env = {**os.environ, "TRAINPLATE_DATABASE_URL": postgres_url, "TRAINPLATE_LOG_LEVEL": "WARNING"}
    return subprocess.run(
        [sys.executable, "-m", "infra.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_verify_passes_then_names_the_tampered_event(
    clean_pool: asyncpg.Pool, postgres_url: str
) -> None:
    store = PostgresStreams(clean_pool, CODEC)
    sid = uuid4()
    events = [CounterOpened(name="v"), CounterIncremented(by=1), CounterIncremented(by=2)]
    await store.append(Append(sid, events, expected_version=0, metadata=ACTOR))
    await store.append(
        Append(uuid4(), [CounterOpened(name="w")], expected_version=0, metadata=ACTOR)
    )

    intact = verify(postgres_url)
    assert intact.returncode == 0, intact.stdout + intact.stderr
    assert "2 streams checked, 0 broken" in intact.stdout

    async with clean_pool.acquire() as conn:
        await conn.execute("SET session_replication_role = replica")  # past the append-only guard
        try:
            tampered = await conn.fetchval(
                'UPDATE events SET metadata = \'{"actorSubject":"someone-else"}\''
                " WHERE stream_id = $1 AND version = 2 RETURNING event_id",
                sid,
            )
        finally:
            await conn.execute("RESET session_replication_role")
    broken = verify(postgres_url)
    assert broken.returncode == 1
    assert f"stream {sid}: broken at version 2 (event {tampered})" in broken.stdout
    assert "2 streams checked, 1 broken" in broken.stdout
