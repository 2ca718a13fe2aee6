"""Read-your-writes over eventually consistent read models.

By default, with no header: a caller's read waits until the read models have applied every
write the caller made before it, and what the fan-out made of them (the store's read_marks.py:
the mark is in PostgreSQL, so a write through one API process is read back through another).
A caller with nothing pending pays one indexed query, the request's standing query, which also
says whether what the process keeps about access still holds (infra/http/access_cache.py); it is
run by authentication (infra/http/auth.py), as every authenticated read needs it. A write, which
waits for nothing, is not asked: its standing is the one the process last found, checked where the
write takes effect (the store's writer_standing.py).

Every write response also carries `X-Trainplate-Position`, the log position of the last event the
request appended; a read that sends a position as `X-Trainplate-Min-Position` waits for that
event as well (to read another caller's write). Both waits are bounded together by
`TRAINPLATE_CONSISTENCY_WAIT_S`; a read whose wait runs out answers from the current state with
`X-Trainplate-Stale: true`, counted by `trainplate_stale_reads_total`; so does a read whose
caller's writes wait for a follower stuck on an event (a fault on record), at once, since
waiting cannot help until the follower is moved on.
"""

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Final, Protocol

import msgspec
from litestar import Response
from litestar.connection import ASGIConnection
from prometheus_client import CollectorRegistry, Counter

from infra.http.headers import header
from infra.http.numerals import natural
from infra.security.standing import Standing

POSITION: Final = "X-Trainplate-Position"
MIN_POSITION: Final = "X-Trainplate-Min-Position"
STALE: Final = "X-Trainplate-Stale"
_MIN_POSITION_NAME: Final = MIN_POSITION.lower().encode("latin-1")

_stale: ContextVar[bool] = ContextVar("trainplate_stale", default=False)

# Process-wide, as reads are served per process; /metrics shows it beside the followers' lag.
STALE_READS: Final = CollectorRegistry()
_stale_reads: Final = Counter(
    "trainplate_stale_reads",
    "Reads answered before the read models reached what they had to wait for.",
    registry=STALE_READS,
)


Recheck = Callable[[Standing], Awaitable[None]]


class Settled(Protocol):
    """What settling found: the standing, the route's `RowRead` row read with it (None: not
    read, or read before a wait and so not kept), and whether the read models were ready."""

    @property
    def standing(self) -> Standing: ...

    @property
    def row(self) -> object: ...

    @property
    def ready(self) -> bool: ...


class Standings(Protocol):
    """The database's side of a request's standing (the app's wiring puts the store's on the
    app state as `standings`): the statements that settle it, what a write assumed of it."""

    def begin(self) -> None:
        """A request starts: it has appended nothing and assumed nothing."""

    def end(self) -> None:
        """A request has been answered: nothing it assumed stands any longer."""

    def expect(self, assumed: Standing, recheck: Recheck) -> None:
        """This request's standing is `assumed`, to be checked before it takes effect."""

    def unchecked(self) -> bool:
        """Whether the request's assumed standing is still to be checked."""

    async def confirm(self) -> None:
        """Check the request's assumed standing now, if it still is."""

    async def settle(
        self,
        subject: str,
        *,
        reads: bool,
        row_sql: str | None,
        key: object,
        min_position: int | None,
        wait_s: float,
    ) -> Settled: ...


def standings_of(connection: ASGIConnection[Any, Any, Any, Any]) -> Standings:
    standings: Standings = connection.app.state.standings
    return standings


def begin(standings: Standings) -> None:
    """A request starts: it has appended nothing, read nothing stale yet and assumed nothing."""
    standings.begin()
    _stale.set(False)


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


def prefetched(connection: ASGIConnection[Any, Any, Any, Any]) -> object:
    """The route's `RowRead` as the request's settling read it (None: it did not read it; a
    row it found nothing for has its columns NULL, from an outer join)."""
    return connection.scope.get("state", {}).get(_PREFETCHED)


async def settle(
    connection: ASGIConnection[Any, Any, Any, Any], subject: str, wait_s: float
) -> Standing:
    """The request's standing: for a read (GET, or a route that says it reads), once the read
    models hold the caller's own writes (and the `X-Trainplate-Min-Position` event, when sent),
    or the wait ran out, or a follower it waits for is stuck on an event (then it answers
    stale); for a write, at once, as nothing waits for a writer: the one this process last
    found, `assumed`, or asked when it has found none yet. A read route's `RowRead` is made in
    the same statement, on the same snapshot."""
    handler = connection.route_handler
    reads = connection.scope.get("method") == "GET" or bool(handler.opt.get(READS))
    read: RowRead | None = handler.opt.get(READ_WITH_STANDING) if reads else None
    wanted = header(connection.scope["headers"], _MIN_POSITION_NAME)
    settled = await standings_of(connection).settle(
        subject,
        reads=reads,
        row_sql=None if read is None else read.sql,
        key=None if read is None else connection.path_params[read.param],
        min_position=None if wanted is None else natural(wanted),
        wait_s=wait_s,
    )
    if settled.row is not None:
        connection.scope.setdefault("state", {})[_PREFETCHED] = settled.row
    if not settled.ready:
        _stale.set(True)
        _stale_reads.inc()
    return settled.standing


def answered_stale() -> bool:
    """Whether this request's read did not wait until its caller's writes were read: its
    answer, a refusal included (a 404 of a thing just made), says so."""
    return _stale.get()


AfterRequest = Callable[[Response[Any]], Awaitable[Response[Any]]]


def after_request(last_position: Callable[[], int | None]) -> AfterRequest:
    """The hook that says, on each response, the log position of the request's last append
    (`last_position`, which the store keeps per request) and whether it answered stale."""

    async def answered(response: Response[Any]) -> Response[Any]:
        position = last_position()
        if position is not None:
            response.headers[POSITION] = str(position)
        if _stale.get():
            response.headers[STALE] = "true"
        return response

    return answered
