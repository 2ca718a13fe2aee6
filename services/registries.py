"""Registry use cases: editors of a scope manage its registries (names unique per scope); the
password goes to the vault, sealed with its event, and a template picks images only from those of
its scope or above (a recorded use). Also: domain/registries.py, infra/http/registries.py."""

from collections.abc import Callable, Iterable, Sequence
from uuid import UUID

from domain import registries
from domain.assets import AssetNotFoundError
from domain.commands import CreateRegistry, DeleteRegistry, UpdateRegistry
from domain.events import Event, EventMetadata, RegistryEvent
from domain.registries import Registry
from domain.specs import RegistrySpec
from domain.template_specs import ReplicaSpec
from domain.values import AssetMeta, ScopeRef
from services import access, idempotency, stamps, uses
from services.assets import in_scope, placed, placing
from services.errors import RegistryChangingError
from services.kinds import fold_as, live_scope
from services.ports.event_store import Append, EventStore, NameClaim, Stream, StreamLoader
from services.ports.kept_secrets import (
    CredentialValues,
    CredentialValuesDestroyed,
    CredentialVault,
)
from services.prefetch import prefetch
from services.races import decided_again
from services.stamps import Stamped

# How a refusal of a field is raised where the registry is named (a template's, a workload's).
Refusal = Callable[[str, str], Exception]


@decided_again
async def create_registry(
    cmd: CreateRegistry, *, store: EventStore, vault: CredentialVault
) -> Stamped[Registry]:
    """Create the registry, its password sealed with it; return it as written. Sent again under
    the same idempotency key, the first answer, with nothing written."""
    values = _given(cmd.password.reveal())

    async def decide(remembered: bool) -> idempotency.Decision:
        loader = await prefetch(store, placing(cmd), remembered=remembered)
        meta = await placed(
            cmd,
            "create registries",
            streams=loader,
            workload_supported_types=cmd.workload_supported_types,
        )
        spec = RegistrySpec(
            url=cmd.url,
            user=cmd.user,
            secret=vault.reference(cmd.asset_id, values) if values else None,
        )
        return idempotency.Decision(
            events=registries.create(None, cmd.asset_id, meta, spec),
            name=_claim(meta),
            uses=in_scope(cmd.scope, f"registry {cmd.name}"),
            checked=loader.checked,
        )

    _, creation = await idempotency.create_decided(
        store,
        cmd.asset_id,
        decide,
        request=cmd,
        secrets=vault.reference(cmd.asset_id, values) if values and cmd.keyed else None,
        keyed=cmd.keyed,
        metadata=cmd.metadata,
        secret=CredentialValues(values) if values else None,
    )
    state = registries.fold(creation.events)
    assert state is not None
    return Stamped(state=state, stamps=creation.stamps)


@decided_again
async def update_registry(
    cmd: UpdateRegistry,
    *,
    store: EventStore,
    vault: CredentialVault,
    reads: StreamLoader | None = None,
) -> Stamped[Registry]:
    """What the command gives replaces what was; a new password is sealed in the update's
    transaction, in place of the old. `reads`: what the request's visibility check read a
    moment before (services/assets.py `update_asset`)."""
    loader = reads or store
    stream = await loader.load(cmd.asset_id)
    current = registries.live(_fold(stream.events), cmd.asset_id)
    await access.require(
        cmd.metadata,
        current.meta.lineage,
        "editor",
        "update registries",
        streams=loader,
        unseen=AssetNotFoundError(registries.KIND, cmd.asset_id),
    )
    values = _given(cmd.password.reveal())
    events = registries.update(
        current,
        cmd.asset_id,
        name=cmd.name,
        description=cmd.description,
        url=current.spec.url if cmd.url is None else cmd.url,
        user=current.spec.user if cmd.user is None else cmd.user,
        secret=vault.reference(cmd.asset_id, values) if values else None,
    )
    if not events:
        return Stamped(state=current, stamps=stamps.loaded(stream))
    return await _written(store, stream, events, cmd.metadata, values=values)


@decided_again
async def delete_registry(cmd: DeleteRegistry, *, store: EventStore) -> None:
    """Refused while a template picks its image from it (decided in the deletion's own
    transaction); otherwise its password is destroyed with it. Deleting it again is a no-op."""
    stream = await store.load(cmd.asset_id)
    state = _fold(stream.events)
    if state is None:
        raise AssetNotFoundError(registries.KIND, cmd.asset_id)
    await access.require(
        cmd.metadata,
        state.meta.lineage,
        "editor",
        "delete registries",
        streams=store,
        unseen=AssetNotFoundError(registries.KIND, cmd.asset_id),
    )
    await uses.delete_unused(
        store,
        cmd.asset_id,
        stream,
        registries.delete(state, cmd.asset_id),
        metadata=cmd.metadata,
        user=f"registry {state.meta.name}",
        in_use=lambda users: registries.RegistryInUseError(cmd.asset_id, users),
        secret=CredentialValuesDestroyed(),
    )


async def require_visible(
    kind: str, registry_id: UUID, actor: EventMetadata, streams: StreamLoader
) -> None:
    """A registry the actor may not see is missing (AssetNotFoundError), before a change's
    body is read."""
    await access.require_visible(
        registry_id,
        actor,
        streams=streams,
        scope_in=live_scope(registries.fold, kind),
        missing=AssetNotFoundError(kind, registry_id),
    )


async def password_of(asset_id: UUID, spec: RegistrySpec, *, vault: CredentialVault) -> str:
    """The vault's password, when it is the one the registry as shown (`spec`, from a read model)
    was given; else RegistryChangingError. The read model trails the vault, and a registry's old
    URL must not be sent its new password."""
    values = await vault.open(asset_id)
    secret = spec.secret
    if values is None or "password" not in values or secret is None:
        raise RegistryChangingError(asset_id)
    if not vault.holds(asset_id, values, secret):
        raise RegistryChangingError(asset_id)
    return values["password"]


def named_in(specs: Iterable[tuple[str, ReplicaSpec | None]]) -> list[tuple[str, UUID]]:
    """The registries these specs (each with where it sits in the request) pick their images
    from, each with the field that names it."""
    return [
        (f"{at}/imageRegistryId", spec.image_registry_id)
        for at, spec in specs
        if spec is not None and spec.image_registry_id is not None
    ]


async def check_usable(
    named: Iterable[tuple[str, UUID]],
    lineage: tuple[ScopeRef, ...],
    *,
    streams: StreamLoader,
    refuse: Refusal,
) -> None:
    """Each registry named must be live and in the scope (`lineage[0]`) or above it, from the
    write side's streams; `refuse(field, reason)` is raised for the first that is not."""
    for field, registry_id in named:
        found = _fold((await streams.load(registry_id)).events)
        if found is None or found.deleted or found.meta.scope_ref not in lineage:
            raise refuse(field, "no such registry in this scope or above")


def _fold(events: Iterable[Event]) -> Registry | None:
    return fold_as(registries.fold, events)


def _given(values: dict[str, str | None]) -> dict[str, str] | None:
    given = {name: value for name, value in values.items() if value is not None}
    return given or None


def _claim(meta: AssetMeta) -> NameClaim:
    scope = meta.scope_ref
    return NameClaim(
        namespace=f"{registries.KIND}@{scope.kind}:{scope.id}", name=meta.name, field="/meta/name"
    )


async def _written(
    store: EventStore,
    stream: Stream,
    events: Sequence[RegistryEvent],
    metadata: EventMetadata,
    *,
    values: dict[str, str] | None,
) -> Stamped[Registry]:
    """Append a registry's new events (its name claimed as they leave it, a new password
    sealed with them); the registry as it then is."""
    state = registries.fold((*stream.events, *events))
    assert state is not None
    result = await store.append(
        Append(
            state.id,
            events,
            expected_version=stream.version,
            metadata=metadata,
            name=_claim(state.meta),
            secret=None if values is None else CredentialValues(values),
        )
    )
    return Stamped(state=state, stamps=stamps.appended(stream, result, metadata))
