"""Storage class use cases: a cluster's admins (or its agent) register its classes and configure
their use; new PVCs are held to them where written (`facts_for`). Also: domain/storage_classes.py,
infra/http/storage_classes.py, projections/storage_class_catalogue.py."""

from collections.abc import Callable, Iterable
from uuid import UUID

from domain import storage_classes, storage_rules
from domain.commands import (
    CreateStorageClassConfiguration,
    DeleteStorageClassConfiguration,
    RegisterStorageClass,
    RemoveStorageClass,
    UpdateStorageClassConfiguration,
)
from domain.events import Event, EventMetadata
from domain.org_units import OrgUnitNotFoundError, UnknownScopeError
from domain.storage_classes import (
    ConfigurationNotFoundError,
    StorageClass,
    StorageClassConfiguration,
)
from domain.storage_rules import Issue, StorageFacts
from domain.values import ScopeRef
from services import access, idempotency, stamps, uses
from services.kinds import fold_as
from services.ports.event_store import Append, EventStore, NameClaim, StreamLoader, Uses
from services.ports.name_lookups import Lookups
from services.prefetch import actor_stream, prefetch, scope_stream
from services.races import decided_again
from services.stamps import Stamped

# How a refusal of a field is raised where a PVC is described (a template's, an asset's, ...).
Refusal = Callable[[str, str], Exception]


@decided_again
async def register_storage_class(
    cmd: RegisterStorageClass, *, streams: EventStore
) -> Stamped[StorageClass]:
    """The class as the cluster reports it now; reported unchanged, nothing is written."""
    await _require_admin(cmd.cluster_id, cmd.metadata, "register storage classes", streams)
    stream_id = storage_classes.stream_of(cmd.cluster_id, cmd.name)
    stream = await streams.load(stream_id)
    state = fold_as(storage_classes.fold, stream.events)
    events = storage_classes.register(state, cmd.cluster_id, cmd.name, cmd.spec)
    if not events:
        assert state is not None
        return Stamped(state=state, stamps=stamps.loaded(stream))
    cluster = _cluster(cmd.cluster_id)
    result = await streams.append(
        Append(
            stream_id,
            events,
            expected_version=stream.version,
            metadata=cmd.metadata,
            name=NameClaim(
                namespace=storage_classes.class_namespace(cmd.cluster_id), name=cmd.name
            ),
            uses=Uses(user=f"storageclass {cmd.name}", used=uses.of_scope(cluster, "/uuid")),
        )
    )
    registered = storage_classes.fold((*stream.events, *events))
    assert registered is not None
    return Stamped(state=registered, stamps=stamps.appended(stream, result, cmd.metadata))


@decided_again
async def remove_storage_class(cmd: RemoveStorageClass, *, streams: EventStore) -> None:
    """The cluster no longer has the class. What names it stays, its `runnable` saying so."""
    await _require_admin(cmd.cluster_id, cmd.metadata, "remove storage classes", streams)
    stream_id = storage_classes.stream_of(cmd.cluster_id, cmd.name)
    stream = await streams.load(stream_id)
    events = storage_classes.remove(
        fold_as(storage_classes.fold, stream.events), cmd.cluster_id, cmd.name
    )
    await uses.delete_unused(
        streams,
        stream_id,
        stream,
        events,
        metadata=cmd.metadata,
        user=f"storageclass {cmd.name}",
        in_use=lambda _: storage_classes.StorageClassNotFoundError(cmd.cluster_id, cmd.name),
    )


@decided_again
async def create_configuration(
    cmd: CreateStorageClassConfiguration, *, streams: EventStore
) -> Stamped[StorageClassConfiguration]:
    """Configure a class of a cluster (one configuration per class); return it as written."""
    cluster = _cluster(cmd.cluster_id)

    async def decide(remembered: bool) -> idempotency.Decision:
        loader = await prefetch(
            streams, [actor_stream(cmd.metadata), scope_stream(cluster)], remembered=remembered
        )
        await access.require_in(
            cmd.metadata, cluster, "admin", "configure storage classes", streams=loader,
            field="/scopeId",
        )  # fmt: skip
        events = storage_classes.configure(
            None, cmd.configuration_id, cluster_id=cmd.cluster_id, name=cmd.name, rules=cmd.rules
        )
        return idempotency.Decision(
            events=events,
            name=_claim(cmd.cluster_id, cmd.name),
            uses=Uses(
                user=f"storageclassconfig {cmd.name}", used=uses.of_scope(cluster, "/scopeId")
            ),
            checked=loader.checked,
        )

    _, creation = await idempotency.create_decided(
        streams, cmd.configuration_id, decide, request=cmd, keyed=cmd.keyed, metadata=cmd.metadata
    )
    state = storage_classes.fold_configuration(creation.events)
    assert state is not None
    return Stamped(state=state, stamps=creation.stamps)


@decided_again
async def update_configuration(
    cmd: UpdateStorageClassConfiguration, *, streams: EventStore
) -> Stamped[StorageClassConfiguration]:
    """Replace or patch the configuration's rules; return it as it now is."""
    stream = await streams.load(cmd.configuration_id)
    current = await _managed(cmd.configuration_id, stream.events, cmd.metadata, "update", streams)
    rules = (
        cmd.rules
        if cmd.whole
        else storage_classes.patched(current.rules, cmd.rules, cmd.remove_attributes)
    )
    events = storage_classes.reconfigure(current, cmd.configuration_id, rules)
    if not events:
        return Stamped(state=current, stamps=stamps.loaded(stream))
    result = await streams.append(
        Append(
            cmd.configuration_id,
            events,
            expected_version=stream.version,
            metadata=cmd.metadata,
            name=_claim(current.cluster_id, current.name),
        )
    )
    updated = storage_classes.fold_configuration((*stream.events, *events))
    assert updated is not None
    return Stamped(state=updated, stamps=stamps.appended(stream, result, cmd.metadata))


@decided_again
async def delete_configuration(
    cmd: DeleteStorageClassConfiguration, *, streams: EventStore
) -> None:
    stream = await streams.load(cmd.configuration_id)
    current = await _managed(cmd.configuration_id, stream.events, cmd.metadata, "delete", streams)
    await uses.delete_unused(
        streams,
        cmd.configuration_id,
        stream,
        storage_classes.delete_configuration(current, cmd.configuration_id),
        metadata=cmd.metadata,
        user=f"storageclassconfig {current.name}",
        in_use=lambda _: ConfigurationNotFoundError(cmd.configuration_id),
    )


async def require_visible(
    configuration_id: UUID, actor: EventMetadata, streams: StreamLoader
) -> None:
    """A configuration of a cluster the actor may not see is missing, before a body is read."""
    await access.require_visible(
        configuration_id,
        actor,
        streams=streams,
        scope_in=_scope_in,
        missing=ConfigurationNotFoundError(configuration_id),
    )


def _scope_in(events: Iterable[Event]) -> ScopeRef | None:
    found = fold_as(storage_classes.fold_configuration, events)
    return None if found is None or found.deleted else _cluster(found.cluster_id)


async def facts_for(
    cluster_id: UUID | None, classes: Iterable[str], *, streams: StreamLoader, names: Lookups
) -> StorageFacts:
    """What the write side knows of these classes of a cluster (`storage_rules.DEFAULT`: its
    default class): which it has (None: it has registered none, so no name is checked), their
    configurations, and its default class."""
    wanted = set(classes)
    if cluster_id is None or not wanted:
        return StorageFacts()
    registered = await names.holders([storage_classes.class_namespace(cluster_id)])
    default = None
    if storage_rules.DEFAULT in wanted:
        default = await _default_class(registered, streams)
        wanted = (wanted - {storage_rules.DEFAULT}) | ({default} if default else set())
    known: set[str] = set()
    rules = {}
    for name in sorted(wanted):
        if registered:
            state = fold_as(
                storage_classes.fold,
                (await streams.load(storage_classes.stream_of(cluster_id, name))).events,
            )
            if state is not None and not state.removed:
                known.add(name)
        held = await names.holder(storage_classes.configuration_namespace(cluster_id), name)
        if held is not None:
            configuration = fold_as(
                storage_classes.fold_configuration, (await streams.load(held)).events
            )
            if configuration is not None and not configuration.deleted:
                rules[name] = configuration.rules
    return StorageFacts(
        classes=frozenset(known) if registered else None, rules=rules, default=default
    )


async def _default_class(registered: Iterable[UUID], streams: StreamLoader) -> str | None:
    """The registered class a PVC naming none is bound to (`storage_rules.default_of`)."""
    defaults = []
    for stream_id in registered:
        state = fold_as(storage_classes.fold, (await streams.load(stream_id)).events)
        if state is not None and not state.removed and state.spec.is_default:
            defaults.append(state.name)
    return storage_rules.default_of(defaults)


def refused(issues: list[Issue], refuse: Refusal) -> None:
    """The first of what a new PVC asks that its class does not allow, as the caller's refusal."""
    if issues:
        field, reason = issues[0]
        raise refuse(field, reason)


async def _require_admin(
    cluster_id: UUID, actor: EventMetadata, action: str, streams: StreamLoader
) -> None:
    """Admin on the cluster; one that does not exist, or that the actor may not see, a 404."""
    cluster = _cluster(cluster_id)
    try:
        lineage = await access.lineage_of(cluster, streams=streams, field="/uuid")
    except UnknownScopeError as exc:
        raise OrgUnitNotFoundError("cluster", str(cluster_id)) from exc
    unseen = OrgUnitNotFoundError("cluster", str(cluster_id))
    await access.require(actor, lineage, "admin", action, streams=streams, unseen=unseen)


async def _managed(
    configuration_id: UUID,
    events: tuple[Event, ...],
    actor: EventMetadata,
    verb: str,
    streams: StreamLoader,
) -> StorageClassConfiguration:
    current = storage_classes.live(
        fold_as(storage_classes.fold_configuration, events), configuration_id
    )
    lineage = await access.lineage_of(_cluster(current.cluster_id), streams=streams, field="")
    unseen = ConfigurationNotFoundError(configuration_id)
    action = f"{verb} storage class configurations"
    await access.require(actor, lineage, "admin", action, streams=streams, unseen=unseen)
    return current


def _cluster(cluster_id: UUID) -> ScopeRef:
    return ScopeRef("cluster", str(cluster_id))


def _claim(cluster_id: UUID, name: str) -> NameClaim:
    return NameClaim(namespace=storage_classes.configuration_namespace(cluster_id), name=name)
