"""Fixtures of the integration tests."""

from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from infra.cli.embedded import EmbeddedNats


@pytest.fixture
async def catalogue(clean_pool: asyncpg.Pool) -> asyncpg.Pool:
    """A clean database whose application catalogue is empty too."""
    await clean_pool.execute("TRUNCATE application_catalogue")
    return clean_pool


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[EmbeddedNats]:
    """A private nats-server: its durable consumers start empty, and a test may kill it."""
    server = EmbeddedNats(tmp_path / "nats")
    server.start()
    yield server
    server.stop()
