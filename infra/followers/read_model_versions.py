"""Which version of its projection built each read model's rows: one that differs from the
declared version has the projector rebuild it blue/green (infra/followers/rebuild.py), and the
swap records the new one (docs/decisions/0007-read-model-versions.md)."""

from typing import Final

from infra.followers import global_log
from infra.followers.global_log import START
from infra.postgres.connections import Connection
from projections import Projection

# What a read model with no recorded version was built by: every one predates the table.
BASELINE: Final = 1


async def recorded(conn: Connection, name: str) -> int:
    found: int | None = await conn.fetchval(
        "SELECT version FROM read_model_versions WHERE name = $1", name
    )
    return BASELINE if found is None else found


async def record(conn: Connection, name: str, version: int) -> None:
    await conn.execute(
        "INSERT INTO read_model_versions (name, version) VALUES ($1, $2)"
        " ON CONFLICT (name) DO UPDATE SET version = $2, recorded_at = now()",
        name,
        version,
    )


async def outdated(conn: Connection, projection: Projection) -> bool:
    """Whether the live rows were built by another version than the declared one. A read model
    its runner has not started yet is built by this version from zero anyway: it is recorded
    as such, and not outdated."""
    if await recorded(conn, projection.name) == projection.version:
        return False
    if await global_log.load_checkpoint(conn, f"projection:{projection.name}") == START:
        await record(conn, projection.name, projection.version)
        return False
    return True
