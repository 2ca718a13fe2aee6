"""The audit read models (projections/audit_index.py, audit_log.py) made from a history in one
batch, in batches of a few events, and event by event, are the same rows; a batch applied twice
changes nothing; each entry names things as they were at its event."""

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID, uuid4

import asyncpg
import pytest

from domain.events import (
    ApplicationCreated,
    ApplicationSecretRotated,
    ClusterCreated,
    ClusterRenamed,
    EnvironmentCreated,
    EnvironmentDeleted,
    EnvironmentUpdated,
    Event,
    EventMetadata,
    PolicyApplied,
    ProjectCreated,
    RecordedEvent,
    StorageClassRemoved,
    TemplateCreated,
    TemplateDeleted,
    TemplateLinkedAssetUpdated,
    TemplateUpdated,
    TenantSettingChanged,
    WorkloadRequested,
    WorkloadSnapshot,
    WorkloadSubmitted,
)
from domain.specs import EnvironmentSpec
from domain.template_specs import DistributedTemplateSpec
from domain.values import AssetMeta, TemplateMeta
from infra.followers.projection_runner import Pipelined
from projections import audit_index, audit_log

pytestmark = pytest.mark.integration

EAST, WEST = UUID(int=1), UUID(int=2)
APP, STRANGER = uuid4(), uuid4()
T1, T2, ENV, WORKLOAD, POLICY = uuid4(), uuid4(), uuid4(), uuid4(), uuid4()
ADMIN = EventMetadata(
    actor_subject="admin@example.com", actor_kind="user", http_method="POST",
    http_path="/api/v1/clusters", http_status=201, request_id="r-1",
)  # fmt: skip
SYSTEM = EventMetadata(actor_subject="submitter", actor_kind="system")
BY_APP = EventMetadata(
    actor_subject=str(APP), actor_kind="application", http_method="PUT", http_status=200
)
BY_STRANGER = EventMetadata(actor_subject=str(STRANGER), actor_kind="application")
SPEC = DistributedTemplateSpec()
AT_EAST = TemplateMeta(name="a é中😀", scope="project", project_id=7, cluster_id=EAST)
ON_WEST = AssetMeta(name="env", scope="cluster", cluster_id=WEST)

# (stream type, stream id, event, who): the streams' versions follow from their order.
HISTORY: list[tuple[str, UUID, Event, EventMetadata]] = [
    ("cluster", EAST, ClusterCreated(cluster_id=EAST, name="east"), ADMIN),
    ("cluster", WEST, ClusterCreated(cluster_id=WEST, name="west"), SYSTEM),
    ("project", UUID(int=7), ProjectCreated(project_id="7", cluster_id=EAST, name="llm"), ADMIN),
    (
        "application",
        APP,
        ApplicationCreated(application_id=APP, name="ci", client_id="ci-client", grants=()),
        ADMIN,
    ),
    ("template", T1, TemplateCreated(template_id=T1, meta=AT_EAST, spec=SPEC), BY_APP),
    ("cluster", EAST, ClusterRenamed(cluster_id=EAST, name="east-2"), ADMIN),
    ("template", T1, TemplateUpdated(template_id=T1, name="b", spec=SPEC), BY_APP),
    (
        "environment",
        ENV,
        EnvironmentCreated(asset_id=ENV, meta=ON_WEST, spec=EnvironmentSpec()),
        ADMIN,
    ),
    (
        "template",
        T2,
        TemplateCreated(template_id=T2, meta=TemplateMeta(name="c", scope="tenant"), spec=SPEC),
        ADMIN,
    ),
    (
        "template",
        T1,
        TemplateLinkedAssetUpdated(template_id=T1, asset_id=ENV, asset_version=1),
        SYSTEM,
    ),
    (
        "environment",
        ENV,
        EnvironmentUpdated(asset_id=ENV, name="env-2", spec=EnvironmentSpec()),
        BY_APP,
    ),
    (
        "workload",
        WORKLOAD,
        WorkloadRequested(
            workload_id=WORKLOAD,
            name="train",
            requested_name="train",
            cluster_id=EAST,
            project_id="7",
            project_name="llm",
            namespace="runai-llm",
            job_name="train-1",
            snapshot=WorkloadSnapshot(template_id=T1, template_version=3, spec=SPEC),
        ),
        BY_APP,
    ),
    (
        "workload",
        WORKLOAD,
        WorkloadSubmitted(workload_id=WORKLOAD, run=1, backend="dry-run"),
        SYSTEM,
    ),
    (
        "policy",
        POLICY,
        PolicyApplied(
            policy_id=POLICY,
            name="p",
            workload_type="distributed",
            scope="project",
            scope_id="7",
            cluster_id=EAST,
        ),
        ADMIN,
    ),
    (
        "policy",
        POLICY,
        PolicyApplied(
            policy_id=POLICY,
            name="p2",
            workload_type="distributed",
            scope="cluster",
            scope_id=str(EAST),
        ),
        ADMIN,
    ),
    ("template", T2, TemplateDeleted(template_id=T2), BY_APP),
    ("cluster", WEST, ClusterRenamed(cluster_id=WEST, name="west-2"), SYSTEM),
    ("template", T1, TemplateUpdated(template_id=T1, name="b2", spec=SPEC), BY_STRANGER),
    ("application", APP, ApplicationSecretRotated(application_id=APP), BY_APP),
    ("environment", ENV, EnvironmentDeleted(asset_id=ENV), BY_APP),
    ("tenant", UUID(int=0), TenantSettingChanged(key="x", value=True), ADMIN),
    ("storageclass", uuid4(), StorageClassRemoved(cluster_id=WEST, name="fast"), SYSTEM),
    ("template", T1, TemplateDeleted(template_id=T1), ADMIN),
]


def recorded_history() -> list[RecordedEvent]:
    versions: dict[UUID, int] = {}
    made = []
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for index, (kind, stream_id, event, meta) in enumerate(HISTORY):
        versions[stream_id] = versions.get(stream_id, 0) + 1
        made.append(
            RecordedEvent(
                # Two events committed out of their positions' order, as concurrent appends are.
                position={5: 7, 7: 5}.get(index + 1, index + 1),
                event_id=uuid4(),
                stream_type=kind,
                stream_id=stream_id,
                version=versions[stream_id],
                metadata=meta,
                event=event,
                recorded_at=start + timedelta(seconds=index, microseconds=7 * index),
            )
        )
    return made


CONTENTS = {
    "audit_index": "SELECT global_position, event_id, stream_type, stream_id, version, type,"
    " actor, scope_kind, scope_id, recorded_at FROM audit_index ORDER BY seq",
    "audit_streams": "SELECT * FROM audit_streams ORDER BY stream_id",
    "audit_log": "SELECT * FROM audit_log ORDER BY logged_at",
    "audit_log_names": "SELECT * FROM audit_log_names ORDER BY kind, id",
}


async def contents(pool: asyncpg.Pool) -> dict[str, list[tuple[Any, ...]]]:
    return {table: [tuple(r) for r in await pool.fetch(q)] for table, q in CONTENTS.items()}


async def applied(pool: asyncpg.Pool, events: list[RecordedEvent], size: int) -> None:
    """The events in batches of `size` (1: event by event, through `apply`), as the runner
    applies them: each batch in its transaction, through its pipelining connection."""
    async with pool.acquire() as conn:
        for start in range(0, len(events), size):
            batch = events[start : start + size]
            async with conn.transaction():
                target = Pipelined(conn)
                if size == 1:
                    await audit_index.apply(target, batch[0])
                    await audit_log.apply(target, batch[0])
                else:
                    await audit_index.apply_batch(target, batch)
                    await audit_log.apply_batch(target, batch)
                await target.flush()


async def emptied(pool: asyncpg.Pool) -> None:
    await pool.execute(f"TRUNCATE {', '.join(CONTENTS)}")


async def test_batches_of_any_size_make_the_rows_event_by_event_makes(
    clean_pool: asyncpg.Pool,
) -> None:
    events = recorded_history()
    await applied(clean_pool, events, 1)
    one_by_one = await contents(clean_pool)
    assert [len(rows) for rows in one_by_one.values()] == [len(HISTORY), 8, len(HISTORY), 11]
    for size in (2, 3, 5, len(events)):
        await emptied(clean_pool)
        await applied(clean_pool, events, size)
        assert await contents(clean_pool) == one_by_one, f"batches of {size}"


async def test_a_batch_applied_twice_changes_nothing(clean_pool: asyncpg.Pool) -> None:
    events = recorded_history()
    await applied(clean_pool, events, len(events))
    once = await contents(clean_pool)
    seqs = await clean_pool.fetch("SELECT seq, global_position FROM audit_index ORDER BY seq")
    await applied(clean_pool, events, len(events))
    await applied(clean_pool, events[9:], 5)  # its end again, as after a lost commit
    assert await contents(clean_pool) == once
    assert (
        await clean_pool.fetch("SELECT seq, global_position FROM audit_index ORDER BY seq") == seqs
    )


async def test_each_entry_names_things_as_they_were_at_its_event(clean_pool: asyncpg.Pool) -> None:
    events = recorded_history()
    await applied(clean_pool, events, len(events))
    rows = await clean_pool.fetch(
        "SELECT entity_name, cluster_name, subject, subject_type, metadata::jsonb ? 'subjectId'"
        " AS by_client FROM audit_log WHERE entity_id = $1 ORDER BY logged_at",
        str(T1),
    )
    assert [tuple(r) for r in rows] == [
        ("a é中😀", "east", "ci-client", "App", True),
        ("b", "east-2", "ci-client", "App", True),
        ("b", "east-2", "submitter", "App", False),
        ("b2", "east-2", str(STRANGER), "App", False),  # an application of no known client id
        ("b2", "east-2", "admin@example.com", "User", False),
    ]
    env = await clean_pool.fetch(
        "SELECT entity_name, cluster_name FROM audit_log WHERE entity_id = $1 ORDER BY logged_at",
        str(ENV),
    )
    assert [tuple(r) for r in env] == [("env", "west"), ("env-2", "west"), ("env-2", "west-2")]
    scopes = await clean_pool.fetch(
        "SELECT scope_kind, scope_id FROM audit_index WHERE stream_id = $1 ORDER BY seq", POLICY
    )
    assert [tuple(r) for r in scopes] == [("project", "7"), ("cluster", str(EAST))]
