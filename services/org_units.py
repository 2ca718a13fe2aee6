"""Org unit use cases: clusters, departments and projects, managed by the parent scope's admins;
names are unique per namespace (domain/org_units.py). Also: projections/org_units.py,
infra/http/org_units.py."""

from typing import Literal, NamedTuple
from uuid import UUID

from domain import org_units
from domain.commands import (
    CreateCluster,
    CreateDepartment,
    CreateProject,
    DeleteOrgUnit,
    RenameCluster,
    UpdateOrgUnit,
)
from domain.events import EventMetadata
from domain.values import TENANT, ScopeKind, ScopeRef
from services import access, idempotency, stamps, uses
from services.kinds import fold_as
from services.ports.event_store import (
    Append,
    AppendResult,
    EventStore,
    NameClaim,
    StreamLoader,
    Uses,
)
from services.ports.name_lookups import IdSequence
from services.prefetch import actor_stream, prefetch
from services.races import decided_again
from services.stamps import Stamped, Stamps


@decided_again
async def create_cluster(cmd: CreateCluster, *, streams: EventStore) -> Stamps:
    """Create the cluster; when and by whom it was. Sent again under the same idempotency key,
    the first cluster's, with nothing written."""

    async def decide(remembered: bool) -> idempotency.Decision:
        loader = await prefetch(streams, [actor_stream(cmd.metadata)], remembered=remembered)
        await access.require(cmd.metadata, (TENANT,), "admin", "create clusters", streams=loader)
        events = org_units.create_cluster(
            None, cmd.cluster_id, name=cmd.name, domain=cmd.domain, version=cmd.version
        )
        return idempotency.Decision(
            events=events,
            name=_claim("cluster", None, cmd.name),
            uses=None,
            checked=loader.checked,
        )

    _, creation = await idempotency.create_decided(
        streams, cmd.cluster_id, decide, request=cmd, keyed=cmd.keyed, metadata=cmd.metadata
    )
    return creation.stamps


@decided_again
async def rename_cluster(cmd: RenameCluster, *, streams: EventStore) -> AppendResult:
    scope = ScopeRef("cluster", str(cmd.cluster_id))
    await _require_admin_on(scope, cmd.metadata, "rename clusters", streams)
    stream = await streams.load(cmd.cluster_id)
    events = org_units.rename_cluster(
        fold_as(org_units.fold, stream.events), cmd.cluster_id, name=cmd.name
    )
    return await streams.append(
        Append(
            cmd.cluster_id,
            events,
            expected_version=stream.version,
            metadata=cmd.metadata,
            name=_claim("cluster", None, cmd.name),
        )
    )


@decided_again
async def create_department(
    cmd: CreateDepartment, *, streams: EventStore, ids: IdSequence
) -> Stamped[str]:
    """Create the department; its new id, and when and by whom it was created. Sent again
    under the same idempotency key, the first department's, with nothing written."""
    keyed = await _keyed(cmd, "department", streams, ids)
    if keyed.first is not None:
        return keyed.first
    cluster_scope = ScopeRef("cluster", str(cmd.cluster_id))
    lineage = await access.lineage_of(cluster_scope, streams=streams, field="/clusterId")
    unseen = org_units.UnknownScopeError("cluster", str(cmd.cluster_id), field="/clusterId")
    await access.require(
        cmd.metadata, lineage, "admin", "create departments", streams=streams, unseen=unseen
    )
    cluster = fold_as(org_units.fold, (await streams.load(cmd.cluster_id)).events)
    assert cluster is not None  # lineage_of found it
    department_id = keyed.unit_id or str(await ids.next_id(keyed.creation))
    events = org_units.create_department(
        None,
        department_id,
        cluster=cluster,
        name=cmd.name,
        description=cmd.description,
        resources=cmd.resources,
    )
    creation = await idempotency.create_once(
        streams,
        org_units.stream_of(ScopeRef("department", department_id)),
        events,
        keyed=cmd.keyed,
        metadata=keyed.metadata,
        looked_up=keyed.looked_up,
        name=_claim("department", cluster, cmd.name),
        uses=Uses(user=f"department {cmd.name}", used=uses.of_scope(cluster_scope, "/clusterId")),
    )
    return Stamped(state=department_id, stamps=creation.stamps)


@decided_again
async def create_project(
    cmd: CreateProject, *, streams: EventStore, ids: IdSequence
) -> Stamped[str]:
    """Create the project under its department (or directly under its cluster); its new id,
    and when and by whom it was created. Sent again under the same idempotency key, the first
    project's, with nothing written."""
    keyed = await _keyed(cmd, "project", streams, ids)
    if keyed.first is not None:
        return keyed.first
    if cmd.department_id is None:
        parent_scope, field = ScopeRef("cluster", str(cmd.cluster_id)), "/clusterId"
    else:
        parent_scope, field = ScopeRef("department", cmd.department_id), "/parentId"
    lineage = await access.lineage_of(parent_scope, streams=streams, field=field)
    unseen = org_units.UnknownScopeError(parent_scope.kind, parent_scope.id, field=field)
    await access.require(
        cmd.metadata, lineage, "admin", "create projects", streams=streams, unseen=unseen
    )
    cluster = org_units.parent(
        fold_as(org_units.fold, (await streams.load(cmd.cluster_id)).events),
        "cluster",
        str(cmd.cluster_id),
        field="/clusterId",
    )
    department = None
    if cmd.department_id is not None:
        department_stream = org_units.stream_of(parent_scope)
        department = fold_as(org_units.fold, (await streams.load(department_stream)).events)
    project_id = keyed.unit_id or str(await ids.next_id(keyed.creation))
    events = org_units.create_project(
        None,
        project_id,
        cluster=cluster,
        department=department,
        name=cmd.name,
        description=cmd.description,
        requested_namespace=cmd.requested_namespace,
        resources=cmd.resources,
    )
    creation = await idempotency.create_once(
        streams,
        org_units.stream_of(ScopeRef("project", project_id)),
        events,
        keyed=cmd.keyed,
        metadata=keyed.metadata,
        looked_up=keyed.looked_up,
        name=_claim("project", cluster, cmd.name),
        uses=Uses(user=f"project {cmd.name}", used=uses.of_scope(parent_scope, field)),
    )
    return Stamped(state=project_id, stamps=creation.stamps)


class _Keyed(NamedTuple):
    """What a unit's keyed create found before deciding: its metadata (the request digested), the
    creation to issue the id to (None: not keyed), the id issued earlier, whether its stream was
    found empty, and the earlier attempt's answer, if one made the unit."""

    metadata: EventMetadata
    creation: UUID | None = None
    unit_id: str | None = None
    looked_up: bool = False
    first: Stamped[str] | None = None


async def _keyed(
    cmd: CreateDepartment | CreateProject,
    kind: Literal["department", "project"],
    streams: EventStore,
    ids: IdSequence,
) -> _Keyed:
    """Under a key: the id issued earlier and the unit it made, found by the request digest before
    deciding (services/idempotency.py). A first attempt is issued its id only once decided
    (`creation`), so a refused one uses up no number."""
    if not cmd.keyed:
        return _Keyed(cmd.metadata)
    metadata = idempotency.digested(cmd.metadata, idempotency.request_digest(cmd))
    issued = await ids.issued(cmd.creation_id)
    if issued is None:
        return _Keyed(metadata, cmd.creation_id)
    unit_id = str(issued)
    stream_id = org_units.stream_of(ScopeRef(kind, unit_id))
    stream = await streams.load(stream_id)
    found = idempotency.answered(stream, stream_id, metadata)
    first = None if found is None else Stamped(state=unit_id, stamps=found.stamps)
    return _Keyed(metadata, cmd.creation_id, unit_id, looked_up=not stream.version, first=first)


@decided_again
async def update_org_unit(cmd: UpdateOrgUnit, *, streams: EventStore) -> Stamped[org_units.OrgUnit]:
    """Replace the unit's updatable fields; return the unit as it now is."""
    await _require_admin_on(cmd.scope, cmd.metadata, f"update {cmd.scope.kind}s", streams)
    stream_id = org_units.stream_of(cmd.scope)
    stream = await streams.load(stream_id)
    state = fold_as(org_units.fold, stream.events)
    events = org_units.update_unit(
        state,
        cmd.scope.kind,
        cmd.scope.id,
        description=cmd.description,
        resources=cmd.resources,
    )
    if not events:
        unit = org_units.live(state, cmd.scope.kind, cmd.scope.id)
        return Stamped(state=unit, stamps=stamps.loaded(stream))
    assert state is not None
    result = await streams.append(
        Append(
            stream_id,
            events,
            expected_version=stream.version,
            metadata=cmd.metadata,
            name=_claim(state.kind, state, state.name),
        )
    )
    updated = fold_as(org_units.fold, (*stream.events, *events))
    assert updated is not None
    return Stamped(state=updated, stamps=stamps.appended(stream, result, cmd.metadata))


@decided_again
async def delete_org_unit(cmd: DeleteOrgUnit, *, streams: EventStore) -> None:
    """Refused while it holds units, templates, assets, credentials or workloads (decided in the
    deletion's transaction); frees the unit's name."""
    stream_id = org_units.stream_of(cmd.scope)
    stream = await streams.load(stream_id)
    state = fold_as(org_units.fold, stream.events)
    if state is None or state.kind != cmd.scope.kind:
        raise org_units.OrgUnitNotFoundError(cmd.scope.kind, cmd.scope.id)
    # A deleted unit keeps its lineage, so deleting it again is checked (and a no-op) alike.
    action = f"delete {cmd.scope.kind}s"
    unseen = org_units.OrgUnitNotFoundError(cmd.scope.kind, cmd.scope.id)
    await access.require(
        cmd.metadata, state.lineage, "admin", action, streams=streams, unseen=unseen
    )
    events = org_units.delete_unit(state, cmd.scope.kind, cmd.scope.id)
    if events:
        await streams.append(
            Append(
                stream_id,
                events,
                expected_version=stream.version,
                metadata=cmd.metadata,
                name=None,
                uses=Uses(user=f"{state.kind} {state.name}"),
                unused=lambda holds: org_units.OrgUnitNotEmptyError(
                    cmd.scope.kind, cmd.scope.id, holds
                ),
            )
        )


async def unit_name(scope: ScopeRef, *, streams: StreamLoader) -> str:
    """An org unit's name from its own stream ("" when there is no such unit): for a unit too
    new for the read model, as a write's answer names what the write just found."""
    unit = fold_as(org_units.fold, (await streams.load(org_units.stream_of(scope))).events)
    return "" if unit is None else unit.name


async def cluster_of(scope: ScopeRef, *, streams: StreamLoader) -> UUID | None:
    """The cluster a live org unit is in, from its own stream (None: no such unit): what a
    request that names a unit but not its cluster is made with."""
    try:
        stream_id = org_units.stream_of(scope)
    except ValueError:
        return None
    unit = fold_as(org_units.fold, (await streams.load(stream_id)).events)
    return None if unit is None or unit.deleted else unit.cluster_id


async def _require_admin_on(
    scope: ScopeRef, metadata: EventMetadata, action: str, streams: EventStore
) -> None:
    """Admin on the unit itself (or above). A unit that does not exist is a 404, not a 400."""
    try:
        lineage = await access.lineage_of(scope, streams=streams, field="")
    except org_units.UnknownScopeError as exc:
        raise org_units.OrgUnitNotFoundError(scope.kind, scope.id) from exc
    unseen = org_units.OrgUnitNotFoundError(scope.kind, scope.id)
    await access.require(metadata, lineage, "admin", action, streams=streams, unseen=unseen)


def _claim(kind: ScopeKind, cluster: org_units.OrgUnit | None, name: str) -> NameClaim:
    cluster_id = None if cluster is None else cluster.cluster_id
    return NameClaim(namespace=org_units.name_namespace(kind, cluster_id), name=name)
