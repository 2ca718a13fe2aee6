"""The relay: tails the events table and publishes every event to JetStream, in order per stream.

Postgres is the record, JetStream the transport. The checkpoint advances only past events whose
publish JetStream acknowledged, so a crash or a broker outage republishes from the checkpoint, and
`Nats-Msg-Id` = event id lets JetStream drop what it already holds. Publishes are pipelined across
streams but chained within a stream (the next event of a stream is sent only after the previous one
is acknowledged), so a lost message can never be overtaken by a later event of its own stream.
"""

import asyncio
from collections import deque
from collections.abc import Sequence
from uuid import UUID

import asyncpg
from nats.errors import Error as NatsError
from nats.js import JetStreamContext
from nats.js.api import StorageType, StreamConfig
from nats.js.errors import BadRequestError

from infra.followers import global_log
from infra.followers.global_log import Cursor, LogEntry
from infra.followers.log_follower import LogFollower
from infra.jetstream.cloudevents import headers_for, subject_for
from infra.postgres.connections import Connection
from infra.settings import NatsSettings, RelaySettings


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


def checkpoint_name(settings: RelaySettings) -> str:
    """Where a relay of these settings records how far it has published."""
    return f"relay:{settings.name}"


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
        self._stream_ready = False
        self._follower = LogFollower(
            pool,
            name=self.checkpoint_name,
            batch_size=settings.batch_size,
            poll_interval_s=settings.poll_interval_s,
            retry_on=(RelayPublishError, NatsError),
        )

    @property
    def checkpoint_name(self) -> str:
        return checkpoint_name(self._settings)

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
        entries = await global_log.read_after(conn, cursor, self._settings.batch_size)
        if not entries:
            return cursor, 0
        outcome = await self.publish_batch(entries)
        safe = outcome.last_safe_cursor
        if safe is not None:
            await global_log.save_checkpoint(conn, self.checkpoint_name, safe)
            cursor = safe
        if outcome.error is not None:
            raise RelayPublishError(outcome.acked_prefix, len(entries)) from outcome.error
        return cursor, len(entries)

    async def run(self, stop: asyncio.Event) -> None:
        """Lead (one relay holds the lock, others wait as standbys) and relay until stop."""
        await self._follower.run(self._step, stop)

    @property
    def leading(self) -> bool:
        return self._follower.leading

    async def _step(self, conn: Connection, cursor: Cursor) -> tuple[Cursor, int]:
        if not self._stream_ready:
            await ensure_stream(self._js, self._nats)
            self._stream_ready = True
        try:
            return await self.relay_once(conn, cursor)
        except (RelayPublishError, NatsError):
            # The broker is down or the stream is gone (a broker with a fresh store): declare
            # the stream again before the retry republishes from the checkpoint.
            self._stream_ready = False
            raise


class RelayPublishError(Exception):
    def __init__(self, acked: int, total: int) -> None:
        super().__init__(f"{acked} of {total} events acknowledged before a publish failed")
        self.acked = acked
        self.total = total
