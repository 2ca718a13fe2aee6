"""Fixtures of the API tests: the app over the test servers, and a tenant admin's token."""

from collections.abc import AsyncIterator

import asyncpg
import pytest
from litestar import Litestar

from domain.values import TENANT_ADMIN
from tests.api.support import api_app, token_for


@pytest.fixture
async def app(clean_pool: asyncpg.Pool, nats_url: str) -> AsyncIterator[Litestar]:
    async with api_app(clean_pool, nats_url) as app:
        yield app


@pytest.fixture
async def admin(clean_pool: asyncpg.Pool) -> str:
    return await token_for(clean_pool, "root-admin", (TENANT_ADMIN,))
