"""The submitter's JetStream side: one durable pull consumer, shared by every submitter as a work
queue, of the workload events that ask something of a backend. Batching, acknowledgement and
retries: docs/decisions/0013-delivery-to-jetstream.md."""

import asyncio
import logging
import time
from collections.abc import Awaitable, Iterable, Sequence
from uuid import UUID

import asyncpg
from nats.aio.msg import Msg as Message
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, StorageType, StreamConfig
from nats.js.errors import BadRequestError, NotFoundError
from opentelemetry.trace import SpanContext, SpanKind

from infra.jetstream.observed_backend import ObservedBackend
from infra.jetstream.outbox_relay import ensure_stream
from infra.postgres.stream_traces import newest_traces
from infra.settings import NatsSettings, SubmitterSettings
from infra.telemetry import tracing
from infra.telemetry.meters import SubmitterMetrics
from projections import workload_catalogue
from services import submitter
from services.ports.event_store import EventStore
from services.ports.workload_backends import WorkloadBackend
from services.workloads import load_workload

log = logging.getLogger(__name__)
FACTS = ("requested", "suspended", "resumed", "deleted")  # what asks something of a backend
DEAD_LETTER_STREAM = "TRAINPLATE_DEAD_LETTERS"


def filter_subjects(nats: NatsSettings) -> list[str]:
    return [f"{nats.subject_prefix}.workload.*.{fact}" for fact in FACTS]


def workload_of(subject: str) -> UUID | None:
    """`trainplate.workload.<id>.<fact>` -> the id."""
    parts = subject.split(".")
    try:
        return UUID(parts[-2])
    except (ValueError, IndexError):
        return None


async def ensure_consumer(
    js: JetStreamContext, nats: NatsSettings, settings: SubmitterSettings
) -> None:
    await ensure_stream(js, nats)
    dead = StreamConfig(
        name=DEAD_LETTER_STREAM,
        subjects=[settings.dead_letter_subject],
        storage=StorageType.FILE,
        num_replicas=nats.replicas,
    )
    try:
        await js.add_stream(dead)
    except BadRequestError:
        await js.update_stream(dead)
    config = ConsumerConfig(
        durable_name=settings.durable,
        ack_policy=AckPolicy.EXPLICIT,
        ack_wait=settings.ack_wait_s,
        max_deliver=settings.max_deliver,
        filter_subjects=filter_subjects(nats),
        max_ack_pending=1000,
    )
    try:
        await js.consumer_info(nats.stream, settings.durable)
    except NotFoundError:
        await js.add_consumer(nats.stream, config)


class Submitter:
    def __init__(
        self,
        js: JetStreamContext,
        store: EventStore,
        backend: WorkloadBackend,
        nats: NatsSettings,
        settings: SubmitterSettings,
        *,
        batches: EventStore,
        pool: asyncpg.Pool | None = None,
        metrics: SubmitterMetrics | None = None,
    ) -> None:
        # `batches` commits each append_each by itself: a message is acked after it returns.
        self._pool = pool
        self._js = js
        self._store = store
        self._batches = batches
        self._backend = ObservedBackend(backend, metrics)
        self._metrics = metrics
        self._nats = nats
        self._settings = settings

    async def run(self, stop: asyncio.Event) -> None:
        await ensure_consumer(self._js, self._nats, self._settings)
        subscription = await self._js.pull_subscribe_bind(
            durable=self._settings.durable, stream=self._nats.stream
        )
        next_sweep = time.monotonic()
        ahead: asyncio.Task[list[Message]] | None = None  # the next batch, fetched meanwhile
        try:
            while not stop.is_set():
                if ahead is None and self._pool is not None and time.monotonic() >= next_sweep:
                    await self.sweep()
                    next_sweep = time.monotonic() + self._settings.sweep_interval_s
                messages = await (ahead if ahead is not None else self._fetch(subscription))
                ahead = None
                if not messages:
                    continue
                if self._pool is None or time.monotonic() < next_sweep:  # (else: sweep first)
                    # The next batch is fetched while this one waits on the database: one batch
                    # is handled at a time (two under way measured as more CPU per workload,
                    # not more workloads per second).
                    ahead = asyncio.create_task(self._fetch(subscription))
                await self._handle(messages)
        finally:
            await self._give_back(ahead)
            await subscription.unsubscribe()

    async def _fetch(self, subscription: JetStreamContext.PullSubscription) -> list[Message]:
        try:
            return await subscription.fetch(self._settings.fetch_batch, timeout=1.0)
        except TimeoutError:  # nats-py raises its own and asyncio's: both are this
            return []

    async def _give_back(self, ahead: "asyncio.Task[list[Message]] | None") -> None:
        """Messages fetched ahead that will not be handled go back to the queue now, for
        another submitter, rather than after `ack_wait`."""
        if ahead is None:
            return
        (fetched,) = await asyncio.gather(ahead, return_exceptions=True)
        if not isinstance(fetched, list):
            return
        try:
            for message in fetched:
                await message.nak()
        except Exception as error:  # the broker is gone: they come back after ack_wait
            log.warning("%d fetched messages not given back: %s", len(fetched), error)

    async def sweep(self) -> int:
        """Reconcile what no message will (one dropped after its last delivery, a report that
        failed, a run lost with its submitter): every unsettled workload, and every run the
        backend took and has not finished. Idempotent. Returns how many were unsettled."""
        assert self._pool is not None
        async with self._pool.acquire() as conn:
            waiting = await workload_catalogue.unsettled(conn)
            held = await workload_catalogue.in_flight(conn, self._backend.name)
            todo = list(dict.fromkeys([*waiting, *held]))
            # No message says what asked: each workload's calls go on in its own stored trace.
            traces = await newest_traces(conn, todo)
        size = max(1, self._settings.fetch_batch)
        for start in range(0, len(todo), size):
            chunk = todo[start : start + size]
            asked_by = {i: tracing.parse(*traces[i]) for i in chunk if i in traces}
            self._backend.asked_by = asked_by
            try:
                with tracing.span(
                    "sweep workloads", parents=list(asked_by.values()),
                    attributes={"trainplate.workloads": len(chunk)},
                ):  # fmt: skip
                    failed = await self._reconcile(chunk, ask_backend=True)
            except Exception:
                log.exception("the sweep could not reconcile %d workloads", len(chunk))
                continue
            finally:
                self._backend.asked_by = {}
            for workload_id, error in failed.items():
                log.error("workload %s: the sweep could not reconcile it: %s", workload_id, error)
        return len(waiting)

    async def _handle(self, messages: Sequence[Message]) -> None:
        """Reconcile the batch's workloads together, then settle each message by its
        workload's fate: acked once the outcome is committed, else retried or dead-lettered."""
        by_workload: dict[UUID, list[Message]] = {}
        for message in messages:
            workload_id = workload_of(message.subject)
            if workload_id is None:
                await message.term()
            else:
                by_workload.setdefault(workload_id, []).append(message)
        if not by_workload:
            return
        asked_by = {i: _trace_of(batch[0]) for i, batch in by_workload.items()}
        self._backend.asked_by = asked_by
        attributes: tracing.Attributes = {
            "messaging.system": "nats",
            "messaging.batch.message_count": len(messages),
        }
        try:
            # One span for the batch: its outcomes are appended together (in its trace).
            with tracing.span(
                "process workloads", parents=list(asked_by.values()), kind=SpanKind.CONSUMER,
                attributes=attributes,
            ):  # fmt: skip
                failed = await self._reconcile(by_workload)
        except Exception as error:  # the store failed: nothing is known to be recorded
            failed = dict.fromkeys(by_workload, error)
        finally:
            self._backend.asked_by = {}
        retries: list[Awaitable[None]] = []
        for workload_id, batch in by_workload.items():
            why = failed.get(workload_id)
            for message in batch:
                if why is None:
                    await message.ack()  # a publish, no round trip: one after another is cheapest
                    self._settled("acked")
                else:
                    retries.append(self._retry(message, workload_id, why))
        await asyncio.gather(*retries)

    def _settled(self, outcome: str) -> None:
        if self._metrics is not None:
            self._metrics.messages.labels(outcome).inc()

    async def _reconcile(
        self, workload_ids: Iterable[UUID], *, ask_backend: bool = False
    ) -> dict[UUID, Exception]:
        return await submitter.reconcile_many(
            workload_ids,
            store=self._batches,
            backend=self._backend,
            cluster=self._settings.cluster_id,
            ask_backend=ask_backend,
        )

    async def _retry(self, message: Message, workload_id: UUID, error: Exception) -> None:
        """Ask for the message again after the backoff, or dead-letter its last delivery."""
        delivered = message.metadata.num_delivered
        if delivered >= self._settings.max_deliver:
            try:
                await self._dead_letter(message, workload_id, delivered, error)
                self._settled("dead_lettered")
                return
            except Exception:  # cannot even record the failure: keep the message
                log.exception("workload %s: dead-lettering failed", workload_id)
        self._settled("retried")
        delay = backoff_delay(self._settings.backoff, delivered)
        log.warning(
            "workload %s: attempt %d failed (%s); retrying in %.1fs",
            workload_id, delivered, error, delay,
        )  # fmt: skip
        await message.nak(delay=delay)

    async def _dead_letter(
        self, message: Message, workload_id: UUID, delivered: int, error: Exception
    ) -> None:
        reason = f"could not submit after {delivered} attempts: {error}"
        log.error("workload %s: %s", workload_id, reason)
        state_run = await _current_run(self._store, workload_id)
        await submitter.report(workload_id, state_run, "failed", reason, store=self._store)
        headers = {
            **(message.headers or {}),
            "trainplate-original-subject": message.subject,
            "trainplate-error": str(error)[:1000],
        }
        await self._js.publish(self._settings.dead_letter_subject, message.data, headers=headers)
        await message.term()


async def _current_run(store: EventStore, workload_id: UUID) -> int:
    state = load_workload((await store.load(workload_id)).events)
    return state.run if state is not None else 1


def _trace_of(message: Message) -> SpanContext | None:
    """The context the message carries: its hop's, else the event's (`ce-traceparent`)."""
    headers = message.headers or {}
    return tracing.parse(headers.get("traceparent"), headers.get("tracestate")) or tracing.parse(
        headers.get("ce-traceparent"), headers.get("ce-tracestate")
    )


def backoff_delay(backoff: Sequence[float], delivered: int) -> float:
    """The wait before delivery `delivered` + 1: the backoff's step for it, its last beyond."""
    if not backoff:
        return 1.0
    return backoff[min(delivered, len(backoff)) - 1]
