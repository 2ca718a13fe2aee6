"""Asset use cases: editors of a scope (or above it) create, update and delete its assets; names
are unique per kind within a scope. Also: domain/assets.py, infra/http/assets.py."""

from collections.abc import Sequence
from uuid import UUID

from domain import assets, credentials, storage_rules
from domain.assets import Asset, AssetNotFoundError, AssetSpec, InvalidAssetError
from domain.commands import (
    CreateAsset,
    CreateCredential,
    CreateRegistry,
    DeleteAsset,
    UpdateAsset,
)
from domain.events import AssetEvent, Event, EventMetadata
from domain.specs import (
    ComputeSpec,
    EnvironmentSpec,
    GitSpec,
    PvcSpec,
    S3Spec,
    SecretVolumeSpec,
    WorkloadSupportedTypes,
)
from domain.tenant_settings import STREAM as SETTINGS_STREAM
from domain.tenant_settings import check_compute
from domain.values import AssetKind, AssetMeta, ScopeRef
from services import access, idempotency, stamps, storage_classes, tenant_settings, uses
from services.errors import PreconditionFailedError
from services.kinds import fold_as, live_scope
from services.ports.event_store import (
    Append,
    EventStore,
    NameClaim,
    StreamLoader,
    StreamReader,
    Uses,
)
from services.ports.name_lookups import Lookups
from services.prefetch import actor_stream, prefetch, scope_stream
from services.races import decided_again
from services.stamps import Stamped

# Where a request names each kind of scope (Run:ai's asset meta).
SCOPE_FIELDS = {
    "tenant": "/meta/scope",
    "cluster": "/meta/clusterId",
    "department": "/meta/departmentId",
    "project": "/meta/projectId",
}


@decided_again
async def create_asset(cmd: CreateAsset, *, streams: EventStore, names: Lookups) -> Stamped[Asset]:
    """Create the asset; return it as written. `names`: the write side's, for the storage class
    of a PVC data source."""
    kind = assets.kind_of(cmd.spec)

    async def decide(remembered: bool) -> idempotency.Decision:
        # The caller's roles, the scope and the tenant's settings in one round trip, or none.
        loader = await prefetch(
            streams,
            [*placing(cmd), SETTINGS_STREAM],
            remembered=remembered,
        )
        meta = await placed(
            cmd,
            f"create {kind}s",
            streams=loader,
            workload_supported_types=cmd.workload_supported_types,
            auto_delete=cmd.auto_delete,
        )
        await _check_credentials(cmd.spec, meta.lineage, loader)
        await _check_settings(cmd.spec, loader)
        spec = await _with_storage(cmd.spec, meta.cluster_id, loader, names)
        return idempotency.Decision(
            events=assets.create(None, cmd.asset_id, meta, spec),
            name=name_claim(kind, meta),
            uses=uses_of(kind, meta, cmd.spec),
            checked=loader.checked,
        )

    _, creation = await idempotency.create_decided(
        streams, cmd.asset_id, decide, request=cmd, keyed=cmd.keyed, metadata=cmd.metadata
    )
    return Stamped(state=_after((), creation.events), stamps=creation.stamps)


@decided_again
async def update_asset(
    cmd: UpdateAsset, *, streams: EventStore, names: Lookups, reads: StreamLoader | None = None
) -> Stamped[Asset]:
    """Replace the asset's name, description and spec; return it as it now is. `reads`: the
    streams the request just read (`require_visible`), decided on, not read again; the append is
    refused unless the asset's stream is unmoved since."""
    kind = assets.kind_of(cmd.spec)
    loader = reads or streams
    stream = await loader.load(cmd.asset_id)
    current = assets.live(assets.fold(stream.events), kind, cmd.asset_id)
    await access.require(
        cmd.metadata,
        current.meta.lineage,
        "editor",
        f"update {kind}s",
        streams=loader,
        unseen=assets.AssetNotFoundError(kind, cmd.asset_id),
    )
    if cmd.expected_version is not None and cmd.expected_version != stream.version:
        raise PreconditionFailedError(cmd.expected_version, stream.version)
    events = await _update_events(current, cmd.name, cmd.description, cmd.spec, loader, names)
    if not events:
        return Stamped(state=current, stamps=stamps.loaded(stream))
    updated = _after(stream.events, events)
    result = await streams.append(
        Append(
            cmd.asset_id,
            events,
            expected_version=stream.version,
            metadata=cmd.metadata,
            name=name_claim(kind, updated.meta),
            uses=uses_of(kind, updated.meta, cmd.spec),
        )
    )
    return Stamped(state=updated, stamps=stamps.appended(stream, result, cmd.metadata))


async def visible_asset(
    kind: AssetKind, asset_id: UUID, actor: EventMetadata, streams: StreamReader
) -> Stamped[Asset]:
    """The asset as its stream has it now, when the actor may see it (else AssetNotFoundError):
    what a change is made on (a form's hidden values, its version), never a read model's copy,
    which may trail the write."""
    stream = await access.visible_now(
        asset_id,
        actor,
        streams=streams,
        scope_in=live_scope(assets.fold, kind),
        missing=AssetNotFoundError(kind, asset_id),
    )
    current = assets.live(assets.fold(stream.events), kind, asset_id)
    return Stamped(state=current, stamps=stamps.loaded(stream))


async def require_visible(
    kind: str, asset_id: UUID, actor: EventMetadata, streams: StreamLoader
) -> None:
    """An environment, compute resource or data source of this kind that the actor may not see
    is missing (AssetNotFoundError), before a change's body is read."""
    await access.require_visible(
        asset_id,
        actor,
        streams=streams,
        scope_in=live_scope(assets.fold, kind),
        missing=AssetNotFoundError(kind, asset_id),
    )


async def check_update(
    asset_id: UUID,
    name: str,
    description: str | None,
    spec: AssetSpec,
    *,
    streams: EventStore,
    names: Lookups,
) -> None:
    """Refuse, writing nothing, what an update to these values would (the asset's and its spec's
    rules, its credentials, the settings it needs), so no impact preview shows values the update
    refuses. Who may update, and a name another asset holds, the update itself decides."""
    stream = await streams.load(asset_id)
    current = assets.live(assets.fold(stream.events), assets.kind_of(spec), asset_id)
    await _update_events(current, name, description, spec, streams, names)


async def _update_events(
    current: Asset,
    name: str,
    description: str | None,
    spec: AssetSpec,
    streams: StreamLoader,
    names: Lookups,
) -> list[AssetEvent]:
    await _check_credentials(spec, current.meta.lineage, streams)
    await _check_settings(spec, streams)
    spec = await _with_storage(spec, current.meta.cluster_id, streams, names)
    return assets.update(current, current.id, name=name, description=description, spec=spec)


async def _with_storage(
    spec: AssetSpec, cluster_id: UUID | None, streams: StreamLoader, names: Lookups
) -> AssetSpec:
    """A PVC data source's new PVC, held to its storage class as an asset's and given the
    class's defaults (domain/storage_rules.py)."""
    if not isinstance(spec, PvcSpec) or (name := storage_rules.class_of(spec)) is None:
        return spec
    facts = await storage_classes.facts_for(cluster_id, [name], streams=streams, names=names)
    checked, issues = storage_rules.volume_checked(spec, "/spec", facts, "asset")
    storage_classes.refused(issues, InvalidAssetError)
    return checked


@decided_again
async def delete_asset(cmd: DeleteAsset, *, streams: EventStore) -> None:
    """Delete the asset and free its name; refused while templates or other assets use it
    (decided in the deletion's own transaction); deleting it again is a no-op."""
    stream = await streams.load(cmd.asset_id)
    state = assets.fold(stream.events)
    if state is None or state.kind != cmd.kind:
        raise assets.AssetNotFoundError(cmd.kind, cmd.asset_id)
    action = f"delete {cmd.kind}s"
    unseen = assets.AssetNotFoundError(cmd.kind, cmd.asset_id)
    await access.require(
        cmd.metadata, state.meta.lineage, "editor", action, streams=streams, unseen=unseen
    )
    events = assets.delete(state, cmd.kind, cmd.asset_id)
    if events:
        await streams.append(
            Append(
                cmd.asset_id,
                events,
                expected_version=stream.version,
                metadata=cmd.metadata,
                name=None,
                uses=Uses(user=f"{cmd.kind} {state.meta.name}"),
                unused=lambda users: assets.AssetInUseError(cmd.kind, cmd.asset_id, users),
            )
        )


CredentialRef = tuple[str, UUID, tuple[str, ...] | None, str | None]


def _credential_refs(spec: AssetSpec) -> list[CredentialRef]:
    """The credentials a spec reads: (field, id, kinds allowed or None for any, key)."""
    match spec:
        case EnvironmentSpec():
            return [
                (
                    f"/spec/environmentVariables/{i}/credential",
                    v.credential.asset_id,
                    None,
                    v.credential.key,
                )
                for i, v in enumerate(spec.environment_variables or ())
                if v.credential is not None
            ]
        case S3Spec(access_key_asset_id=UUID() as ref):
            return [("/spec/accessKeyAssetId", ref, ("accessKey",), None)]
        case GitSpec():
            refs: list[CredentialRef] = []
            if spec.credential_id is not None:
                refs.append(
                    ("/spec/credentialId", spec.credential_id, ("password", "genericSecret"), None)
                )
            if spec.password_asset_id is not None:
                refs.append(("/spec/passwordAssetId", spec.password_asset_id, ("password",), None))
            return refs
        case SecretVolumeSpec(credential_asset_id=UUID() as ref):
            return [("/spec/credentialAssetId", ref, None, None)]
        case _:
            return []


async def _check_credentials(
    spec: AssetSpec, lineage: tuple[ScopeRef, ...], streams: StreamLoader
) -> None:
    """Every credential a spec reads must exist where the asset can use it (in its scope or
    above), be of a kind that fits, and (a generic secret) hold the key asked for."""
    for field, asset_id, kinds, key in _credential_refs(spec):
        found = fold_as(credentials.fold, (await streams.load(asset_id)).events)
        pointer = f"{field}/assetId" if field.endswith("/credential") else field
        if found is None or found.deleted or found.meta.scope_ref not in lineage:
            raise InvalidAssetError(pointer, "no such credential in this scope or above")
        if kinds is not None and found.kind not in kinds:
            raise InvalidAssetError(pointer, f"a {found.kind} credential does not fit here")
        keys = found.spec.keys
        if key is not None and found.kind == "genericSecret" and keys and key not in keys:
            raise InvalidAssetError(f"{field}/key", f"the credential has no key {key!r}")


def uses_of(kind: AssetKind, meta: AssetMeta, spec: AssetSpec) -> Uses:
    """The org unit the asset lives in and the credentials it reads, each with the field that
    names it."""
    found = dict(uses.of_scope(meta.scope_ref, SCOPE_FIELDS[meta.scope]))
    for field, asset_id, _, _ in _credential_refs(spec):
        found.setdefault(asset_id, f"{field}/assetId" if field.endswith("/credential") else field)
    return Uses(user=f"{kind} {meta.name}", used=tuple(found.items()))


def placing(cmd: CreateAsset | CreateCredential | CreateRegistry) -> list[UUID | None]:
    """The streams `placed` reads: the caller's roles and the scope's unit."""
    return [actor_stream(cmd.metadata), scope_stream(cmd.scope)]


def in_scope(scope: ScopeRef, user: str) -> Uses:
    """What an asset that uses nothing else uses: its scope, which it holds (a unit holding
    assets is not deleted)."""
    return Uses(user=user, used=uses.of_scope(scope, SCOPE_FIELDS[scope.kind]))


def name_claim(kind: AssetKind, meta: AssetMeta) -> NameClaim:
    return NameClaim(
        namespace=name_namespace(kind, meta.scope_ref), name=meta.name, field="/meta/name"
    )


def name_namespace(kind: str, scope: ScopeRef) -> str:
    """Where an asset's name must be unique: among its kind's in its scope."""
    return f"{kind}@{scope.kind}:{scope.id}"


async def _check_settings(spec: object, streams: StreamLoader) -> None:
    """A compute resource's GPU limits need GPU resource optimization turned on."""
    if isinstance(spec, ComputeSpec) and (spec.gpu_portion_limit or spec.gpu_memory_limit):
        settings = await tenant_settings.current(streams)
        check_compute(settings, "/spec", spec)


async def placed(
    cmd: CreateAsset | CreateCredential | CreateRegistry,
    action: str,
    *,
    streams: StreamLoader,
    workload_supported_types: WorkloadSupportedTypes | None = None,
    auto_delete: bool = False,
) -> AssetMeta:
    """The meta of the asset `cmd` creates where it says (with what only some kinds carry),
    once its caller may `action` there: an editor of the scope or above; a scope out of the
    caller's sight answers as one unknown."""
    field = SCOPE_FIELDS[cmd.scope.kind]
    lineage = await access.require_in(
        cmd.metadata, cmd.scope, "editor", action, streams=streams, field=field
    )
    cluster_id, department_id, project_id = placement(lineage, cmd.cluster_id)
    return AssetMeta(
        name=cmd.name,
        description=cmd.description,
        scope=cmd.scope.kind,
        workload_supported_types=workload_supported_types,
        auto_delete=auto_delete,
        private=cmd.private,
        cluster_id=cluster_id,
        department_id=department_id,
        project_id=project_id,
    )


def placement(
    lineage: tuple[ScopeRef, ...], claimed_cluster: UUID | None
) -> tuple[UUID | None, str | None, int | None]:
    """The ids of the scope and its ancestors, as Run:ai's asset meta carries them; a cluster
    the request named must be the scope's own."""
    ids = {ref.kind: ref.id for ref in lineage}
    cluster_id = UUID(ids["cluster"]) if "cluster" in ids else None
    if claimed_cluster is not None and cluster_id is not None and claimed_cluster != cluster_id:
        raise InvalidAssetError("/meta/clusterId", f"the scope belongs to cluster {cluster_id}")
    project_id = int(ids["project"]) if "project" in ids else None
    return cluster_id, ids.get("department"), project_id


def _after(history: Sequence[Event], events: Sequence[Event]) -> Asset:
    state = assets.fold((*history, *events))
    assert state is not None
    return state
