"""The raw baseline of the template-create benchmark: a bare Litestar app whose one endpoint
decodes the JSON body with msgspec and INSERTs it with asyncpg, nothing else (no auth, no rules,
no events). Run by bench/template_create.py under the same uvicorn settings as the API.

    BARE_DATABASE_URL=... python -m bench.bare_api <port>
"""

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from uuid import uuid4

import asyncpg
import msgspec
import uvicorn
from litestar import Litestar, post
from litestar.datastructures import State
from litestar.params import JSONBody

TABLE = """
CREATE TABLE IF NOT EXISTS bench_templates (
    id uuid PRIMARY KEY, name text NOT NULL, body jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now())
"""


class Created(msgspec.Struct, frozen=True):
    id: str


@post("/templates", status_code=202)
async def create(data: JSONBody[dict[str, Any]], state: State) -> Created:
    template_id = uuid4()
    pool: asyncpg.Pool = state.pool
    await pool.execute(
        "INSERT INTO bench_templates (id, name, body) VALUES ($1, $2, $3::jsonb)",
        template_id,
        str(data.get("meta", {}).get("name", "")),
        msgspec.json.encode(data).decode(),
    )
    return Created(str(template_id))


@asynccontextmanager
async def lifespan(app: Litestar) -> AsyncIterator[None]:
    pool = await asyncpg.create_pool(os.environ["BARE_DATABASE_URL"], min_size=1, max_size=10)
    assert pool is not None
    await pool.execute(TABLE)
    app.state.pool = pool
    yield
    await pool.close()


app = Litestar(route_handlers=[create], lifespan=[lifespan], logging_config=None)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
