"""An HTTP client over the app in the test's own event loop.

Litestar's AsyncTestClient runs the app in a portal thread with its own loop, where the session's
asyncpg pool (bound to the test loop) cannot be used; httpx's ASGI transport runs in this loop.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from litestar import Litestar


@asynccontextmanager
async def client_for(app: Litestar) -> AsyncIterator[httpx.AsyncClient]:
    async with app.lifespan():
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]  # ASGI types differ in name only
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield client
