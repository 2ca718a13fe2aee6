"""What a caller's storage class request does, shared by the API's handlers
(infra/http/storage_classes.py) and the console (whose Volume step offers a cluster's classes and
the fields their configurations allow): Run:ai's bodies and shapes."""

from typing import Literal
from uuid import UUID

import msgspec

from domain.cluster_specs import (
    StorageClassCustomization,
    StorageClassName,
    StorageClassPermissions,
    StorageClassRules,
    StorageClassSpec,
)
from domain.org_units import UnknownScopeError
from domain.storage_classes import NONE, StorageClassConfiguration
from infra.http.adapters import Adapters
from infra.http.asset_schemas import RequestBody
from infra.http.callers import Caller, seen_scopes
from infra.http.org_unit_schemas import TENANT_ID
from projections.queries import storage_class_reads as read
from projections.storage_class_catalogue import ConfigurationRow, StorageClassRow


class StorageClassSpecBody(StorageClassSpec, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Run:ai's StorageClassSpec, as a cluster (or its admin) reports a class."""


class ConfigurationCreation(RequestBody, frozen=True, kw_only=True):
    tenant_id: int | None = None
    scope_type: Literal["cluster"] = "cluster"
    scope_id: UUID
    name: StorageClassName
    permissions: StorageClassPermissions | None = None
    customization: StorageClassCustomization | None = None


class ConfigurationUpdate(RequestBody, frozen=True, kw_only=True):
    permissions: StorageClassPermissions | None = None
    customization: StorageClassCustomization | None = None


class CustomizationPatch(StorageClassCustomization, frozen=True, kw_only=True):
    attributes_to_remove: tuple[str, ...] | None = None


class ConfigurationPatch(RequestBody, frozen=True, kw_only=True):
    permissions: StorageClassPermissions | None = None
    customization: CustomizationPatch | None = None


class Shown(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """Response structs: camelCase, unset fields left out."""


class Configuration(Shown, frozen=True, kw_only=True):
    """Run:ai's StorageClassConfiguration."""

    id: UUID
    tenant_id: int
    scope_type: Literal["cluster"]
    scope_id: UUID
    name: str
    permissions: StorageClassPermissions | None = None
    customization: StorageClassCustomization | None = None


class ConfigurationList(
    msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"
):
    storage_class_configurations: list[Configuration]
    next: int | None = None


class StorageClassV2(Shown, frozen=True, kw_only=True):
    cluster_id: UUID
    storage_class_name: str
    spec: StorageClassSpec
    permissions: StorageClassPermissions | None = None
    customization: StorageClassCustomization | None = None


class SpecV1(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    provisioner: str | None = None
    allow_volume_expansion: bool | None = None
    is_default: bool


class StorageClass1(msgspec.Struct, frozen=True, kw_only=True):
    """Run:ai's StorageClass1: snake_case, its spec as `Spec`."""

    cluster_id: UUID
    storage_class_name: str
    Spec: SpecV1


def rules_of(
    permissions: StorageClassPermissions | None, customization: StorageClassCustomization | None
) -> StorageClassRules:
    """A body's rules (a PATCH's customization without its `attributesToRemove`)."""
    custom = None
    if customization is not None:
        fields = msgspec.structs.asdict(customization)
        fields.pop("attributes_to_remove", None)
        custom = StorageClassCustomization(**fields)
    return StorageClassRules(permissions=permissions, customization=custom)


def configuration_shown(row: ConfigurationRow | StorageClassConfiguration) -> Configuration:
    configuration_id = row.configuration_id if isinstance(row, ConfigurationRow) else row.id
    return Configuration(
        id=configuration_id,
        tenant_id=TENANT_ID,
        scope_type="cluster",
        scope_id=row.cluster_id,
        name=row.name,
        permissions=row.rules.permissions,
        customization=row.rules.customization,
    )


async def cluster_classes(
    request: Caller, adapters: Adapters, cluster_id: UUID, name: str | None, *, include_none: bool
) -> list[StorageClassRow]:
    """The classes of a cluster the caller sees (UnknownScopeError naming `clusterId` when it
    sees none such), Run:ai's `runai-none` last when asked for."""
    if not read.visible(cluster_id, await seen_scopes(request)):
        raise UnknownScopeError("cluster", str(cluster_id), field="clusterId")
    found = await read.classes(adapters.reads, cluster_id, name)
    if include_none and name in (None, NONE):
        none = StorageClassRow(
            cluster_id=cluster_id, name=NONE, spec=StorageClassSpec(is_default=False), rules=None
        )
        found.append(none)
    return found


def v2(row: StorageClassRow) -> StorageClassV2:
    rules = row.rules or StorageClassRules()
    return StorageClassV2(
        cluster_id=row.cluster_id,
        storage_class_name=row.name,
        spec=row.spec,
        permissions=rules.permissions,
        customization=rules.customization,
    )


def v1(row: StorageClassRow) -> StorageClass1:
    spec = row.spec
    return StorageClass1(
        cluster_id=row.cluster_id,
        storage_class_name=row.name,
        Spec=SpecV1(
            provisioner=spec.provisioner,
            allow_volume_expansion=spec.allow_volume_expansion,
            is_default=spec.is_default,
        ),
    )


async def volume_choices(
    request: Caller, adapters: Adapters, cluster_id: UUID | None
) -> list[StorageClassRow]:
    """The classes a form's new volume may pick from (none for a template with no cluster, or
    a cluster out of sight)."""
    if cluster_id is None or not read.visible(cluster_id, await seen_scopes(request)):
        return []
    return await read.classes(adapters.reads, cluster_id)
