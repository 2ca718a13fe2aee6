"""Data volume use cases: editors of a project make them of its PVCs, share and delete them; names
are unique per cluster, and one a template mounts is neither deleted nor unshared under it. Also:
domain/data_volumes.py, projections/data_volume_catalogue.py, infra/http/data_volumes.py."""

from collections.abc import Callable, Iterable, Sequence
from uuid import UUID

from domain import access as grant_rules
from domain import data_volumes, name_rules, tenant_settings
from domain.assets import AssetNotFoundError, InvalidAssetError
from domain.commands import (
    CreateDataVolume,
    DeleteDataVolume,
    DescribeDataVolume,
    ShareDataVolume,
)
from domain.data_volumes import DataVolume, DataVolumeInUseError
from domain.events import DataVolumeUnshared, Event, EventMetadata
from domain.org_units import UnknownScopeError
from domain.specs import DataVolumeSpec, SharedScope
from domain.template_specs import TemplateAssets
from domain.tenant_settings import FeatureDisabledError
from domain.values import AssetMeta, Grant, ScopeRef
from services import access, idempotency, stamps, uses
from services.assets import placement
from services.errors import NotPermittedError
from services.kinds import fold_as, live_scope
from services.ports.event_store import (
    Append,
    EventStore,
    NameClaim,
    Stream,
    StreamLoader,
    Uses,
    Written,
)
from services.ports.name_lookups import NameHolder
from services.prefetch import actor_stream, prefetch, scope_stream
from services.races import decided_again
from services.stamps import Stamped
from services.tenant_settings import current as settings_of

KIND = "data-volume"  # the AssetKind of a data volume in a template's assets block
# How a refusal of a field is raised where the data volume is named (a template's).
Refusal = Callable[[str, str], Exception]


@decided_again
async def create_data_volume(cmd: CreateDataVolume, *, streams: EventStore) -> Stamped[DataVolume]:
    """Create the data volume; return it as written. Sent again under the same idempotency key,
    the first answer, with nothing written."""
    project = ScopeRef("project", cmd.project_id)

    async def decide(remembered: bool) -> idempotency.Decision:
        loader = await prefetch(
            streams,
            [actor_stream(cmd.metadata), scope_stream(project), tenant_settings.STREAM],
            remembered=remembered,
        )
        await _enabled(loader, "/")
        lineage = await access.require_in(
            cmd.metadata, project, "editor", "create data volumes", streams=loader,
            field="/projectId",
        )  # fmt: skip
        cluster_id, department_id, project_id = placement(lineage, None)
        meta = AssetMeta(
            name=cmd.name,
            description=cmd.description,
            scope="project",
            cluster_id=cluster_id,
            department_id=department_id,
            project_id=project_id,
        )
        spec = DataVolumeSpec(
            origin_pvc_name=cmd.origin_pvc_name, use_original_volume=cmd.use_original_volume
        )
        return idempotency.Decision(
            events=data_volumes.create(
                None,
                cmd.datavolume_id,
                meta,
                spec,
                should_delete_original_volume=cmd.should_delete_original_volume,
            ),
            name=_claim(meta),
            uses=Uses(user=f"datavolume {cmd.name}", used=uses.of_scope(project, "/projectId")),
            checked=loader.checked,
        )

    _, creation = await idempotency.create_decided(
        streams, cmd.datavolume_id, decide, request=cmd, keyed=cmd.keyed, metadata=cmd.metadata
    )
    state = data_volumes.fold(creation.events)
    assert state is not None
    return Stamped(state=state, stamps=creation.stamps)


@decided_again
async def describe_data_volume(
    cmd: DescribeDataVolume, *, streams: EventStore
) -> Stamped[DataVolume]:
    """A new description; none given: it stays."""
    stream, current = await _managed(cmd.datavolume_id, cmd.metadata, "update", streams)
    if cmd.description is None:
        return Stamped(state=current, stamps=stamps.loaded(stream))
    events = data_volumes.describe(current, cmd.datavolume_id, cmd.description)
    if not events:
        return Stamped(state=current, stamps=stamps.loaded(stream))
    return await _written(streams, stream, events, cmd.metadata)


@decided_again
async def share_data_volume(
    cmd: ShareDataVolume, *, streams: EventStore
) -> tuple[tuple[SharedScope, Written], ...]:
    """Share and unshare as asked, in scopes where the caller manages data volumes
    (`_require_sharer`); the scopes then shared with, each with when and by whom. Unsharing is
    refused while templates mount it (one may live there), decided in the append's transaction."""
    stream, current = await _managed(cmd.datavolume_id, cmd.metadata, "share", streams)
    grants = await access.grants_of(cmd.metadata, streams=streams)
    added = []
    for i, scope in enumerate(cmd.add):
        field = f"/add/{i}/scopeId"
        lineage = await access.lineage_of(
            data_volumes.scope_ref(scope), streams=streams, field=field
        )
        await _require_sharer(grants, lineage, cmd.metadata, streams, field=field)
        added.append((scope, lineage))
    for i, scope in enumerate(cmd.remove):
        field = f"/remove/{i}/scopeId"
        try:
            lineage = await access.lineage_of(
                data_volumes.scope_ref(scope), streams=streams, field=field
            )
        except UnknownScopeError:  # a unit since deleted: its share guards nothing
            continue
        await _require_sharer(grants, lineage, cmd.metadata, streams, field=field)
    events = data_volumes.share(current, cmd.datavolume_id, add=added, remove=cmd.remove)
    if not events:
        return _shared(stream)
    unsharing = any(isinstance(e, DataVolumeUnshared) for e in events)
    result = await streams.append(
        Append(
            cmd.datavolume_id,
            events,
            expected_version=stream.version,
            metadata=cmd.metadata,
            name=_claim(current.meta),
            unused=_in_use(cmd.datavolume_id, "unshared") if unsharing else None,
        )
    )
    now = stamps.appended(stream, result, cmd.metadata).updated
    after = Stream(
        version=result.version,
        events=(*stream.events, *events),
        written=(*stream.written, *(now,) * len(events)),
    )
    return _shared(after)


async def _require_sharer(
    grants: tuple[Grant, ...],
    lineage: tuple[ScopeRef, ...],
    actor: EventMetadata,
    streams: StreamLoader,
    *,
    field: str,
) -> None:
    """Run:ai's "share in the scope": only who manages data volumes there (an editor on the
    scope or above) shares with it or unshares from it; a scope out of sight is missing."""
    if actor.actor_kind == "system" or grant_rules.permits(grants, lineage, "editor"):
        return
    if not await access.sees(grants, lineage, streams=streams):
        raise UnknownScopeError(lineage[0].kind, lineage[0].id, field=field)
    raise NotPermittedError(f"share data volumes with that {lineage[0].kind}")


def _shared(stream: Stream) -> tuple[tuple[SharedScope, Written], ...]:
    """The scopes a data volume's stream leaves it shared with, each stamped as the event that
    shared it last, in the order the data volume lists them."""
    state = fold_as(data_volumes.fold, stream.events)
    assert state is not None
    since = data_volumes.shared_since(stream.events)
    return tuple(
        (scope, stream.written[index])
        for scope in state.spec.shared_scopes
        if (index := since.get(scope)) is not None and index < len(stream.written)
    )


async def require_visible(datavolume_id: UUID, actor: EventMetadata, streams: StreamLoader) -> None:
    """A data volume the actor may not see is missing (AssetNotFoundError), before a change's
    body is read."""
    await access.require_visible(
        datavolume_id,
        actor,
        streams=streams,
        scope_in=live_scope(data_volumes.fold, data_volumes.KIND),
        missing=AssetNotFoundError(data_volumes.KIND, datavolume_id),
    )


@decided_again
async def delete_data_volume(cmd: DeleteDataVolume, *, streams: EventStore) -> None:
    """Refused while a template mounts it (decided in the deletion's own transaction). Deleting
    it again is a no-op."""
    stream = await streams.load(cmd.datavolume_id)
    state = _fold(stream.events)
    if state is None:
        raise AssetNotFoundError(data_volumes.KIND, cmd.datavolume_id)
    await _require(state, cmd.metadata, "delete", streams)
    await uses.delete_unused(
        streams,
        cmd.datavolume_id,
        stream,
        data_volumes.delete(state, cmd.datavolume_id),
        metadata=cmd.metadata,
        user=f"datavolume {state.meta.name}",
        in_use=_in_use(cmd.datavolume_id, "deleted"),
    )


async def check_name_available(
    cluster_id: UUID, name: str, actor: EventMetadata, *, streams: StreamLoader, holder: NameHolder
) -> None:
    """NameTakenError (naming `/dataName`) when a data volume of the cluster holds `name`,
    InvalidAssetError when none could. A cluster the actor may not see is answered as one that
    does not exist."""
    name_rules.check(name, "/dataName", name_rules.DATA_VOLUME, refused=InvalidAssetError)
    await access.require_name_free(
        ScopeRef("cluster", str(cluster_id)),
        name_namespace(cluster_id),
        name,
        actor,
        streams=streams,
        holder=holder,
        fields=("/clusterId", "/dataName"),
    )


def mounted_in(sections: Iterable[tuple[str, TemplateAssets | None]]) -> list[tuple[str, UUID]]:
    """The data volumes these assets blocks (each with where it sits) mount, each with the
    field that names it."""
    return [
        (f"{at}/datasources/{i}/id", link.id)
        for at, links in sections
        if links is not None
        for i, link in enumerate(links.datasources or ())
        if link.kind == KIND
    ]


async def check_usable(
    mounted: Sequence[tuple[str, UUID]],
    lineage: tuple[ScopeRef, ...],
    *,
    streams: StreamLoader,
    refuse: Refusal,
) -> None:
    """Each data volume mounted must be live and usable in the scope (`lineage[0]`), from the
    write side's streams, and the tenant must allow data volumes; `refuse(field, reason)` is
    raised for the first that is not."""
    if not mounted:
        return
    await _enabled(streams, mounted[0][0])
    for field, datavolume_id in mounted:
        found = _fold((await streams.load(datavolume_id)).events)
        if not data_volumes.usable_in(found, lineage):
            raise refuse(field, "no such data volume usable in the template's scope")


async def _enabled(streams: StreamLoader, field: str) -> None:
    if not (await settings_of(streams)).get(tenant_settings.DATA_VOLUMES):
        raise FeatureDisabledError(tenant_settings.DATA_VOLUMES, field, "data volumes")


async def _managed(
    datavolume_id: UUID, metadata: EventMetadata, action: str, streams: EventStore
) -> tuple[Stream, DataVolume]:
    stream = await streams.load(datavolume_id)
    current = data_volumes.live(_fold(stream.events), datavolume_id)
    await _require(current, metadata, action, streams)
    return stream, current


async def _require(
    state: DataVolume, metadata: EventMetadata, action: str, streams: StreamLoader
) -> None:
    """Editors of its project (or above) manage a data volume; one out of sight is missing."""
    await access.require(
        metadata,
        state.meta.lineage,
        "editor",
        f"{action} data volumes",
        streams=streams,
        unseen=AssetNotFoundError(data_volumes.KIND, state.id),
    )


def _in_use(datavolume_id: UUID, doing: str) -> Callable[[Sequence[str]], Exception]:
    return lambda users: DataVolumeInUseError(datavolume_id, users, doing=doing)


def _fold(events: Iterable[Event]) -> DataVolume | None:
    return fold_as(data_volumes.fold, events)


def _claim(meta: AssetMeta) -> NameClaim:
    assert meta.cluster_id is not None  # a data volume's project is in a cluster
    return NameClaim(namespace=name_namespace(meta.cluster_id), name=meta.name, field="/name")


def name_namespace(cluster_id: UUID) -> str:
    """Where a cluster's data volume names are claimed (name-availability asks there)."""
    return f"{data_volumes.KIND}@cluster:{cluster_id}"


async def _written(
    streams: EventStore,
    stream: Stream,
    events: Sequence[Event],
    metadata: EventMetadata,
    *,
    uses: Uses | None = None,
) -> Stamped[DataVolume]:
    """Append a data volume's new events, its name claimed as they leave it."""
    state = data_volumes.fold((*stream.events, *events))
    assert state is not None
    result = await streams.append(
        Append(
            state.id,
            events,
            expected_version=stream.version,
            metadata=metadata,
            name=_claim(state.meta),
            uses=uses,
        )
    )
    return Stamped(state=state, stamps=stamps.appended(stream, result, metadata))
