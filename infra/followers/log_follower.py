"""Following the event log, for the relay and every projection runner: one leader per name (a
session advisory lock; others stand by) steps until a short batch, then sleeps for a NOTIFY or the
poll. `retry_on` retries from the saved cursor, backing off; a stuck step, every STUCK_RETRY_S."""

import asyncio
import contextlib
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable

import asyncpg

from infra.followers import global_log
from infra.followers.faults import STUCK_RETRY_S, FollowerStuckError
from infra.followers.global_log import Cursor
from infra.postgres.commit_notifier import NOTIFY_CHANNEL
from infra.postgres.connections import Connection

log = logging.getLogger(__name__)

Step = Callable[[Connection, Cursor], Awaitable[tuple[Cursor, int]]]


def lock_key(name: str) -> int:
    """A stable 64-bit advisory-lock key for a follower's name."""
    return int.from_bytes(hashlib.sha256(f"trainplate:{name}".encode()).digest()[:8], signed=True)


class LogFollower:
    def __init__(
        self,
        pool: asyncpg.Pool,
        *,
        name: str,
        batch_size: int,
        poll_interval_s: float,
        retry_on: tuple[type[Exception], ...] = (),
    ) -> None:
        self._pool = pool
        self.name = name
        self._batch_size = batch_size
        self._poll_interval_s = poll_interval_s
        self._retry_on = retry_on
        self._wake = asyncio.Event()
        self._notified_at = 0.0  # when the last commit notice came (monotonic)
        self._polled_at = 0.0  # when the last wait ran out without one
        self.leading = False

    async def run(self, step: Step, stop: asyncio.Event) -> None:
        async with self._pool.acquire() as leader:
            if not await self._lead(leader, stop):
                return
            await leader.add_listener(NOTIFY_CHANNEL, self._on_notify)
            self.leading = True
            try:
                await self._loop(leader, step, stop)
            finally:
                self.leading = False
                with contextlib.suppress(asyncpg.PostgresError, OSError):
                    await leader.remove_listener(NOTIFY_CHANNEL, self._on_notify)
                    await leader.execute("SELECT pg_advisory_unlock($1)", lock_key(self.name))

    async def _lead(self, conn: Connection, stop: asyncio.Event) -> bool:
        while not stop.is_set():
            if await conn.fetchval("SELECT pg_try_advisory_lock($1)", lock_key(self.name)):
                log.info("%s is the leader", self.name)
                return True
            await wait(stop, self._poll_interval_s * 4)
        return False

    async def _loop(self, conn: Connection, step: Step, stop: asyncio.Event) -> None:
        cursor = await global_log.load_checkpoint(conn, self.name)
        backoff = 0.1
        self._polled_at = time.monotonic()  # its first step reads what is there now
        while not stop.is_set():
            self._wake.clear()
            try:
                cursor, read = await step(conn, cursor)
            except FollowerStuckError:  # recorded and logged where it was met
                await wait(stop, STUCK_RETRY_S)
                self._polled_at = time.monotonic()
                cursor = await global_log.load_checkpoint(conn, self.name)
                continue
            except self._retry_on as exc:
                log.warning("%s: %s; retrying in %.1f s", self.name, exc, backoff)
                await wait(stop, backoff)
                backoff = min(backoff * 2, 5.0)
                self._polled_at = time.monotonic()
                cursor = await global_log.load_checkpoint(conn, self.name)
                continue
            backoff = 0.1
            # Caught up (or held back by the horizon): sleep until a commit notifies us, or the
            # poll interval passes, whichever comes first.
            if read < self._batch_size and not await _wait_any(
                stop, self._wake, self._poll_interval_s
            ):
                self._polled_at = time.monotonic()

    def fresh_since(self) -> float:
        """What a step's caught-up answer must be read after (a monotonic time): the last commit
        notice it had, or the last poll; with neither, now. An older read may miss a commit the
        follower was told of (infra/followers/log_tap.py serves reads to many followers)."""
        if not self.leading:
            return time.monotonic()
        return max(self._notified_at, self._polled_at)

    def _on_notify(self, *_: object) -> None:
        self._notified_at = time.monotonic()
        self._wake.set()


async def keep_following(
    run: Callable[[asyncio.Event], Awaitable[None]], stop: asyncio.Event, *, name: str
) -> None:
    """Run a follower until stop; when the database goes away (restart, failover), lead again
    once it is back."""
    backoff = 0.5
    while not stop.is_set():
        try:
            await run(stop)
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
            log.warning("%s lost the database (%s); retrying in %.1f s", name, exc, backoff)
            await wait(stop, backoff)
            backoff = min(backoff * 2, 5.0)
        else:
            backoff = 0.5


async def wait(stop: asyncio.Event, seconds: float) -> None:
    """Sleep `seconds`, or less if `stop` is set."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)


async def _wait_any(stop: asyncio.Event, wake: asyncio.Event, seconds: float) -> bool:
    """Whether `stop` or `wake` came before `seconds` passed."""
    waiters = [asyncio.create_task(stop.wait()), asyncio.create_task(wake.wait())]
    try:
        done, _ = await asyncio.wait(waiters, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        return bool(done)
    finally:
        for waiter in waiters:
            waiter.cancel()
