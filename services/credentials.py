"""Credential use cases. Values go straight from the request to the vault (sealed, in the creating
event's transaction); events carry a reference and a keyed fingerprint only. Also:
domain/credentials.py, infra/http/credentials.py."""

from collections.abc import Sequence
from uuid import UUID

from domain import credentials
from domain.assets import AssetNotFoundError
from domain.commands import CreateCredential, DeleteCredential, UpdateCredential
from domain.credentials import Credential
from domain.events import Event, EventMetadata
from domain.values import AssetMeta, ScopeRef
from services import access, idempotency, stamps, uses
from services.assets import in_scope, placed, placing
from services.kinds import live_scope
from services.ports.event_store import Append, EventStore, NameClaim, StreamLoader
from services.ports.kept_secrets import (
    CredentialValues,
    CredentialValuesDestroyed,
    CredentialVault,
)
from services.ports.name_lookups import NameHolders
from services.prefetch import Prefetched, prefetch
from services.races import decided_again
from services.stamps import Stamped


@decided_again
async def create_credential(
    cmd: CreateCredential, *, store: EventStore, vault: CredentialVault
) -> Stamped[Credential]:
    """Create the credential, its values sealed with it; return it as written. Sent again
    under the same idempotency key, the first answer, with nothing written."""
    values = cmd.values.reveal()
    given = {name: value for name, value in values.items() if value is not None}

    async def decide(remembered: bool) -> idempotency.Decision:
        loader = await prefetch(store, placing(cmd), remembered=remembered)
        meta = await placed(cmd, "create credentials", streams=loader)
        secret = vault.reference(cmd.asset_id, given) if given else None
        return idempotency.Decision(
            events=credentials.create(
                None, cmd.asset_id, cmd.kind, meta, cmd.public, values, secret
            ),
            name=_claim(meta),
            uses=in_scope(cmd.scope, f"{cmd.kind} {cmd.name}"),
            checked=loader.checked,
        )

    _, creation = await idempotency.create_decided(
        store,
        cmd.asset_id,
        decide,
        request=cmd,
        secrets=vault.reference(cmd.asset_id, given) if given and cmd.keyed else None,
        keyed=cmd.keyed,
        metadata=cmd.metadata,
        secret=CredentialValues(given) if given else None,
    )
    return Stamped(state=_after((), creation.events), stamps=creation.stamps)


@decided_again
async def update_credential(
    cmd: UpdateCredential, *, store: EventStore, reads: StreamLoader | None = None
) -> Stamped[Credential]:
    """Rename (no name given: it stays) or re-describe; the values stay as they were. `reads`:
    what the request's visibility check read a moment before (services/assets.py
    `update_asset`)."""
    loader = reads or store
    stream = await loader.load(cmd.asset_id)
    current = credentials.live(credentials.fold(stream.events), cmd.kind, cmd.asset_id)
    name = current.meta.name if cmd.name is None else cmd.name
    await access.require(
        cmd.metadata,
        current.meta.lineage,
        "editor",
        "update credentials",
        streams=loader,
        unseen=AssetNotFoundError(cmd.kind, cmd.asset_id),
    )
    events = credentials.update(
        current, cmd.kind, cmd.asset_id, name=name, description=cmd.description
    )
    if not events:
        return Stamped(state=current, stamps=stamps.loaded(stream))
    updated = _after(stream.events, events)
    result = await store.append(
        Append(
            cmd.asset_id,
            events,
            expected_version=stream.version,
            metadata=cmd.metadata,
            name=_claim(updated.meta),
        )
    )
    return Stamped(state=updated, stamps=stamps.appended(stream, result, cmd.metadata))


async def require_visible(
    kind: str, asset_id: UUID, actor: EventMetadata, streams: StreamLoader
) -> None:
    """A credential of this kind that the actor may not see is missing (AssetNotFoundError),
    before a change's body is read."""
    await access.require_visible(
        asset_id,
        actor,
        streams=streams,
        scope_in=live_scope(credentials.fold, kind),
        missing=AssetNotFoundError(kind, asset_id),
    )


@decided_again
async def delete_credential(cmd: DeleteCredential, *, store: EventStore) -> None:
    """Refused while something uses it (decided in the deletion's own transaction); otherwise
    its values are destroyed with it."""
    stream = await store.load(cmd.asset_id)
    state = credentials.fold(stream.events)
    if state is None or state.kind != cmd.kind:
        raise AssetNotFoundError(cmd.kind, cmd.asset_id)
    # A deleted credential keeps its scope, so deleting it again is checked (and a no-op) alike.
    await access.require(
        cmd.metadata,
        state.meta.lineage,
        "editor",
        "delete credentials",
        streams=store,
        unseen=AssetNotFoundError(cmd.kind, cmd.asset_id),
    )
    await uses.delete_unused(
        store,
        cmd.asset_id,
        stream,
        credentials.delete(state, cmd.kind, cmd.asset_id),
        metadata=cmd.metadata,
        user=f"{cmd.kind} {state.meta.name}",
        in_use=lambda users: credentials.CredentialInUseError(cmd.asset_id, users),
        secret=CredentialValuesDestroyed(),
    )


async def pulled_with(
    lineage: Sequence[ScopeRef], *, holders: NameHolders, streams: Prefetched
) -> list[UUID]:
    """The docker-registry credentials a scope's workloads pull their images with: those of the
    scope and its ancestors (`lineage`) that are not private, by id. Decided on the write side's
    own state: the names the scopes' credentials hold, and the credentials' streams."""
    held = sorted(await holders([_namespace(scope) for scope in lineage]))
    await streams.add(held)  # in one round trip
    found = [credentials.fold((await streams.load(i)).events) for i in held]
    return [
        c.id
        for c in found
        if c is not None and not c.deleted and c.kind == "dockerRegistry" and not c.meta.private
    ]


def _claim(meta: AssetMeta) -> NameClaim:
    return NameClaim(namespace=_namespace(meta.scope_ref), name=meta.name, field="/meta/name")


def _namespace(scope: ScopeRef) -> str:
    # Credentials of all kinds share a scope's names: each becomes a cluster secret there.
    return f"credential@{scope.kind}:{scope.id}"


def _after(history: Sequence[Event], events: Sequence[Event]) -> Credential:
    state = credentials.fold((*history, *events))
    assert state is not None
    return state
