"""The raw baselines of the HTTP benchmarks: a bare Litestar app with asyncpg and none of our
code but one statement's SQL, so a ratio to it is our own cost. Run as `BARE_DATABASE_URL=...
python -m bench.bare_api <port>`; endpoints: docs/decisions/0011-benchmark-methods.md."""

import hashlib
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from uuid import UUID, uuid4

import asyncpg
import msgspec
import uvicorn
from litestar import Litestar, Response, get, post
from litestar.datastructures import State
from litestar.params import JSONBody

from infra.postgres.hashchain import GENESIS
from infra.postgres.sql import statement

APPEND_FIRST_NAMED = statement("append_first_named")
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


@post("/templates/with-edges", status_code=202)
async def create_with_edges(data: JSONBody[dict[str, Any]], state: State) -> Created:
    template_id, event_id = uuid4(), uuid4()
    pool: asyncpg.Pool = state.pool
    name = str(data["meta"]["name"])
    used = [UUID(data["assets"]["environment"]), UUID(data["assets"]["compute"])]
    versions: dict[UUID, int] = state.versions  # each asset's, read once, as ours remembers them
    for asset in used:
        if asset not in versions:
            versions[asset] = await pool.fetchval(
                "SELECT max(version) FROM events WHERE stream_id = $1", asset
            )
    body = msgspec.json.encode(data)
    row = await pool.fetchrow(
        APPEND_FIRST_NAMED,
        template_id,
        "template",
        0,
        event_id.hex,
        "template.created.v1",
        1,
        body.decode(),
        '{"actor_subject":"bench","actor_kind":"application"}',
        hashlib.sha256(body).digest(),
        GENESIS,
        "template@tenant:None",
        name,
        "bench",
        name,
        used,
        used,
        [versions[asset] for asset in used],
        None,
    )
    assert row is not None
    assert row["claimed"], row
    return Created(str(template_id))


# The event, its name and its uses as plain rows (the hash columns a constant): the same rows
# append_first_named.sql writes, none of its checks (versions read, standing, name taken, used
# streams deleted) and no link.
ROWS_ALONE = """
WITH named AS (INSERT INTO stream_names (namespace, name, stream_id) VALUES ($5, $6, $1)),
     used AS (INSERT INTO stream_uses (used_id, user_id, user_name)
              SELECT a, $1, $6 FROM unnest($7::uuid[]) AS a)
INSERT INTO events (event_id, stream_type, stream_id, version, type, schema_version, data,
                    metadata, recorded_at, prev_hash, hash, caller)
VALUES ($2, 'template', $1, 1, 'template.created.v1', 1, $3, $4, now(), $8, $8, 'bench')
"""


@post("/templates/rows-alone", status_code=202)
async def create_rows_alone(data: JSONBody[dict[str, Any]], state: State) -> Created:
    template_id = uuid4()
    pool: asyncpg.Pool = state.pool
    name = str(data["meta"]["name"])
    await pool.execute(
        ROWS_ALONE,
        template_id,
        uuid4(),
        msgspec.json.encode(data).decode(),
        '{"actor_subject":"bench","actor_kind":"application"}',
        "template@tenant:None",
        name,
        [UUID(data["assets"]["environment"]), UUID(data["assets"]["compute"])],
        GENESIS,
    )
    return Created(str(template_id))


@get("/templates/{template_id:uuid}")
async def one(template_id: UUID, state: State) -> Response[bytes]:
    pool: asyncpg.Pool = state.pool
    row = await pool.fetchrow(
        "SELECT meta::text, body::text FROM template_catalogue WHERE template_id = $1",
        template_id,
    )
    assert row is not None
    return Response(f'{{"meta":{row[0]},"spec":{row[1]}}}'.encode(), media_type="application/json")


@get("/templates")
async def page(state: State, prefix: str = "") -> Response[bytes]:
    pool: asyncpg.Pool = state.pool
    # The names in code-point order, a range of the index our lists page by
    # (template_catalogue_name_c_idx), so the baseline reads a page, not the whole table.
    rows = await pool.fetch(
        'SELECT meta::text, body::text FROM template_catalogue WHERE name COLLATE "C" >= $1'
        ' AND name COLLATE "C" < $1 || chr(1114111) ORDER BY name COLLATE "C", template_id'
        " LIMIT 50",
        prefix,
    )
    entries = ",".join(f'{{"meta":{r[0]},"spec":{r[1]}}}' for r in rows)
    return Response(f'{{"entries":[{entries}]}}'.encode(), media_type="application/json")


@asynccontextmanager
async def lifespan(app: Litestar) -> AsyncIterator[None]:
    pool = await asyncpg.create_pool(os.environ["BARE_DATABASE_URL"], min_size=1, max_size=10)
    assert pool is not None
    await pool.execute(TABLE)
    app.state.pool = pool
    app.state.versions = {}
    yield
    await pool.close()


app = Litestar(
    route_handlers=[create, create_with_edges, create_rows_alone, one, page],
    lifespan=[lifespan],
    logging_config=None,
)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
