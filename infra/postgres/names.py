"""Names unique per namespace (stream_names), moved by the appends of infra/postgres/streams.py.

`stream_names` holds one row per (namespace, name); its primary key is what makes a name unique,
so two concurrent creates of the same name cannot both commit.
"""

from collections.abc import Sequence
from functools import partial
from typing import Final
from uuid import UUID

import asyncpg

from infra.postgres.connections import Connection, translated
from services.errors import NameTakenError
from services.ports.event_store import NameClaim
from services.ports.name_lookups import Lookups

_RELEASE_OTHERS: Final = (
    "DELETE FROM stream_names WHERE stream_id = $1 AND (namespace, name) <> ($2, $3)"
)
_RELEASE_ALL: Final = "DELETE FROM stream_names WHERE stream_id = $1"
_CLAIM: Final = """
INSERT INTO stream_names (namespace, name, stream_id) VALUES ($1, $2, $3)
ON CONFLICT (namespace, name) DO UPDATE SET stream_id = excluded.stream_id
    WHERE stream_names.stream_id = excluded.stream_id
RETURNING stream_id
"""


# A creation's id: the one issued to it before, else a new one recorded for it. A concurrent
# first issue for the same creation makes the insert do nothing, and the statement's snapshot
# does not see the other's row yet: the statement is run again, and then it does.
_ISSUED: Final = """
WITH issued AS (
    INSERT INTO issued_ids (creation_id, id)
    VALUES ($1, coalesce($2::bigint, nextval('org_unit_ids')))
    ON CONFLICT (creation_id) DO NOTHING RETURNING id
)
SELECT id FROM issued UNION ALL SELECT id FROM issued_ids WHERE creation_id = $1
"""


class PostgresIdSequence:
    """services/ports/name_lookups.py `IdSequence` over the `org_unit_ids` sequence (and
    `issued_ids`)."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def next_id(self, creation: UUID | None = None, *, given: int | None = None) -> int:
        async with translated("next_id"):
            if creation is None:
                value: int = await self._pool.fetchval("SELECT nextval('org_unit_ids')")
                return value
            while (issued := await self._pool.fetchval(_ISSUED, creation, given)) is None:
                pass  # lost the first issue to a concurrent one, now committed: read it
            return int(issued)

    async def issued(self, creation: UUID) -> int | None:
        async with translated("issued_id"):
            issued: int | None = await self._pool.fetchval(
                "SELECT id FROM issued_ids WHERE creation_id = $1", creation
            )
        return issued


async def hold_name(
    conn: Connection, stream_id: UUID, name: NameClaim | None, *, new: bool = False
) -> None:
    """Make `name` the one name the stream holds (None: it holds none), inside the caller's
    transaction; NameTakenError when another stream holds it. A `new` stream holds no name yet,
    so there is none to release."""
    if name is None:
        await conn.execute(_RELEASE_ALL, stream_id)
        return
    if not new:
        await conn.execute(_RELEASE_OTHERS, stream_id, name.namespace, name.name)
    # The upsert returns no row when another stream holds the name (its WHERE refuses).
    if await conn.fetchval(_CLAIM, name.namespace, name.name, stream_id) is None:
        raise NameTakenError(name.name, namespace=name.namespace, field=name.field)


async def name_holder(pool: asyncpg.Pool, namespace: str, name: str) -> UUID | None:
    """The stream holding `name` in `namespace`, if any: the write side's own answer."""
    async with translated("name_holder"):
        holder: UUID | None = await pool.fetchval(
            "SELECT stream_id FROM stream_names WHERE namespace = $1 AND name = $2", namespace, name
        )
    return holder


async def names_held_in(pool: asyncpg.Pool, namespaces: Sequence[str]) -> list[UUID]:
    """The streams holding a name in any of these namespaces (services/ports/name_lookups.py
    `NameHolders`)."""
    async with translated("names_held_in"):
        rows = await pool.fetch(
            "SELECT stream_id FROM stream_names WHERE namespace = ANY($1::text[])", namespaces
        )
    return [row["stream_id"] for row in rows]


def name_lookups(pool: asyncpg.Pool) -> Lookups:
    """Both lookups over `pool`, as the use cases asking after a namespace's names take them."""
    return Lookups(partial(name_holder, pool), partial(names_held_in, pool))
