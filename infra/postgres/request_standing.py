"""A request's standing as the database tells it (the HTTP side: infra/http/consistency.py): the
read_marks statements polled until the read models hold the caller's writes or the wait runs out,
and what a request assumed as a writer (writer_standing.py) or appended (positions.py)."""

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

import asyncpg
import msgspec

from infra.postgres import writer_standing
from infra.postgres.connections import Connection
from infra.postgres.positions import last_position
from infra.postgres.read_marks import (
    Standing,
    blocked,
    standing,
    standing_with,
    standing_with_rows,
)
from infra.security.standing import Along

_POLL_S: Final = 0.02

_CAUGHT_UP: Final = """
SELECT count(*) FROM consumer_checkpoints c, events e
 WHERE e.global_position = $1 AND c.name = ANY($2::text[])
   AND (c.transaction_id, c.global_position) >= (e.transaction_id, e.global_position)
"""


class Settled(msgspec.Struct, frozen=True):
    """A request's standing, the row its route asked to be read with it (None: none asked, or
    read before a wait and so not kept), and whether the read models were ready in time."""

    standing: Standing
    row: object  # a record, or a list of them for a page (None: none read, or not kept)
    ready: bool


class PostgresStandings:
    """`followers` and `read_models`: the checkpoint names a read waits for (every follower
    for the caller's own events, the read models for what the fan-out made of them)."""

    __slots__ = ("_followers", "_pool", "_read_models")

    def __init__(
        self, pool: asyncpg.Pool, followers: Sequence[str], read_models: Sequence[str]
    ) -> None:
        self._pool = pool
        self._followers = list(followers)
        self._read_models = list(read_models)

    def begin(self) -> None:
        """A request starts: it has appended nothing and assumed nothing."""
        last_position.set(None)
        writer_standing.begin()

    def end(self) -> None:
        writer_standing.end()

    def last_position(self) -> int | None:
        """The log position of the last event the request appended."""
        return last_position.get()

    def expect(self, assumed: Standing, recheck: writer_standing.Recheck) -> None:
        writer_standing.expect(assumed, recheck)

    def unchecked(self) -> bool:
        return writer_standing.unchecked() is not None

    async def confirm(self) -> None:
        await writer_standing.confirm(self._pool)

    def known(self) -> Standing | None:
        return writer_standing.known()

    async def settle(
        self,
        subject: str,
        *,
        reads: bool,
        along: Along | None,
        min_position: int | None,
        wait_s: float,
    ) -> Settled:
        """For a read, once the read models hold the caller's writes (and the `min_position`
        event), the wait ran out, or a follower it waits for is stuck (not ready); for a write,
        at once, as last found (`assumed`) or else asked. `along` is read in the same snapshot."""
        if not reads and (known := writer_standing.known()) is not None:
            return Settled(msgspec.structs.replace(known, assumed=True), None, True)
        started = time.monotonic()
        found: list[Standing] = []
        rows: list[object] = []
        followers, read_models = self._followers, self._read_models

        async def check(conn: Connection) -> bool:
            if along is None:
                found[:] = [await standing(conn, subject, followers, read_models, reads=reads)]
            elif along.many:
                settled, records = await standing_with_rows(
                    conn, subject, followers, read_models, along.sql, along.args
                )
                found[:], rows[:] = [settled], [records]
            else:
                settled, row = await standing_with(
                    conn, subject, followers, read_models, along.sql, along.args
                )
                found[:], rows[:] = [settled], [row]
            if found[0].ready:
                return True
            # A stuck follower will not get there by waiting: answer stale at once.
            return await blocked(conn, subject, followers, read_models)

        ready = await self._polled(check, wait_s) and found[0].ready
        if reads and ready and min_position is not None:
            left = max(0.0, wait_s - (time.monotonic() - started))
            ready = await self.caught_up(min_position, left)
            async with self._pool.acquire() as conn:  # the epochs as of the end of the wait
                found[:] = [await standing(conn, subject, followers, read_models, reads=False)]
            rows.clear()  # read before the wait: the handler reads its row again
        writer_standing.seen(found[0])
        return Settled(found[0], rows[0] if rows else None, ready)

    async def caught_up(self, position: int, wait_s: float) -> bool:
        """Whether every read model has applied the event at `position`, waiting up to
        `wait_s`."""
        names = self._read_models

        async def check(conn: Connection) -> bool:
            return bool(await conn.fetchval(_CAUGHT_UP, position, names) == len(names))

        return await self._polled(check, wait_s)

    async def _polled(self, check: Callable[[Connection], Awaitable[bool]], wait_s: float) -> bool:
        """`check` until it holds or `wait_s` has passed; at least once."""
        deadline = time.monotonic() + wait_s
        while True:
            async with self._pool.acquire() as conn:
                if await check(conn):
                    return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(_POLL_S)
