"""Read-your-writes over eventually consistent read models.

By default, with no header: a caller's read waits until the read models have applied every
write the caller made before it, and what the fan-out made of them (infra/postgres/read_marks.py:
the mark is in PostgreSQL, so a write through one API process is read back through another).
A caller with nothing pending pays one indexed query, the request's standing query, which also
says whether what the process keeps about access still holds (infra/http/access_cache.py); it is
run by authentication (infra/http/auth.py), as every authenticated request needs it.

Every write response also carries `X-Trainplate-Position`, the log position of the last event the
request appended; a read that sends a position as `X-Trainplate-Min-Position` waits for that
event as well (to read another caller's write). Both waits are bounded together by
`TRAINPLATE_CONSISTENCY_WAIT_S`; a read whose wait runs out answers from the current state with
`X-Trainplate-Stale: true`, counted by `trainplate_stale_reads_total`.
"""

import asyncio
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Final

import asyncpg
from litestar import Response
from litestar.connection import ASGIConnection
from prometheus_client import CollectorRegistry, Counter

from infra.followers.fanout_runner import NAME as FANOUT
from infra.postgres.connections import Connection
from infra.postgres.positions import last_position
from infra.postgres.read_marks import Standing, standing
from projections import ALL

POSITION: Final = "X-Trainplate-Position"
MIN_POSITION: Final = "X-Trainplate-Min-Position"
STALE: Final = "X-Trainplate-Stale"
_POLL_S: Final = 0.02

_stale: ContextVar[bool] = ContextVar("trainplate_stale", default=False)

_CAUGHT_UP: Final = """
SELECT count(*) FROM consumer_checkpoints c, events e
 WHERE e.global_position = $1 AND c.name = ANY($2::text[])
   AND (c.transaction_id, c.global_position) >= (e.transaction_id, e.global_position)
"""
_NAMES: Final = [f"projection:{projection.name}" for projection in ALL]
_FOLLOWERS: Final = [*_NAMES, f"projection:{FANOUT}"]

# Process-wide, as reads are served per process; /metrics shows it beside the followers' lag.
STALE_READS: Final = CollectorRegistry()
_stale_reads: Final = Counter(
    "trainplate_stale_reads",
    "Reads answered before the read models reached what they had to wait for.",
    registry=STALE_READS,
)


async def caught_up(pool: asyncpg.Pool, position: int, wait_s: float) -> bool:
    """Whether every read model has applied the event at `position`, waiting up to `wait_s`."""

    async def check(conn: Connection) -> bool:
        return bool(await conn.fetchval(_CAUGHT_UP, position, _NAMES) == len(_NAMES))

    return await _polled(pool, check, wait_s)


async def _polled(
    pool: asyncpg.Pool,
    check: Callable[[Connection], Awaitable[bool]],
    wait_s: float,
) -> bool:
    """`check` until it holds or `wait_s` has passed; at least once."""
    deadline = time.monotonic() + wait_s
    while True:
        async with pool.acquire() as conn:
            if await check(conn):
                return True
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(_POLL_S)


def begin() -> None:
    """A request starts: it has appended nothing and read nothing stale yet."""
    last_position.set(None)
    _stale.set(False)


# How authentication settles a request for a caller (a fake in unit tests of authentication).
Settle = Callable[[ASGIConnection[Any, Any, Any, Any], str], Awaitable[Standing]]


def settler(wait_s: float) -> Settle:
    """`settle`, with reads waiting up to `wait_s`."""

    async def settled(connection: ASGIConnection[Any, Any, Any, Any], subject: str) -> Standing:
        return await settle(connection, subject, wait_s)

    return settled


async def settle(
    connection: ASGIConnection[Any, Any, Any, Any], subject: str, wait_s: float
) -> Standing:
    """The request's standing: for a read (GET), once the read models hold the caller's own
    writes (and the `X-Trainplate-Min-Position` event, when sent), or the wait ran out (then it
    answers stale); for a write, at once, as nothing waits for a writer."""
    pool: asyncpg.Pool = connection.app.state.resources.pool
    reads = connection.scope.get("method") == "GET"
    started = time.monotonic()
    found: list[Standing] = []

    async def check(conn: Connection) -> bool:
        found[:] = [await standing(conn, subject, _FOLLOWERS, _NAMES, reads=reads)]
        return found[0].ready

    ready = await _polled(pool, check, wait_s)
    wanted = connection.headers.get(MIN_POSITION)
    if reads and ready and wanted is not None and wanted.isdigit():
        left = max(0.0, wait_s - (time.monotonic() - started))
        ready = await caught_up(pool, int(wanted), left)
        async with pool.acquire() as conn:  # the epochs as of the end of the wait
            found[:] = [await standing(conn, subject, _FOLLOWERS, _NAMES, reads=False)]
    if not ready:
        _stale.set(True)
        _stale_reads.inc()
    return found[0]


async def after_request(response: Response[Any]) -> Response[Any]:
    position = last_position.get()
    if position is not None:
        response.headers[POSITION] = str(position)
    if _stale.get():
        response.headers[STALE] = "true"
    return response
