"""The composition root: opens the pool and the NATS connection; the only place that wires them."""

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

import asyncpg
import nats
from nats.aio.client import Client as NatsClient
from nats.js import JetStreamContext

from infra.settings import DatabaseSettings, NatsSettings, Settings, redacted

if TYPE_CHECKING:  # asyncpg's classes are generic only in its stubs
    from asyncpg.pool import PoolConnectionProxy

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Resources:
    """Live connections a process shares; opened and closed by `open_resources` only."""

    pool: asyncpg.Pool
    nc: NatsClient
    js: JetStreamContext


class FairPool(asyncpg.Pool):
    """Hands connections out in the order they were asked for: asyncpg's pool lets a late asker
    overtake a woken waiter (docs/decisions/0012-process-tuning.md). A write request's first
    connection comes with its writer's standing checked (infra/postgres/writer_standing.py)."""

    __slots__ = ("_holding", "_turns")

    def __init__(self, *connect_args: Any, max_size: int, **kwargs: Any) -> None:
        super().__init__(*connect_args, max_size=max_size, **kwargs)
        self._turns = asyncio.Semaphore(max_size)
        # The connections out on a turn, so that each turn is given back once, whichever way
        # its connection comes back (released, or released again after its loss).
        self._holding: set[object] = set()

    # The signatures are asyncpg's: `acquire(timeout=...)` bounds the wait for a turn as well.
    async def _acquire(self, timeout: float | None) -> "PoolConnectionProxy[Any]":  # noqa: ASYNC109
        if timeout is None:  # most asks: no timeout context to enter and leave
            proxy = await self._turn(None)
        else:
            async with asyncio.timeout(timeout):
                proxy = await self._turn(timeout)
        self._holding.add(proxy)
        gate = _gate.get()
        if gate is None or not gate.closed():
            return proxy
        return await self._through(gate, proxy, timeout)

    async def _turn(self, timeout: float | None) -> "PoolConnectionProxy[Any]":  # noqa: ASYNC109
        await self._turns.acquire()
        try:
            proxy: PoolConnectionProxy[Any] = await super()._acquire(timeout)  # type: ignore[misc]
        except BaseException:
            self._turns.release()
            raise
        return proxy

    async def _through(
        self,
        gate: "Gate",
        proxy: "PoolConnectionProxy[Any]",
        timeout: float | None,  # noqa: ASYNC109
    ) -> "PoolConnectionProxy[Any]":
        """`proxy` once `gate` passes it; when it does not, what follows (which may read) runs
        without holding a connection: many tasks each holding one while waiting for another
        would starve the pool."""
        try:
            passed = await gate.passes(proxy)
        except BaseException:
            await self.release(proxy)
            raise
        if passed:
            return proxy
        await self.release(proxy)
        await gate.after()
        return await self._acquire(timeout)

    async def release(self, connection: Any, *, timeout: float | None = None) -> None:  # noqa: ASYNC109
        try:
            await super().release(connection, timeout=timeout)
        finally:
            if connection in self._holding:
                self._holding.discard(connection)
                self._turns.release()


class Gate(Protocol):
    """A check the first connection a task is handed must pass before the task uses it: a
    write's standing (infra/postgres/writer_standing.py)."""

    def closed(self) -> bool:
        """Whether the next connection handed out is to pass `passes` first."""
        ...

    async def passes(self, conn: Any) -> bool:
        """Check on `conn`: whether the task may use it. When not, the pool takes it back,
        awaits `after`, and hands out another."""
        ...

    async def after(self) -> None: ...


_gate: ContextVar[Gate | None] = ContextVar("trainplate_pool_gate", default=None)


def gate_with(gate: Gate | None) -> None:
    """The gate this task's (a request's) next connections pass; None: none."""
    _gate.set(gate)


def gate() -> Gate | None:
    return _gate.get()


async def _nothing_to_reset(conn: object) -> None:
    """asyncpg resets a released connection (a round trip: RESET ALL, UNLISTEN, unlock, ...);
    a process that never leaves session state on pooled connections can skip it."""


async def create_pool(
    db: DatabaseSettings, *, application_name: str, session_free: bool = False
) -> asyncpg.Pool:
    """`session_free`: this process never LISTENs, locks or sets anything for a session on a
    pooled connection (the API), so releasing one needs no reset."""
    pool = await FairPool(
        db.url,
        connection_class=asyncpg.Connection,
        record_class=asyncpg.Record,
        max_queries=50_000,  # asyncpg's default: a connection is replaced after so many
        loop=None,
        setup=None,
        init=None,
        reset=_nothing_to_reset if session_free else None,
        # Idle connections stay open: a process holds at most pool_max, and closing them only
        # to connect again at the next burst costs more than the timer asyncpg otherwise arms
        # and cancels on every release and acquire.
        max_inactive_connection_lifetime=0,
        min_size=db.pool_min,
        max_size=db.pool_max,
        command_timeout=db.command_timeout_s,
        server_settings={
            "application_name": application_name,
            "statement_timeout": str(db.statement_timeout_ms),
            "lock_timeout": str(db.lock_timeout_ms),
            "idle_in_transaction_session_timeout": str(db.idle_in_transaction_timeout_ms),
        },
    )
    assert pool is not None
    return pool


async def _on_nats_error(exc: Exception) -> None:
    # Reconnect attempts fail while the broker is down; one line each, not a traceback.
    log.warning("NATS: %s: %s", type(exc).__name__, exc)


async def _on_nats_disconnected() -> None:
    log.warning("NATS: disconnected; reconnecting")


async def _on_nats_reconnected() -> None:
    log.info("NATS: reconnected")


async def connect_nats(settings: NatsSettings, *, name: str) -> NatsClient:
    """Connect, retrying until the broker answers: processes may start before it does."""
    delay = 0.1
    while True:
        try:
            return await nats.connect(
                settings.url,
                name=name,
                connect_timeout=2,
                max_reconnect_attempts=-1,  # ride out broker restarts forever
                reconnect_time_wait=0.5,
                error_cb=_on_nats_error,
                disconnected_cb=_on_nats_disconnected,
                reconnected_cb=_on_nats_reconnected,
            )
        except (nats.errors.NoServersError, OSError, TimeoutError) as exc:
            log.warning("NATS at %s not reachable (%s); retrying", redacted(settings.url), exc)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)


async def _drain(nc: NatsClient) -> None:
    """Drain on the way out; a broker that is already gone leaves nothing to drain, and what
    the client held for its return (a publish, a fetch) is dropped with the connection."""
    try:
        await nc.drain()
        return
    except (nats.errors.Error, OSError) as exc:
        log.info("NATS connection not drained (%s); closing it", exc)
    try:
        await nc.close()
    except OSError as exc:  # what it held for the broker's return meets the dead socket
        log.info("NATS connection closed with messages unsent (%s)", exc)


@contextlib.asynccontextmanager
async def open_resources(settings: Settings, *, role: str) -> AsyncIterator[Resources]:
    async with contextlib.AsyncExitStack() as stack:
        name = f"{settings.service_name}-{role}"
        pool = await create_pool(
            # Neither leaves session state on a pooled connection (the submitter's migration
            # lock is taken and released on one connection it holds throughout).
            settings.database,
            application_name=name,
            session_free=role in ("api", "submitter"),
        )
        stack.push_async_callback(pool.close)
        nc = await connect_nats(settings.nats, name=name)
        stack.push_async_callback(_drain, nc)  # runs first on exit (LIFO): drain, then close pool
        yield Resources(pool=pool, nc=nc, js=nc.jetstream())


# A young collection after this many more containers made than freed, not CPython's 700, which
# collected live batches for nothing; cycles wait at most that long
# (docs/decisions/0012-process-tuning.md).
YOUNG_COLLECTION_AFTER: Final = 50_000


def freeze_start_up() -> None:
    """Leave what start-up made (tens of thousands of objects, kept for good) out of later
    garbage collections: walking them cost a busy process a tenth of its CPU or more
    (docs/decisions/0012-process-tuning.md). Called once a process's resources are made."""
    gc.collect()  # what is garbage already is freed, not kept for good
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_AFTER, *gc.get_threshold()[1:])
