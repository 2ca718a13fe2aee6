"""Fixtures of the integration tests."""

import asyncpg
import pytest


@pytest.fixture
async def catalogue(clean_pool: asyncpg.Pool) -> asyncpg.Pool:
    """A clean database whose application catalogue is empty too."""
    await clean_pool.execute("TRUNCATE application_catalogue")
    return clean_pool
