"""Read model of assets: one row per live environment, compute resource, data source, credential
and registry, and Run:ai's list filters over them."""

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Final, cast
from uuid import UUID

import asyncpg
import msgspec

from domain.assets import kind_of
from domain.events import (
    ComputeCreated,
    ComputeDeleted,
    ComputeUpdated,
    CredentialCreated,
    CredentialDeleted,
    CredentialUpdated,
    DataSourceCreated,
    DataSourceDeleted,
    DataSourceUpdated,
    EnvironmentCreated,
    EnvironmentDeleted,
    EnvironmentUpdated,
    RecordedEvent,
    RegistryCreated,
    RegistryDeleted,
    RegistryUpdated,
)
from domain.specs import (
    ComputeSpec,
    ConfigMapSpec,
    CredentialSpec,
    DataSourceSpec,
    DistFramework,
    EnvironmentSpec,
    GitSpec,
    HostPathSpec,
    NfsSpec,
    PvcSpec,
    RegistrySpec,
    S3Spec,
    SecretVolumeSpec,
)
from domain.values import AssetMeta, ScopeKind, ScopeRef
from projections.executor import Executor

NAME: Final = "asset_catalogue"

_encode = msgspec.json.Encoder().encode
_decode_meta = msgspec.json.Decoder(AssetMeta).decode
CatalogueSpec = (
    EnvironmentSpec
    | ComputeSpec
    | CredentialSpec
    | NfsSpec
    | PvcSpec
    | S3Spec
    | GitSpec
    | HostPathSpec
    | ConfigMapSpec
    | SecretVolumeSpec
    | RegistrySpec
)
DATA_SOURCE_SPECS: Final[Mapping[str, type[DataSourceSpec]]] = {
    "nfs": NfsSpec,
    "pvc": PvcSpec,
    "s3": S3Spec,
    "git": GitSpec,
    "hostPath": HostPathSpec,
    "config-map": ConfigMapSpec,
    "secret-volume": SecretVolumeSpec,
}
SPECS: Final[Mapping[str, type[CatalogueSpec] | type[DataSourceSpec]]] = {
    **DATA_SOURCE_SPECS,
    "environment": EnvironmentSpec,
    "compute": ComputeSpec,
    "accessKey": CredentialSpec,
    "password": CredentialSpec,
    "dockerRegistry": CredentialSpec,
    "genericSecret": CredentialSpec,
    "ngcApiKey": CredentialSpec,
    "registry": RegistrySpec,
}
CREDENTIAL_KINDS: Final = ("accessKey", "password", "dockerRegistry", "genericSecret", "ngcApiKey")


class AssetRow(msgspec.Struct, frozen=True, kw_only=True):
    asset_id: UUID
    kind: str  # an AssetKind or a CredentialKind
    meta: AssetMeta
    spec: CatalogueSpec
    created_at: datetime
    created_by: str
    updated_at: datetime
    updated_by: str
    version: int


class AssetFilter(msgspec.Struct, frozen=True, kw_only=True):
    """Run:ai's asset list parameters (reference §10.2)."""

    name: str | None = None
    scope: ScopeKind | None = None
    project_id: int | None = None
    department_id: str | None = None
    cluster_id: UUID | None = None
    include_descendants: bool = False
    distributed_framework: DistFramework | None = None
    is_distributed: bool | None = None
    is_training: bool | None = None
    is_workspace: bool | None = None
    is_inference: bool | None = None
    asset_ids: frozenset[UUID] | None = None  # data sources: only these

    @property
    def target(self) -> ScopeRef | None:
        """The scope the ids name: the most specific one given."""
        if self.project_id is not None:
            return ScopeRef("project", str(self.project_id))
        if self.department_id is not None:
            return ScopeRef("department", self.department_id)
        if self.cluster_id is not None:
            return ScopeRef("cluster", str(self.cluster_id))
        return None


async def apply(conn: Executor, recorded: RecordedEvent) -> None:
    """Fold one event in; safe to run twice (updates carry the stream version)."""
    at, by, version = recorded.recorded_at, recorded.metadata.actor_subject, recorded.version
    match recorded.event:
        case (
            EnvironmentCreated() | ComputeCreated() | CredentialCreated() | DataSourceCreated()
            | RegistryCreated() as e
        ):  # fmt: skip
            kind = _kind(e)
            await conn.execute(
                "INSERT INTO asset_catalogue (asset_id, kind, name, meta, spec, created_at,"
                " created_by, updated_at, updated_by, version)"
                " VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7, $6, $7, $8)"
                " ON CONFLICT (asset_id) DO NOTHING",
                e.asset_id, kind, e.meta.name, _encode(e.meta).decode(),
                _encode(e.spec).decode(), at, by, version,
            )  # fmt: skip
        case CredentialUpdated() as e:
            await _rename(conn, e.asset_id, e.name, e.description, at, by, version)
        case EnvironmentUpdated() | ComputeUpdated() | DataSourceUpdated() | RegistryUpdated() as e:
            await _rename(conn, e.asset_id, e.name, e.description, at, by, version)
            await conn.execute(
                "UPDATE asset_catalogue SET spec = $2::jsonb WHERE asset_id = $1 AND version = $3",
                e.asset_id, _encode(e.spec).decode(), version,
            )  # fmt: skip
        case (
            EnvironmentDeleted() | ComputeDeleted() | CredentialDeleted() | DataSourceDeleted()
            | RegistryDeleted()
        ) as e:  # fmt: skip
            await conn.execute("DELETE FROM asset_catalogue WHERE asset_id = $1", e.asset_id)
        case _:
            pass  # not an event this read model cares about


def _kind(
    event: EnvironmentCreated | ComputeCreated | CredentialCreated | DataSourceCreated
    | RegistryCreated,
) -> str:  # fmt: skip
    if isinstance(event, CredentialCreated):
        return event.kind
    if isinstance(event, RegistryCreated):
        return "registry"
    return kind_of(event.spec)


async def _rename(
    conn: Executor,
    asset_id: UUID,
    name: str,
    description: str | None,
    at: datetime,
    by: str,
    version: int,
) -> None:
    """Move name and description to the event's; an older (replayed) event changes nothing."""
    row = await conn.fetchrow(
        "SELECT meta::text AS meta FROM asset_catalogue WHERE asset_id = $1", asset_id
    )
    if row is None:
        return
    meta = msgspec.structs.replace(_decode_meta(row["meta"]), name=name, description=description)
    await conn.execute(
        "UPDATE asset_catalogue SET name = $2, meta = $3::jsonb, updated_at = $4,"
        " updated_by = $5, version = $6 WHERE asset_id = $1 AND version < $6",
        asset_id, name, _encode(meta).decode(), at, by, version,
    )  # fmt: skip


_COLUMNS: Final = """asset_id, kind, meta::text AS meta, spec::text AS spec, created_at,
    created_by, updated_at, updated_by, version"""


def _row(record: asyncpg.Record) -> AssetRow:
    return AssetRow(
        asset_id=record["asset_id"],
        kind=record["kind"],
        meta=_decode_meta(record["meta"]),
        spec=cast(CatalogueSpec, msgspec.json.decode(record["spec"], type=SPECS[record["kind"]])),
        created_at=record["created_at"],
        created_by=record["created_by"],
        updated_at=record["updated_at"],
        updated_by=record["updated_by"],
        version=record["version"],
    )


async def list_assets(conn: Executor, kind: str, name: str | None = None) -> list[AssetRow]:
    rows = await conn.fetch(
        f"SELECT {_COLUMNS} FROM asset_catalogue WHERE kind = $1"
        " AND ($2::text IS NULL OR name = $2) ORDER BY name, asset_id",
        kind,
        name,
    )
    return [_row(r) for r in rows]


async def get_asset(conn: Executor, kind: str, asset_id: UUID) -> AssetRow | None:
    row = await conn.fetchrow(
        f"SELECT {_COLUMNS} FROM asset_catalogue WHERE kind = $1 AND asset_id = $2",
        kind,
        asset_id,
    )
    return None if row is None else _row(row)


def select(
    rows: Sequence[AssetRow],
    wanted: AssetFilter,
    lineages: Mapping[ScopeRef, Sequence[ScopeRef]],
) -> list[AssetRow]:
    """The rows Run:ai's list parameters ask for. A scope id selects that scope's assets and its
    ancestors' (usable there); `scope` alone, or equal to the id's kind, selects exactly that
    scope; `includeDescendants` adds the assets of every scope below."""
    target = wanted.target
    above = set(lineages.get(target, ())) if target is not None else set()
    return [
        row
        for row in rows
        if _in_scope(row.meta, wanted, target, above)
        and _supports(row.meta, wanted)
        and (wanted.asset_ids is None or row.asset_id in wanted.asset_ids)
    ]


def _in_scope(
    meta: AssetMeta, wanted: AssetFilter, target: ScopeRef | None, above: set[ScopeRef]
) -> bool:
    if wanted.name is not None and meta.name != wanted.name:
        return False
    if target is None:
        return wanted.scope is None or meta.scope == wanted.scope
    if wanted.scope is not None and wanted.scope == target.kind and not wanted.include_descendants:
        return meta.scope_ref == target
    if wanted.include_descendants and target in meta.lineage:
        return True
    return meta.scope_ref in above and (wanted.scope is None or meta.scope == wanted.scope)


def _supports(meta: AssetMeta, wanted: AssetFilter) -> bool:
    types = meta.workload_supported_types
    asked = {
        "distributed": wanted.is_distributed,
        "training": wanted.is_training,
        "workspace": wanted.is_workspace,
        "inference": wanted.is_inference,
    }
    for field, value in asked.items():
        if value is not None and bool(types and getattr(types, field)) != value:
            return False
    if wanted.distributed_framework is not None:
        return types is not None and types.dist_framework == wanted.distributed_framework
    return True
