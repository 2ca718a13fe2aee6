"""Waking the readers of the event log (LISTEN trainplate_events) after appends commit."""

import asyncio
import logging
import time
from typing import Final, Protocol

import asyncpg

from infra.postgres.connections import Connection

NOTIFY_CHANNEL: Final = "trainplate_events"

log = logging.getLogger(__name__)


class CommitNotices(Protocol):
    """What an append tells of its commit: `claim` before its statement is sent (whether the
    statement carries a NOTIFY), `committed` once it has committed."""

    def claim(self) -> float | None: ...

    def committed(self, carried_at: float | None) -> None: ...


class CommitNotifier:
    """Wakes the log's readers (LISTEN trainplate_events) soon after appends commit. A NOTIFY
    holds a database-wide lock until its commit, so at most one append per `interval_s` carries
    one, and a burst's end gets one trailing (docs/decisions/0018-event-store-statements.md)."""

    def __init__(self, pool: "asyncpg.Pool | Connection", *, interval_s: float = 0.005) -> None:
        self._pool = pool
        self._interval_s = interval_s
        self._last_claim = float("-inf")
        self._uncovered_at: float | None = None  # when the latest uncovered append completed
        self._task: asyncio.Task[None] | None = None

    def claim(self) -> float | None:
        """If a NOTIFY is due, the caller's statement carries it: returns the time of the claim."""
        now = time.monotonic()
        if now - self._last_claim < self._interval_s:
            return None
        self._last_claim = now
        return now

    def committed(self, carried_at: float | None) -> None:
        """Called after each append's commit, with what `claim` returned before it was sent."""
        if carried_at is not None:
            self._covered_by(carried_at)
            return
        self._uncovered_at = time.monotonic()
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._trail(), name="trainplate-notify")

    def close(self) -> None:
        """Stop waiting to send a trailing NOTIFY (at shutdown, or when a pool goes away)."""
        if self._task is not None:
            self._task.cancel()

    def _covered_by(self, sent_at: float) -> None:
        # A NOTIFY sent after an append completed is delivered after that append's commit.
        if self._uncovered_at is not None and sent_at >= self._uncovered_at:
            self._uncovered_at = None

    async def _trail(self) -> None:
        # It waits one interval more than a carrier would: while appends keep coming, one of
        # them claims first and carries the NOTIFY in its own statement, where a trailing one
        # costs a statement (and a connection) of its own. Only a burst's end pays the wait.
        while self._uncovered_at is not None:
            wait = self._last_claim + 2 * self._interval_s - time.monotonic()
            if wait > 0:  # (an append may have claimed while this slept: then wait again)
                await asyncio.sleep(wait)
                continue
            sent_at = self.claim()
            assert sent_at is not None  # more than an interval has passed since the last claim
            try:
                await self._pool.execute("SELECT pg_notify($1, '')", NOTIFY_CHANNEL)
            except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
                log.info("no wake-up sent to the log's readers (%s); they will poll", exc)
                return
            self._covered_by(sent_at)
