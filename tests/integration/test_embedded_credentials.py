"""The embedded servers let in only who holds their password: a local workload that finds their
ports (a scan of 127.0.0.1 would) cannot connect, as a superuser or at all."""

import asyncio
import json
import os
from urllib.parse import urlsplit

import asyncpg
import nats
import pytest

from infra.settings import redacted

pytestmark = pytest.mark.integration

EMBEDDED = pytest.mark.skipif(
    bool(os.environ.get("TEST_DATABASE_URL") or os.environ.get("TEST_NATS_URL")),
    reason="servers of the caller's own, with its own authentication",
)


@EMBEDDED
async def test_postgres_refuses_a_connection_without_the_password(postgres_url: str) -> None:
    port = urlsplit(postgres_url).port
    with pytest.raises(asyncpg.InvalidPasswordError):
        await asyncpg.connect(f"postgresql://postgres@127.0.0.1:{port}/postgres")
    with pytest.raises(asyncpg.InvalidPasswordError):
        await asyncpg.connect(f"postgresql://postgres:guess@127.0.0.1:{port}/postgres")
    conn = await asyncpg.connect(postgres_url)  # the service's own URL carries it
    try:
        assert await conn.fetchval("SHOW password_encryption") == "scram-sha-256"
    finally:
        await conn.close()


@EMBEDDED
async def test_nats_refuses_a_connection_without_the_password(nats_url: str) -> None:
    # Spoken by hand, as any process on the machine could: nats-py leaks the refused socket.
    port = urlsplit(nats_url).port
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        info = json.loads((await reader.readline()).decode().removeprefix("INFO "))
        assert info["auth_required"] is True
        writer.write(b'CONNECT {"verbose":false,"pedantic":false}\r\nPING\r\n')
        await writer.drain()
        answer = await asyncio.wait_for(reader.readline(), 5)
        assert answer.startswith(b"-ERR 'Authorization Violation'"), answer
    finally:
        writer.close()
        await writer.wait_closed()
    client = await nats.connect(nats_url)  # the service's own URL carries it
    assert client.is_connected
    await client.close()


def test_a_url_is_shown_without_its_password() -> None:
    assert redacted("postgresql://postgres:s3cret@127.0.0.1:5/db") == (
        "postgresql://postgres:***@127.0.0.1:5/db"
    )
    assert (
        redacted("nats://trainplate:s3cret@127.0.0.1:4222")
        == "nats://trainplate:***@127.0.0.1:4222"
    )
    assert redacted("nats://127.0.0.1:4222") == "nats://127.0.0.1:4222"
