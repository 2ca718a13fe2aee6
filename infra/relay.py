"""The relay: tails the events table and publishes every event to JetStream, in order per stream.

Postgres is the record, JetStream the transport. The checkpoint advances only past events whose
publish JetStream acknowledged, so a crash or a broker outage republishes from the checkpoint, and
`Nats-Msg-Id` = event id lets JetStream drop what it already holds. Publishes are pipelined across
streams but chained within a stream (the next event of a stream is sent only after the previous one
is acknowledged), so a lost message can never be overtaken by a later event of its own stream.
"""

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Sequence
from typing import Final
from uuid import UUID

import asyncpg
from nats.errors import Error as NatsError
from nats.js import JetStreamContext
from nats.js.api import StorageType, StreamConfig
from nats.js.errors import BadRequestError

from infra import globallog
from infra.cloudevents import headers_for, subject_for
from infra.commit_notifier import NOTIFY_CHANNEL
from infra.connections import Connection
from infra.globallog import Cursor, LogEntry
from infra.settings import NatsSettings, RelaySettings

log = logging.getLogger(__name__)

RELAY_LOCK_KEY: Final = 0x7472_6169_6E70_6C02  # one active relay at a time


async def ensure_stream(js: JetStreamContext, settings: NatsSettings) -> None:
    """Create the stream, or bring an existing one's configuration up to date."""
    config = StreamConfig(
        name=settings.stream,
        subjects=[f"{settings.subject_prefix}.>"],
        storage=StorageType.FILE,
        duplicate_window=settings.duplicate_window_s,
    )
    try:
        await js.add_stream(config)
    except BadRequestError:  # exists with another configuration
        await js.update_stream(config)


class PublishOutcome:
    """Which events of a batch were acknowledged, and the first error if any was not."""

    def __init__(self, entries: Sequence[LogEntry]) -> None:
        self._entries = entries
        self._acked = [False] * len(entries)
        self.error: BaseException | None = None

    def ack(self, index: int) -> None:
        self._acked[index] = True

    @property
    def acked_prefix(self) -> int:
        """How many events, from the start of the batch, are all acknowledged."""
        for index, acked in enumerate(self._acked):
            if not acked:
                return index
        return len(self._acked)

    @property
    def last_safe_cursor(self) -> Cursor | None:
        prefix = self.acked_prefix
        return self._entries[prefix - 1].cursor if prefix else None


class Relay:
    def __init__(
        self,
        pool: asyncpg.Pool,
        js: JetStreamContext,
        nats: NatsSettings,
        settings: RelaySettings,
    ) -> None:
        self._pool = pool
        self._js = js
        self._nats = nats
        self._settings = settings
        self._wake = asyncio.Event()
        self.leading = False

    @property
    def checkpoint_name(self) -> str:
        return f"relay:{self._settings.name}"

    async def publish_batch(self, entries: Sequence[LogEntry]) -> PublishOutcome:
        """Publish a batch: streams in parallel (bounded), a stream's events one after another.

        A fixed set of publishers takes whole per-stream chains from a queue; each sends a chain's
        events in order, the next only after JetStream acknowledged the previous one, and drops
        the rest of the chain on a failure (its events stay behind the checkpoint).
        """
        outcome = PublishOutcome(entries)
        chains: dict[UUID, list[int]] = {}
        for index, entry in enumerate(entries):
            chains.setdefault(entry.stream_id, []).append(index)
        queue = deque(chains.values())

        async def publisher() -> None:
            while queue:
                for index in queue.popleft():
                    entry = entries[index]
                    try:
                        await self._js.publish(
                            subject_for(self._nats.subject_prefix, entry),
                            entry.data.encode(),
                            timeout=self._nats.publish_timeout_s,
                            headers=headers_for(entry),
                        )
                    except Exception as exc:  # any failure ends this chain, not the batch
                        outcome.error = outcome.error or exc
                        break
                    outcome.ack(index)

        workers = min(self._settings.max_in_flight, len(chains))
        await asyncio.gather(*(publisher() for _ in range(workers)))
        return outcome

    async def relay_once(self, conn: Connection, cursor: Cursor) -> tuple[Cursor, int]:
        """Publish the next batch after `cursor`; returns the new cursor and how many were read."""
        entries = await globallog.read_after(conn, cursor, self._settings.batch_size)
        if not entries:
            return cursor, 0
        outcome = await self.publish_batch(entries)
        safe = outcome.last_safe_cursor
        if safe is not None:
            await globallog.save_checkpoint(conn, self.checkpoint_name, safe)
            cursor = safe
        if outcome.error is not None:
            raise RelayPublishError(outcome.acked_prefix, len(entries)) from outcome.error
        return cursor, len(entries)

    async def run(self, stop: asyncio.Event) -> None:
        """Lead (one relay holds the advisory lock, others wait as standbys), relay until stop."""
        async with self._pool.acquire() as leader:
            if not await self._lead(leader, stop):
                return
            await leader.add_listener(NOTIFY_CHANNEL, self._on_notify)
            self.leading = True
            try:
                await self._loop(leader, stop)
            finally:
                self.leading = False
                with contextlib.suppress(asyncpg.PostgresError, OSError):
                    await leader.remove_listener(NOTIFY_CHANNEL, self._on_notify)
                    await leader.execute("SELECT pg_advisory_unlock($1)", RELAY_LOCK_KEY)

    async def _lead(self, conn: Connection, stop: asyncio.Event) -> bool:
        while not stop.is_set():
            if await conn.fetchval("SELECT pg_try_advisory_lock($1)", RELAY_LOCK_KEY):
                log.info("relay %s is the leader", self._settings.name)
                return True
            await _wait(stop, self._settings.poll_interval_s * 4)
        return False

    async def _loop(self, conn: Connection, stop: asyncio.Event) -> None:
        cursor = await globallog.load_checkpoint(conn, self.checkpoint_name)
        stream_ready = False
        backoff = 0.1
        while not stop.is_set():
            self._wake.clear()
            try:
                if not stream_ready:
                    await ensure_stream(self._js, self._nats)
                    stream_ready = True
                cursor, read = await self.relay_once(conn, cursor)
            except (RelayPublishError, NatsError) as exc:
                # The broker is down or the stream is gone (a broker with a fresh store):
                # wait, re-declare the stream, and republish from the checkpoint.
                log.warning("relay: %s; retrying in %.1f s", exc, backoff)
                stream_ready = False
                await _wait(stop, backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            backoff = 0.1
            if read < self._settings.batch_size:
                # Caught up (or held back by the horizon): sleep until a commit notifies us,
                # or the poll interval passes, whichever comes first.
                await _wait_any(stop, self._wake, self._settings.poll_interval_s)

    def _on_notify(self, *_: object) -> None:
        self._wake.set()


class RelayPublishError(Exception):
    def __init__(self, acked: int, total: int) -> None:
        super().__init__(f"{acked} of {total} events acknowledged before a publish failed")
        self.acked = acked
        self.total = total


async def _wait(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)


async def _wait_any(stop: asyncio.Event, wake: asyncio.Event, seconds: float) -> None:
    waiters = [asyncio.create_task(stop.wait()), asyncio.create_task(wake.wait())]
    try:
        await asyncio.wait(waiters, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
