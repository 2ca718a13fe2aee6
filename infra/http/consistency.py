"""Read-your-writes over eventually consistent read models.

By default, with no header: a caller's read waits until the read models have applied every
write the caller made before it, and what the fan-out made of them (infra/postgres/read_marks.py:
the mark is in PostgreSQL, so a write through one API process is read back through another).
A caller with nothing pending pays one indexed query, the request's standing query, which also
says whether what the process keeps about access still holds (infra/http/access_cache.py); it is
run by authentication (infra/http/auth.py), as every authenticated read needs it. A write, which
waits for nothing, is not asked: its standing is the one the process last found, checked where the
write takes effect (infra/postgres/writer_standing.py).

Every write response also carries `X-Trainplate-Position`, the log position of the last event the
request appended; a read that sends a position as `X-Trainplate-Min-Position` waits for that
event as well (to read another caller's write). Both waits are bounded together by
`TRAINPLATE_CONSISTENCY_WAIT_S`; a read whose wait runs out answers from the current state with
`X-Trainplate-Stale: true`, counted by `trainplate_stale_reads_total`; so does a read whose
caller's writes wait for a follower stuck on an event (a fault on record), at once, since
waiting cannot help until the follower is moved on.
"""

import asyncio
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Final

import asyncpg
import msgspec
from asyncpg import Record
from litestar import Response
from litestar.connection import ASGIConnection
from prometheus_client import CollectorRegistry, Counter

from infra.followers.fanout_runner import NAME as FANOUT
from infra.http.headers import header
from infra.http.numerals import natural
from infra.postgres import writer_standing
from infra.postgres.connections import Connection
from infra.postgres.positions import last_position
from infra.postgres.read_marks import Standing, blocked, standing, standing_with
from projections import ALL

POSITION: Final = "X-Trainplate-Position"
MIN_POSITION: Final = "X-Trainplate-Min-Position"
STALE: Final = "X-Trainplate-Stale"
_MIN_POSITION_NAME: Final = MIN_POSITION.lower().encode("latin-1")
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
    """A request starts: it has appended nothing, read nothing stale yet and assumed nothing."""
    last_position.set(None)
    _stale.set(False)
    writer_standing.begin()


# How authentication settles a request for a caller (a fake in unit tests of authentication).
Settle = Callable[[ASGIConnection[Any, Any, Any, Any], str], Awaitable[Standing]]


def settler(wait_s: float) -> Settle:
    """`settle`, with reads waiting up to `wait_s`."""

    async def settled(connection: ASGIConnection[Any, Any, Any, Any], subject: str) -> Standing:
        return await settle(connection, subject, wait_s)

    return settled


class RowRead(msgspec.Struct, frozen=True):
    """A row a read route's handler needs, read by the statement that settles the request (one
    round trip instead of two): `sql` selects it with $2, the route's path parameter `param`.
    A route asks for it in its options (`opt={READ_WITH_STANDING: RowRead(...)}`) and takes it
    with `prefetched`. Nothing of it is sent before authentication has finished."""

    sql: str
    param: str


READ_WITH_STANDING: Final = "trainplate_read_with_standing"
# A route that only reads, though not by GET (Run:ai asks some questions by POST), says so in its
# options (`opt={READS: True}`), and its caller's writes are read as a GET's are.
READS: Final = "trainplate_reads"
_PREFETCHED: Final = "trainplate_prefetched"


def prefetched(connection: ASGIConnection[Any, Any, Any, Any]) -> Record | None:
    """The route's `RowRead` as the request's settling read it (None: it did not read it; a
    row it found nothing for has its columns NULL, from an outer join)."""
    record: Record | None = connection.scope.get("state", {}).get(_PREFETCHED)
    return record


async def settle(
    connection: ASGIConnection[Any, Any, Any, Any], subject: str, wait_s: float
) -> Standing:
    """The request's standing: for a read (GET, or a route that says it reads), once the read
    models hold the caller's own writes (and the `X-Trainplate-Min-Position` event, when sent),
    or the wait ran out, or a follower it waits for is stuck on an event (then it answers
    stale); for a write, at once, as nothing waits for a writer: the one this process last
    found, `assumed` (checked where the write takes effect: infra/postgres/writer_standing.py),
    or asked when it has found none yet. A read route's `RowRead` is made in the same
    statement, on the same snapshot."""
    pool: asyncpg.Pool = connection.app.state.resources.pool
    handler = connection.route_handler
    reads = connection.scope.get("method") == "GET" or bool(handler.opt.get(READS))
    if not reads and (known := writer_standing.known()) is not None:
        return msgspec.structs.replace(known, assumed=True)
    started = time.monotonic()
    found: list[Standing] = []
    read: RowRead | None = handler.opt.get(READ_WITH_STANDING) if reads else None
    rows: list[Record] = []

    async def check(conn: Connection) -> bool:
        if read is None:
            found[:] = [await standing(conn, subject, _FOLLOWERS, _NAMES, reads=reads)]
        else:
            key = connection.path_params[read.param]
            settled, row = await standing_with(conn, subject, _FOLLOWERS, _NAMES, read.sql, key)
            found[:], rows[:] = [settled], [row]
        if found[0].ready:
            return True
        # A stuck follower will not get there by waiting: answer stale at once.
        return await blocked(conn, subject, _FOLLOWERS, _NAMES)

    ready = await _polled(pool, check, wait_s) and found[0].ready
    wanted = header(connection.scope["headers"], _MIN_POSITION_NAME)
    if reads and ready and wanted is not None and (position := natural(wanted)) is not None:
        left = max(0.0, wait_s - (time.monotonic() - started))
        ready = await caught_up(pool, position, left)
        async with pool.acquire() as conn:  # the epochs as of the end of the wait
            found[:] = [await standing(conn, subject, _FOLLOWERS, _NAMES, reads=False)]
        rows.clear()  # read before the wait: the handler reads its row again
    writer_standing.seen(found[0])
    if rows:
        connection.scope.setdefault("state", {})[_PREFETCHED] = rows[0]
    if not ready:
        _stale.set(True)
        _stale_reads.inc()
    return found[0]


def answered_stale() -> bool:
    """Whether this request's read did not wait until its caller's writes were read: its
    answer, a refusal included (a 404 of a thing just made), says so."""
    return _stale.get()


async def after_request(response: Response[Any]) -> Response[Any]:
    position = last_position.get()
    if position is not None:
        response.headers[POSITION] = str(position)
    if _stale.get():
        response.headers[STALE] = "true"
    return response
