"""One trace from a request to everything it caused: the update of an environment (continuing
the caller's `traceparent`), its event, the NATS message, the fan-out's write to a template that
links the environment and that template's projection; a workload's request to its backend, and a
local run's reports."""

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from uuid import UUID, uuid4

import asyncpg
import msgspec
import pytest
from litestar import Litestar
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from domain.events import EventMetadata
from infra.backends.dry_run import DryRunBackend
from infra.backends.local import LocalBackend
from infra.bootstrap import Resources, connect_nats
from infra.cli.embedded import EmbeddedNats
from infra.followers import global_log
from infra.followers.fanout_runner import FanoutRunner
from infra.followers.projection_runner import ProjectionRunner
from infra.jetstream.outbox_relay import Relay
from infra.jetstream.work_queue import Submitter
from infra.postgres.connections import Connection
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from infra.server.app import create_app
from infra.settings import (
    NatsSettings,
    ProjectorSettings,
    RelaySettings,
    Settings,
    SubmitterSettings,
)
from infra.telemetry import tracing
from infra.workers.submitter import pods_to, reports_to
from projections import ALL
from services.ports.event_store import Append
from tests.api.support import AUTH, CREDENTIALS, call, project_all, run_to_the_end
from tests.conftest import ACTOR
from tests.integration.test_local_faults import until_phase
from tests.jetstream import read_stream
from tests.workload_samples import requested_workload

pytestmark = [pytest.mark.api, pytest.mark.integration]

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
INCOMING = f"00-{TRACE}-00f067aa0ba902b7-01"  # a caller's span, as W3C Trace Context sends it
ENVIRONMENTS = "/api/v1/asset/environment"
TEMPLATES = "/api/v1/workload-templates/distributed"


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use(provider)
    try:
        yield exporter
    finally:
        tracing.use(None)
        provider.shutdown()


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[EmbeddedNats]:
    """A private nats-server: its stream holds this test's messages alone."""
    server = EmbeddedNats(tmp_path / "nats")
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def app(clean_pool: asyncpg.Pool, broker: EmbeddedNats) -> AsyncIterator[Litestar]:
    nc = await connect_nats(NatsSettings(url=broker.url), name="trace-tests")
    try:
        settings = Settings(auth=AUTH, credentials=CREDENTIALS, consistency_wait_s=0.1)
        yield create_app(settings, resources=Resources(clean_pool, nc, nc.jetstream()))
    finally:
        await nc.close()


def trace_of(traceparent: str | None) -> str | None:
    found = tracing.parse(traceparent)
    return None if found is None else f"{found.trace_id:032x}"


def traced(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


async def metadata_of(pool: asyncpg.Pool, stream_id: str | UUID, type_: str) -> EventMetadata:
    row = await pool.fetchrow(
        "SELECT metadata::text FROM events WHERE stream_id = $1 AND type = $2"
        " ORDER BY version DESC LIMIT 1",
        UUID(str(stream_id)),
        type_,
    )
    assert row is not None, f"no {type_} on {stream_id}"
    return msgspec.json.decode(row[0], type=EventMetadata)


async def test_an_environment_update_and_all_it_causes_share_the_callers_trace(
    app: Litestar,
    admin: str,
    clean_pool: asyncpg.Pool,
    broker: EmbeddedNats,
    spans: InMemorySpanExporter,
) -> None:
    body = {"meta": {"name": "pt", "scope": "tenant"}, "spec": {"image": "pt:2"}}
    environment_id = (await call(app, "POST", ENVIRONMENTS, admin, json=body)).json()["meta"]["id"]
    template = {
        "meta": {"name": "ddp", "scopeType": "tenant"},
        "spec": {"distributedFramework": "PyTorch", "numWorkers": 2},
        "assets": {"environment": environment_id},
    }
    made = await call(app, "POST", TEMPLATES, admin, json=template)
    template_id = made.json()["meta"]["id"]
    await project_all(clean_pool)
    nats = NatsSettings(url=broker.url)
    nc = await connect_nats(nats, name="trace-relay")
    relay = Relay(clean_pool, nc, nats, RelaySettings(name="traces"))
    async with clean_pool.acquire() as conn:
        await relay.step(conn, (await relay_cursor(conn)))  # what came before, out of the way
    spans.clear()

    changed = {"meta": {"name": "pt"}, "spec": {"image": "pt:3"}}
    path = f"{ENVIRONMENTS}/{environment_id}"
    updated = await call(app, "PUT", path, admin, json=changed, headers={"traceparent": INCOMING})
    assert updated.status_code == 202, updated.text

    # the request's span continues the caller's, and its event records the request's span
    (server,) = traced(spans, f"PUT {ENVIRONMENTS}/{{asset_id}}")
    assert f"{server.context.trace_id:032x}" == TRACE
    assert server.parent is not None
    assert f"{server.parent.span_id:016x}" == INCOMING[36:52]
    event = await metadata_of(clean_pool, environment_id, "environment.updated.v1")
    assert event.traceparent == tracing.traceparent_of(server.context)
    assert event.request_id == updated.headers["x-request-id"]

    # on NATS: the extension names the request's span, the hop the relay's publish
    async with clean_pool.acquire() as conn:
        await relay.step(conn, await relay_cursor(conn))
    held = await read_stream(nc.jetstream(), "TRAINPLATE", "trainplate.>")
    (message,) = [h for h in held if h.subject.endswith(f"{environment_id}.updated")]
    assert message.headers["ce-traceparent"] == event.traceparent
    assert trace_of(message.headers["traceparent"]) == TRACE
    (sent,) = traced(spans, "send TRAINPLATE")
    assert message.headers["traceparent"] == tracing.traceparent_of(sent.context)
    await nc.close()

    # the fan-out moves the linking template on, in the same trace
    settings = ProjectorSettings()
    await run_to_the_end(clean_pool, [FanoutRunner(clean_pool, DOMAIN_CODEC, settings)])
    (fanned,) = traced(spans, "fan out")
    assert f"{fanned.context.trace_id:032x}" == TRACE
    assert fanned.attributes is not None
    assert fanned.attributes["trainplate.templates"] == 1
    moved = await metadata_of(clean_pool, template_id, "template.linked_asset_updated.v1")
    assert moved.traceparent == tracing.traceparent_of(fanned.context)

    # and the template's read model applies it in that trace too
    (catalogue,) = [p for p in ALL if p.name == "template_catalogue"]
    runner = ProjectionRunner(clean_pool, catalogue, DOMAIN_CODEC, settings)
    await run_to_the_end(clean_pool, [runner])
    (applied,) = traced(spans, "apply template_catalogue")
    assert f"{applied.context.trace_id:032x}" == TRACE
    assert every_span_in(spans, TRACE)


async def relay_cursor(conn: Connection) -> global_log.Cursor:
    return await global_log.load_checkpoint(conn, "relay:traces")


async def submitted_outcome(pool: asyncpg.Pool) -> None:
    """Until the submitter has recorded a submission."""
    while True:
        if await pool.fetchval("SELECT 1 FROM events WHERE type = 'workload.submitted.v1'"):
            return
        await asyncio.sleep(0.05)


def every_span_in(exporter: InMemorySpanExporter, trace_id: str) -> bool:
    return all(f"{s.context.trace_id:032x}" == trace_id for s in exporter.get_finished_spans())


async def test_a_workloads_backend_call_continues_the_trace_that_requested_it(
    clean_pool: asyncpg.Pool, broker: EmbeddedNats, spans: InMemorySpanExporter
) -> None:
    store = PostgresStreams(clean_pool, DOMAIN_CODEC)
    event = requested_workload({"distributedFramework": "PyTorch", "numWorkers": 1, "image": "x"})
    with tracing.span("request a workload") as requesting:
        assert requesting is not None
        await store.append(Append(event.workload_id, [event], expected_version=0, metadata=ACTOR))
    trace_id = f"{requesting.get_span_context().trace_id:032x}"
    nats = NatsSettings(url=broker.url)
    nc = await connect_nats(nats, name="trace-submitter")
    stop = asyncio.Event()
    relay = Relay(clean_pool, nc, nats, RelaySettings(name=f"relay-{uuid4()}"))
    worker = Submitter(
        nc.jetstream(),
        store,
        DryRunBackend(),
        nats,
        SubmitterSettings(backend="dry-run"),
        batches=store,
    )
    tasks = [asyncio.create_task(relay.run(stop)), asyncio.create_task(worker.run(stop))]
    try:
        async with asyncio.timeout(60):
            await submitted_outcome(clean_pool)
    finally:
        stop.set()
        await asyncio.gather(*tasks)
        await nc.close()
    (submitted,) = traced(spans, "backend submit")
    assert f"{submitted.context.trace_id:032x}" == trace_id
    outcome = await metadata_of(clean_pool, event.workload_id, "workload.submitted.v1")
    assert trace_of(outcome.traceparent) == trace_id


async def test_with_no_tracer_a_callers_traceparent_still_reaches_the_event_and_nats(
    app: Litestar, admin: str, clean_pool: asyncpg.Pool, broker: EmbeddedNats
) -> None:
    assert not tracing.recording()
    body = {"meta": {"name": "pt", "scope": "tenant"}, "spec": {"image": "pt:2"}}
    untraced = await call(app, "POST", ENVIRONMENTS, admin, json=body)
    environment_id = untraced.json()["meta"]["id"]
    created = await metadata_of(clean_pool, environment_id, "environment.created.v1")
    assert created.traceparent is None
    changed = {"meta": {"name": "pt"}, "spec": {"image": "pt:3"}}
    path = f"{ENVIRONMENTS}/{environment_id}"
    headers = {"traceparent": INCOMING, "tracestate": "congo=t61rcWkgMzE", "x-request-id": "r-1"}
    updated = await call(app, "PUT", path, admin, json=changed, headers=headers)
    assert updated.headers["x-request-id"] == "r-1"
    event = await metadata_of(clean_pool, environment_id, "environment.updated.v1")
    assert (event.traceparent, event.tracestate, event.request_id) == (
        INCOMING,
        "congo=t61rcWkgMzE",
        "r-1",
    )
    nats = NatsSettings(url=broker.url)
    nc = await connect_nats(nats, name="trace-relay")
    relay = Relay(clean_pool, nc, nats, RelaySettings(name="traces"))
    async with clean_pool.acquire() as conn:
        await relay.step(conn, await relay_cursor(conn))
    held = {h.subject: h.headers for h in await read_stream(nc.jetstream(), "TRAINPLATE", ">")}
    await nc.close()
    assert "traceparent" not in held[f"trainplate.environment.{environment_id}.created"]
    sent = held[f"trainplate.environment.{environment_id}.updated"]
    assert sent["ce-traceparent"] == sent["traceparent"] == INCOMING
    assert sent["ce-tracestate"] == sent["tracestate"] == "congo=t61rcWkgMzE"


async def request_local(pool: asyncpg.Pool, metadata: EventMetadata = ACTOR) -> UUID:
    store = PostgresStreams(pool, DOMAIN_CODEC)
    spec = {"distributedFramework": "PyTorch", "numWorkers": 1, "command": "sh -c 'exit 0'"}
    event = requested_workload(spec, name="local")
    await store.append(Append(event.workload_id, [event], expected_version=0, metadata=metadata))
    return event.workload_id


async def swept(
    pool: asyncpg.Pool, broker: EmbeddedNats, work_dir: Path, workload_id: UUID
) -> None:
    """A submitter started after the request, with the local backend: no message asks for the
    workload (no relay runs), its start-up sweep submits it. Until the workload completes."""
    await project_all(pool)  # what the sweep reads
    store = PostgresStreams(pool, DOMAIN_CODEC)
    nats = NatsSettings(url=broker.url)
    nc = await connect_nats(nats, name="trace-submitter")
    backend = LocalBackend(work_dir, reports_to(store), stop_grace_s=5, pods=pods_to(store))
    settings = SubmitterSettings()
    worker = Submitter(nc.jetstream(), store, backend, nats, settings, batches=store, pool=pool)
    stop = asyncio.Event()
    working = asyncio.create_task(worker.run(stop))
    try:
        await until_phase(store, workload_id, {"Completed"}, within_s=60)
    finally:
        stop.set()
        await working
        await backend.close()
        await nc.close()


async def traceparents(pool: asyncpg.Pool, workload_id: UUID) -> dict[str, set[str | None]]:
    """By event type, the traceparents of the workload's events."""
    found: dict[str, set[str | None]] = {}
    rows = await pool.fetch(
        "SELECT type, metadata::text FROM events WHERE stream_id = $1", workload_id
    )
    for row in rows:
        metadata = msgspec.json.decode(row["metadata"], type=EventMetadata)
        found.setdefault(row["type"], set()).add(metadata.traceparent)
    return found


async def test_a_local_runs_reports_continue_the_trace_of_its_request(
    clean_pool: asyncpg.Pool,
    broker: EmbeddedNats,
    spans: InMemorySpanExporter,
    replica_work_dir: Path,
) -> None:
    with tracing.span("request a workload") as requesting:
        assert requesting is not None
        workload_id = await request_local(clean_pool)
    trace_id = f"{requesting.get_span_context().trace_id:032x}"
    await swept(clean_pool, broker, replica_work_dir, workload_id)

    (submitted,) = traced(spans, "backend submit")
    assert f"{submitted.context.trace_id:032x}" == trace_id
    stored = await traceparents(clean_pool, workload_id)
    assert {"workload.running.v1", "workload.succeeded.v1", "workload.pods_changed.v1"} <= set(
        stored
    )
    for type_, found in stored.items():
        assert {trace_of(traceparent) for traceparent in found} == {trace_id}, type_
    # each report in a span of its own, under the submission
    for outcome in ("running", "succeeded"):
        (reported,) = traced(spans, f"local report {outcome}")
        assert reported.parent is not None
        assert reported.parent.span_id == submitted.context.span_id
        assert stored[f"workload.{outcome}.v1"] == {tracing.traceparent_of(reported.context)}
    assert all(s.parent is not None for s in traced(spans, "local report pods"))


async def test_with_no_tracer_a_local_runs_reports_carry_its_requests_traceparent(
    clean_pool: asyncpg.Pool, broker: EmbeddedNats, replica_work_dir: Path
) -> None:
    assert not tracing.recording()
    metadata = msgspec.structs.replace(ACTOR, traceparent=INCOMING)
    workload_id = await request_local(clean_pool, metadata)
    await swept(clean_pool, broker, replica_work_dir, workload_id)
    stored = await traceparents(clean_pool, workload_id)
    assert "workload.running.v1" in stored
    assert set(stored) > {"workload.requested.v1"}
    assert all(found == {INCOMING} for found in stored.values()), stored
