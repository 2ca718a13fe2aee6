"""The write side's record of which streams use which: a use checked against an asset that was
deleted before the use's transaction, or while the use waited for the deletion, is refused there,
naming the field; and the migration that brought the record in filled it from the log."""

import asyncio
from uuid import UUID, uuid4

import asyncpg
import msgspec
import pytest

from domain import org_units
from domain.commands import CreateAsset, DeleteAsset
from domain.events import (
    AssetVersion,
    ClusterCreated,
    DataSourceCreated,
    DepartmentCreated,
    EnvironmentCreated,
    EnvironmentDeleted,
    EnvironmentUpdated,
    Event,
    EventMetadata,
    ProjectCreated,
    TemplateCreated,
    TemplateDeleted,
    TemplateUpdated,
)
from domain.specs import CredentialRef, EnvironmentSpec, EnvironmentVariable, S3Spec
from domain.template_specs import DistributedTemplateSpec
from domain.values import AssetMeta, ScopeRef, TemplateMeta
from infra.postgres.migrate import apply_migrations
from infra.postgres.names import name_lookups
from infra.postgres.stream_uses import hold_unused
from infra.postgres.streams import PostgresStreams
from infra.serialization import DOMAIN_CODEC
from services import assets
from services.errors import InvalidRequestError
from services.ports.event_store import Append, NameClaim, Uses
from tests.workload_samples import requested_workload

pytestmark = pytest.mark.integration

SYSTEM = EventMetadata(actor_subject="setup", actor_kind="system")
SPEC = msgspec.convert({"distributedFramework": "PyTorch"}, DistributedTemplateSpec)


async def test_a_use_of_an_asset_deleted_after_it_was_checked_is_refused_where_it_is_written(
    clean_pool: asyncpg.Pool,
) -> None:
    streams = PostgresStreams(clean_pool, DOMAIN_CODEC)
    create = CreateAsset(
        asset_id=uuid4(), scope=ScopeRef("tenant"), name="pt",
        spec=EnvironmentSpec(image="pt:2"), metadata=SYSTEM,
    )  # fmt: skip
    env = (
        await assets.create_asset(create, streams=streams, names=name_lookups(clean_pool))
    ).state.id
    # The template's checks ran while the environment was live; it is deleted before the write.
    await assets.delete_asset(
        DeleteAsset(asset_id=env, kind="environment", metadata=SYSTEM), streams=streams
    )
    template_id = uuid4()
    event = TemplateCreated(
        template_id=template_id,
        meta=TemplateMeta(name="llm", scope="tenant"),
        spec=SPEC,
        asset_versions=(AssetVersion(asset_id=env, version=1),),
    )
    with pytest.raises(InvalidRequestError) as refused:
        await streams.append(
            Append(
                template_id,
                [event],
                expected_version=0,
                metadata=SYSTEM,
                name=NameClaim(namespace="template@tenant:", name="llm"),
                uses=Uses(user="template llm", used=((env, "/assets/environment"),)),
            )
        )
    assert refused.value.field == "/assets/environment"
    written = "SELECT count(*) FROM events WHERE stream_id = $1"
    assert await clean_pool.fetchval(written, template_id) == 0
    assert await clean_pool.fetchval("SELECT count(*) FROM stream_uses") == 0
    assert await clean_pool.fetchval("SELECT count(*) FROM stream_names WHERE name = 'llm'") == 0


async def waiting_for_a_use_lock(pool: asyncpg.Pool) -> None:
    """Until a backend waits for an advisory lock (PostgreSQL says so); at most 10 s."""
    query = (
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'"
    )
    for _ in range(1000):
        if await pool.fetchval(query):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the use never waited for the deletion")


@pytest.mark.parametrize("write", ["create", "update"])
async def test_a_use_that_waited_for_the_deletion_of_what_it_uses_is_refused(
    clean_pool: asyncpg.Pool, write: str
) -> None:
    """The deletion holds its lock and has appended, uncommitted; the use (a create's one
    statement, or an update's transaction) waits for it, then must see it: what it checks
    after the lock is read on a snapshot taken after the deletion committed."""
    streams = PostgresStreams(clean_pool, DOMAIN_CODEC)
    create = CreateAsset(
        asset_id=uuid4(), scope=ScopeRef("tenant"), name="pt",
        spec=EnvironmentSpec(image="pt:2"), metadata=SYSTEM,
    )  # fmt: skip
    env = (
        await assets.create_asset(create, streams=streams, names=name_lookups(clean_pool))
    ).state.id
    template_id = uuid4()
    claim = NameClaim(namespace="template@tenant:", name="llm")
    meta = TemplateMeta(name="llm", scope="tenant")
    used = (AssetVersion(asset_id=env, version=1),)
    version = 0
    event: Event = TemplateCreated(
        template_id=template_id, meta=meta, spec=SPEC, asset_versions=used
    )
    if write == "update":
        first = TemplateCreated(template_id=template_id, meta=meta, spec=SPEC)
        await streams.append(
            Append(template_id, [first], expected_version=0, metadata=SYSTEM, name=claim)
        )
        version = 1
        event = TemplateUpdated(template_id=template_id, name="llm", spec=SPEC, asset_versions=used)
    async with clean_pool.acquire() as conn:
        deletion = conn.transaction()
        await deletion.start()
        await hold_unused(conn, env, lambda users: AssertionError(users))
        gone = EnvironmentDeleted(asset_id=env)
        await PostgresStreams(conn, DOMAIN_CODEC).append(
            Append(env, [gone], expected_version=1, metadata=SYSTEM)
        )
        use = asyncio.create_task(
            streams.append(
                Append(
                    template_id,
                    [event],
                    expected_version=version,
                    metadata=SYSTEM,
                    name=claim,
                    uses=Uses(user="template llm", used=((env, "/assets/environment"),)),
                )
            )
        )
        await waiting_for_a_use_lock(clean_pool)
        assert not use.done()
        await deletion.commit()
    with pytest.raises(InvalidRequestError) as refused:
        await use
    assert refused.value.field == "/assets/environment"
    written = "SELECT count(*) FROM events WHERE stream_id = $1"
    assert await clean_pool.fetchval(written, template_id) == version
    assert await clean_pool.fetchval("SELECT count(*) FROM stream_uses") == 0
    holders = "SELECT count(*) FROM stream_names WHERE name = 'llm'"
    assert await clean_pool.fetchval(holders) == (1 if write == "update" else 0)


async def test_the_migration_fills_the_record_from_the_log(postgres_url: str) -> None:
    database = "stream_uses_backfill"
    admin = await asyncpg.connect(postgres_url)
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {database}")
        await admin.execute(f"CREATE DATABASE {database}")
        url = postgres_url.rsplit("/", 1)[0] + f"/{database}"
        pool = await asyncpg.create_pool(url, min_size=1, max_size=2)
        assert pool is not None
        try:
            async with pool.acquire() as conn:
                await apply_migrations(conn)
            expected = await _history_without_record(PostgresStreams(pool, DOMAIN_CODEC))
            async with pool.acquire() as conn:  # as before migration 18
                await conn.execute("DROP TABLE stream_uses")
                await conn.execute("DELETE FROM schema_migrations WHERE version = 18")
                assert await apply_migrations(conn) == [18]
                rows = await conn.fetch("SELECT used_id, user_id, user_name FROM stream_uses")
            assert {(r["used_id"], r["user_id"], r["user_name"]) for r in rows} == expected
        finally:
            await pool.close()
    finally:
        await admin.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        await admin.close()


async def _history_without_record(
    store: PostgresStreams,
) -> set[tuple[UUID, UUID, str]]:
    """Events written straight to the store, as before the record existed; the uses they make."""
    e1, e2, e3, e4, c1, c2, c3 = (uuid4() for _ in range(7))
    live, gone, renamed, env, s3, dropped = (uuid4() for _ in range(6))

    async def append(stream_id: UUID, event: Event, *, at: int = 0) -> None:
        await store.append(Append(stream_id, [event], expected_version=at, metadata=SYSTEM))

    def created(template_id: UUID, *used: UUID) -> TemplateCreated:
        versions = tuple(AssetVersion(asset_id=a, version=1) for a in used)
        meta = TemplateMeta(name="alpha", scope="tenant")
        return TemplateCreated(
            template_id=template_id, meta=meta, spec=SPEC, asset_versions=versions
        )

    def environment(asset_id: UUID, name: str, credential: UUID) -> EnvironmentCreated:
        reads = EnvironmentVariable(
            name="T", credential=CredentialRef(asset_id=credential, key="k")
        )
        spec = EnvironmentSpec(image="pt", environment_variables=(reads,))
        meta = AssetMeta(name=name, scope="tenant")
        return EnvironmentCreated(asset_id=asset_id, meta=meta, spec=spec)

    await append(live, created(live, e1, e2))
    await append(gone, created(gone, e1))
    await append(gone, TemplateDeleted(template_id=gone), at=1)
    await append(renamed, created(renamed, e3))
    versions = (AssetVersion(asset_id=e4, version=1),)
    renaming = TemplateUpdated(template_id=renamed, name="beta", spec=SPEC, asset_versions=versions)
    await append(renamed, renaming, at=1)
    await append(env, environment(env, "pt", c1))
    bucket = S3Spec(bucket="b", access_key_asset_id=c2)
    meta = AssetMeta(name="bucket", scope="tenant")
    await append(s3, DataSourceCreated(asset_id=s3, meta=meta, spec=bucket))
    await append(dropped, environment(dropped, "old", c3))
    await append(dropped, EnvironmentDeleted(asset_id=dropped), at=1)
    # The org tree, and things living in it.
    cluster = uuid4()
    department = org_units.stream_of(ScopeRef("department", "2"))
    near = org_units.stream_of(ScopeRef("project", "3"))
    far = org_units.stream_of(ScopeRef("project", "4"))
    await append(cluster, ClusterCreated(cluster_id=cluster, name="east"))
    await append(department, DepartmentCreated(department_id="2", cluster_id=cluster, name="ml"))
    await append(
        near, ProjectCreated(project_id="3", cluster_id=cluster, department_id="2", name="llm")
    )
    await append(far, ProjectCreated(project_id="4", cluster_id=cluster, name="cv"))
    placed, job, shared = uuid4(), uuid4(), uuid4()
    in_project = TemplateMeta(name="sft", scope="project", cluster_id=cluster, department_id="2",
                              project_id=3)  # fmt: skip
    await append(placed, TemplateCreated(template_id=placed, meta=in_project, spec=SPEC))
    submitted = msgspec.structs.replace(
        requested_workload({"distributedFramework": "PyTorch"}, name="w1", workload_id=job),
        project_id="4",
    )
    await append(job, submitted)
    in_department = AssetMeta(name="base", scope="department", cluster_id=cluster,
                              department_id="2")  # fmt: skip
    await append(
        shared,
        EnvironmentCreated(asset_id=shared, meta=in_department, spec=EnvironmentSpec(image="pt")),
    )
    return {
        (cluster, department, "department ml"),
        (department, near, "project llm"),
        (cluster, far, "project cv"),
        (near, placed, "template sft"),
        (far, job, "workload w1"),
        (department, shared, "environment base"),
        (e1, live, "template alpha"),
        (e2, live, "template alpha"),
        (e4, renamed, "template beta"),
        (c1, env, "environment pt"),
        (c2, s3, "s3 bucket"),
    }


async def test_whether_a_used_stream_was_deleted_is_asked_of_the_deletions_not_its_history(
    clean_pool: asyncpg.Pool,
) -> None:
    """A use reads the used stream's deletion through the index of deletions (migration 0038),
    however long the stream's history: an environment edited many times costs a template that
    links it no more than a new one."""
    streams = PostgresStreams(clean_pool, DOMAIN_CODEC)
    env = uuid4()
    created = EnvironmentCreated(
        asset_id=env, meta=AssetMeta(name="pt", scope="tenant"), spec=EnvironmentSpec(image="pt:1")
    )
    await streams.append(Append(env, [created], expected_version=0, metadata=SYSTEM))
    edits = [
        EnvironmentUpdated(asset_id=env, name="pt", spec=EnvironmentSpec(image=f"pt:{n}"))
        for n in range(2, 502)
    ]
    await streams.append(Append(env, edits, expected_version=1, metadata=SYSTEM))
    async with clean_pool.acquire() as conn:
        await conn.execute("ANALYZE events")
        async with conn.transaction():  # the counts of index scans are the transaction's own
            await conn.fetchval("SELECT trainplate_hold_uses($1, 'template t', $2)", uuid4(), [env])
            scans = "SELECT pg_stat_get_xact_numscans('events_deletions'::regclass)"
            assert await conn.fetchval(scans) > 0
