"""Read-your-writes over eventually consistent read models: a read waits, bounded, until they hold
its caller's writes; a write waits for nothing. What callers see: docs/api/index.md; how it is
settled: docs/decisions/0019-request-standing.md, docs/decisions/0029-what-a-request-reads.md."""

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Final, Protocol

import msgspec
from litestar import Response
from litestar.connection import ASGIConnection
from prometheus_client import CollectorRegistry, Counter

from infra.http.headers import header
from infra.http.numerals import natural
from infra.security.standing import Along, Standing

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

    def known(self) -> Standing | None:
        """The epochs this process last found (None: none yet)."""

    async def settle(
        self,
        subject: str,
        *,
        reads: bool,
        along: Along | None,
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


# How authentication settles a request for a caller (a fake in unit tests of authentication);
# `page`: a page's keys, to read along (PAGE_WITH_STANDING).
Settle = Callable[[ASGIConnection[Any, Any, Any, Any], str, Along | None], Awaitable[Standing]]


def settler(wait_s: float) -> Settle:
    """`settle`, with reads waiting up to `wait_s`."""

    async def settled(
        connection: ASGIConnection[Any, Any, Any, Any], subject: str, page: Along | None
    ) -> Standing:
        return await settle(connection, subject, wait_s, page)

    return settled


class RowRead(msgspec.Struct, frozen=True):
    """A row a read route needs, read by the statement that settles the request (one round trip, not
    two): `sql` selects it with $2, the path parameter `param`. Asked for in the route's options
    (`opt={READ_WITH_STANDING: RowRead(...)}`), taken with `prefetched`; sent once authenticated."""

    sql: str
    param: str


READ_WITH_STANDING: Final = "trainplate_read_with_standing"
# A list route's page keys, read by the settling statement too: its options name how the page's
# statement is made for a caller (`opt={PAGE_WITH_STANDING: PageRead}`), taken with `ridden`.
PAGE_WITH_STANDING: Final = "trainplate_page_with_standing"
PageRead = Callable[[ASGIConnection[Any, Any, Any, Any], Any], Awaitable[Along | None]]
# A route that only reads, though not by GET (Run:ai asks some questions by POST), says so in its
# options (`opt={READS: True}`), and its caller's writes are read as a GET's are.
READS: Final = "trainplate_reads"
_PREFETCHED: Final = "trainplate_prefetched"
_RIDDEN: Final = "trainplate_ridden"


def prefetched(connection: ASGIConnection[Any, Any, Any, Any]) -> object:
    """The route's `RowRead` as the request's settling read it (None: it did not read it; a
    row it found nothing for has its columns NULL, from an outer join)."""
    return connection.scope.get("state", {}).get(_PREFETCHED)


def ridden(connection: ASGIConnection[Any, Any, Any, Any]) -> tuple[Along, Any] | None:
    """The page statement the request's settling read, and its rows (None: it read none)."""
    found: tuple[Along, Any] | None = connection.scope.get("state", {}).get(_RIDDEN)
    return found


def reads(connection: ASGIConnection[Any, Any, Any, Any]) -> bool:
    """Whether the request only reads (a GET, or a route that says so)."""
    return connection.scope.get("method") == "GET" or bool(connection.route_handler.opt.get(READS))


async def settle(
    connection: ASGIConnection[Any, Any, Any, Any],
    subject: str,
    wait_s: float,
    page: Along | None = None,
) -> Standing:
    """The request's standing: a read's (GET, or a route that says it reads) once the read models
    hold its caller's writes and any `X-Trainplate-Min-Position`, the wait ran out or a follower
    is stuck (stale), its `RowRead` or `page` on that snapshot; a write's at once."""
    reading = reads(connection)
    read: RowRead | None = connection.route_handler.opt.get(READ_WITH_STANDING) if reading else None
    along = page if reading else None
    if along is None and read is not None:
        along = Along(read.sql, (connection.path_params[read.param],))
    wanted = header(connection.scope["headers"], _MIN_POSITION_NAME)
    settled = await standings_of(connection).settle(
        subject,
        reads=reading,
        along=along,
        min_position=None if wanted is None else natural(wanted),
        wait_s=wait_s,
    )
    if settled.row is not None and along is not None:
        state = connection.scope.setdefault("state", {})
        if along.many:
            state[_RIDDEN] = (along, settled.row)
        else:
            state[_PREFETCHED] = settled.row
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
