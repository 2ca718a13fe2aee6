"""The relay: tails the events table and publishes every event to JetStream, in order per stream.
The checkpoint passes only acknowledged publishes, so a crash republishes from it, and JetStream
drops the copies by `Nats-Msg-Id`. When it stops: docs/decisions/0013-delivery-to-jetstream.md."""

import asyncio
import logging
import time
from collections import deque
from collections.abc import Sequence
from typing import Final
from uuid import UUID

import asyncpg
from nats.aio.client import Client as NatsClient
from nats.errors import Error as NatsError
from nats.errors import MaxPayloadError
from nats.js import JetStreamContext
from nats.js.api import StorageType, StreamConfig
from nats.js.errors import BadRequestError
from opentelemetry.trace import SpanKind

from infra.followers import faults, global_log
from infra.followers.global_log import Cursor, LogEntry
from infra.followers.log_follower import LogFollower
from infra.jetstream.cloudevents import headers_for, subject_for
from infra.postgres.connections import Connection
from infra.settings import EVENT_BYTES, NatsSettings, RelaySettings
from infra.telemetry import tracing
from infra.telemetry.meters import RelayMetrics

log = logging.getLogger(__name__)

# Room a message's headers take beside the event (about 500 bytes today).
HEADERS_RESERVE: Final = 8 * 1024
STUCK_AFTER: Final = 3  # failed tries in a row at one event before it is the relay's fault


def stream_config(settings: NatsSettings) -> StreamConfig:
    return StreamConfig(
        name=settings.stream,
        subjects=[f"{settings.subject_prefix}.>"],
        storage=StorageType.FILE,
        duplicate_window=settings.duplicate_window_s,
        num_replicas=settings.replicas,
    )


async def ensure_stream(js: JetStreamContext, settings: NatsSettings) -> None:
    """Create the stream, or bring an existing one's configuration up to date (its replicas
    too: JetStream copies it to more servers, or fewer)."""
    config = stream_config(settings)
    try:
        await js.add_stream(config)
    except BadRequestError:  # exists with another configuration
        await js.update_stream(config)


class PublishOutcome:
    """Which events of a batch were acknowledged, and why the others failed."""

    def __init__(self, entries: Sequence[LogEntry]) -> None:
        self._entries = entries
        self._acked = [False] * len(entries)
        self.errors: dict[int, BaseException] = {}

    def ack(self, index: int) -> None:
        self._acked[index] = True

    def fail(self, index: int, error: BaseException) -> None:
        self.errors[index] = error

    @property
    def error(self) -> BaseException | None:
        """Why the first unacknowledged event failed (a stream's later events wait for it)."""
        return self.errors.get(self.acked_prefix) if self.errors else None

    @property
    def acked(self) -> int:
        """How many events of the batch were acknowledged."""
        return sum(self._acked)

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


def message_bytes(payload: bytes, headers: dict[str, str]) -> int:
    """What a message weighs against the broker's max_payload: its payload and its headers, as
    NATS sends them (`NATS/1.0`, a `key: value` line each, a blank line)."""
    lines = sum(len(key.encode()) + len(value.encode()) + 4 for key, value in headers.items())
    return len(payload) + len(b"NATS/1.0\r\n\r\n") + lines


class Relay:
    def __init__(
        self,
        pool: asyncpg.Pool,
        nc: NatsClient,
        nats: NatsSettings,
        settings: RelaySettings,
        *,
        event_bytes: int = EVENT_BYTES,
        metrics: RelayMetrics | None = None,
    ) -> None:
        self._pool = pool
        self._metrics = metrics
        self._nc = nc
        self._js = nc.jetstream()
        self._nats = nats
        self._settings = settings
        self._event_bytes = event_bytes
        self._stream_ready = False
        self._failing: UUID | None = None  # the event the last tries failed at, and how often
        self._failures = 0
        self._may_be_stuck = True  # until a step succeeds: a fault from before may be recorded
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
        """Publish a batch: streams in parallel (bounded), a stream's events in order, each once
        the one before is acknowledged, so no lost message is overtaken in its stream; a failure
        drops the rest of its chain, which stays behind the checkpoint."""
        outcome = PublishOutcome(entries)
        chains: dict[UUID, list[int]] = {}
        for index, entry in enumerate(entries):
            chains.setdefault(entry.stream_id, []).append(index)
        queue = deque(chains.values())

        async def publisher() -> None:
            while queue:
                for index in queue.popleft():
                    try:
                        await self._publish(entries[index])
                    except Exception as exc:  # any failure ends this chain, not the batch
                        outcome.fail(index, exc)
                        break
                    outcome.ack(index)

        workers = min(self._settings.max_in_flight, len(chains))
        await asyncio.gather(*(publisher() for _ in range(workers)))
        return outcome

    async def _publish(self, entry: LogEntry) -> None:
        subject, headers = subject_for(self._nats.subject_prefix, entry), headers_for(entry)
        parent = None
        if tracing.recording():  # a span continuing the event's trace: the next hop's parent
            parent = tracing.parse(headers.get("ce-traceparent"), headers.get("ce-tracestate"))
        if parent is None:
            await self._publish_message(subject, entry, headers)
            return
        attributes = {
            "messaging.system": "nats",
            "messaging.operation.type": "send",
            "messaging.destination.name": subject,
            "messaging.message.id": str(entry.event_id),
        }
        with tracing.span(
            f"send {self._nats.stream}", parents=[parent], kind=SpanKind.PRODUCER,
            attributes=attributes,
        ):  # fmt: skip
            hop = tracing.current()
            if hop is not None:
                headers["traceparent"] = tracing.traceparent_of(hop)
            await self._publish_message(subject, entry, headers)

    async def _publish_message(
        self, subject: str, entry: LogEntry, headers: dict[str, str]
    ) -> None:
        await self._js.publish(
            subject,
            entry.data.encode(),
            timeout=self._nats.publish_timeout_s,
            headers=headers,
        )

    def _refusal(self, entry: LogEntry) -> "MessageTooLargeError | None":
        """Why the broker would refuse the event's message (and close the connection), if it
        would. Most events are told apart by their length alone."""
        most = self._nc.max_payload
        if len(entry.data) * 4 + HEADERS_RESERVE <= most:
            return None
        size = message_bytes(entry.data.encode(), headers_for(entry))
        return MessageTooLargeError(size, most) if size > most else None

    async def relay_once(self, conn: Connection, cursor: Cursor) -> tuple[Cursor, int]:
        """Publish the next batch after `cursor`; returns the new cursor and how many were read.
        Only the events before one the broker would refuse are sent: none after it is sent
        again and again while the relay is stopped at it."""
        entries = await global_log.read_after(conn, cursor, self._settings.batch_size)
        if not entries:
            return cursor, 0
        refused = next(
            ((i, why) for i, e in enumerate(entries) if (why := self._refusal(e)) is not None),
            None,
        )
        started = time.perf_counter()
        outcome = await self.publish_batch(entries if refused is None else entries[: refused[0]])
        if self._metrics is not None:
            self._metrics.batch_seconds.observe(time.perf_counter() - started)
            self._metrics.published.inc(outcome.acked)
        safe = outcome.last_safe_cursor
        if safe is not None:
            await global_log.save_checkpoint(conn, self.checkpoint_name, safe)
            cursor = safe
        if outcome.error is not None:
            at, failed = outcome.acked_prefix, outcome.error
        elif refused is not None:
            at, failed = refused
        else:
            return cursor, len(entries)
        raise RelayPublishError(at, len(entries), entries[at]) from failed

    def check_broker(self) -> None:
        """Refuse a broker whose messages cannot hold the largest event and its headers."""
        if self._nc.max_payload < self._event_bytes + HEADERS_RESERVE:
            raise BrokerLimitError(self._nc.max_payload, self._event_bytes)

    async def run(self, stop: asyncio.Event) -> None:
        """Lead (one relay holds the lock, others wait as standbys) and relay until stop."""
        self.check_broker()
        await self._follower.run(self.step, stop)

    @property
    def leading(self) -> bool:
        return self._follower.leading

    async def step(self, conn: Connection, cursor: Cursor) -> tuple[Cursor, int]:
        """The follower's step: the next batch, and what a failure to publish it means."""
        try:
            if not self._stream_ready:
                await ensure_stream(self._js, self._nats)
                self._stream_ready = True
            cursor, read = await self.relay_once(conn, cursor)
        except (RelayPublishError, NatsError) as error:
            # The broker is down or the stream is gone (a broker with a fresh store): declare
            # the stream again before the retry republishes from the checkpoint.
            self._stream_ready = False
            await self._failed(conn, cursor, error)
            raise
        self._failing, self._failures = None, 0
        if self._may_be_stuck:
            await faults.clear(conn, self.checkpoint_name)
            self._may_be_stuck = False
        return cursor, read

    async def _failed(
        self, conn: Connection, cursor: Cursor, error: "RelayPublishError | NatsError"
    ) -> None:
        """Count a failed try at the event it stopped at; record it as the relay's fault when
        the broker refuses that event, or the tries at it keep failing."""
        if isinstance(error, RelayPublishError):
            culprit, cause = error.culprit, error.__cause__ or error
        else:  # declaring the stream failed: the event waiting is the next one
            waiting = await global_log.read_after(conn, cursor, 1)
            if not waiting:
                return
            culprit, cause = waiting[0], error
        if culprit.event_id != self._failing:
            self._failing, self._failures = culprit.event_id, 0
        self._failures += 1
        refused = isinstance(cause, MessageTooLargeError | MaxPayloadError)
        if not refused and self._failures < STUCK_AFTER:
            return
        fault = await faults.record(conn, self.checkpoint_name, culprit, cause)
        self._may_be_stuck = True
        if refused:
            log.error("%s; it retries every %.0f s", fault.describe(), faults.STUCK_RETRY_S)
            raise faults.FollowerStuckError(fault) from error
        log.error("%s; it keeps retrying", fault.describe())


class RelayPublishError(Exception):
    def __init__(self, acked: int, total: int, culprit: LogEntry) -> None:
        super().__init__(f"{acked} of {total} events acknowledged before a publish failed")
        self.acked = acked
        self.total = total
        self.culprit = culprit  # the first event not acknowledged


class MessageTooLargeError(Exception):
    """The event's message passes what the broker takes: sending it would only close the
    connection, whatever the number of tries."""

    def __init__(self, size: int, max_payload: int) -> None:
        super().__init__(
            f"its message is {size} bytes with its headers, more than the broker takes"
            f" (max_payload {max_payload})"
        )


class BrokerLimitError(Exception):
    def __init__(self, max_payload: int, event_bytes: int) -> None:
        super().__init__(
            f"the broker takes messages of at most {max_payload} bytes (max_payload), less than"
            f" an event may hold ({event_bytes} bytes, TRAINPLATE_SIZES__EVENT_BYTES) and its"
            f" headers ({HEADERS_RESERVE}): raise the broker's max_payload or lower the limit"
        )
