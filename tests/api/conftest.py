"""Fixtures of the API tests: the app over the test servers, and a tenant admin's token."""

from collections.abc import AsyncIterator

import asyncpg
import pytest
from litestar import Litestar

from domain.values import TENANT_ADMIN
from tests.api.support import api_app, token_for


@pytest.fixture(scope="session")
async def shared_app(pool: asyncpg.Pool, nats_url: str) -> AsyncIterator[Litestar]:
    """Built once: every request runs the app's lifespan, which wires its state afresh, so a
    test sees nothing of another's but the routes (building them costs 0.3 s a test)."""
    async with api_app(pool, nats_url) as app:
        yield app


@pytest.fixture
async def app(clean_pool: asyncpg.Pool, shared_app: Litestar) -> Litestar:
    return shared_app


@pytest.fixture
async def admin(clean_pool: asyncpg.Pool) -> str:
    return await token_for(clean_pool, "root-admin", (TENANT_ADMIN,))
