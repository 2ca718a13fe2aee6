"""`trainplate schema`: the schema the migrations make (infra/postgres/schema_text.py), worked
out on a fresh embedded PostgreSQL, so no database of the caller's is touched."""

import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

import asyncpg

from infra.cli.embedded import EmbeddedPostgres
from infra.postgres.migrate import apply_migrations
from infra.postgres.schema_text import schema_text


def export_schema(output: Path | None) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="trainplate-schema-"))
    try:
        with EmbeddedPostgres(data_dir) as server:
            text = asyncio.run(_migrated(server.url))
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text)


async def _migrated(url: str) -> str:
    conn = await asyncpg.connect(url)
    try:
        await apply_migrations(conn)
        return await schema_text(conn)
    finally:
        await conn.close()
