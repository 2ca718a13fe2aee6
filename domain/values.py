"""Value objects: plain, frozen data shared by events and aggregates."""

from typing import Final, Literal

import msgspec

Role = Literal["admin", "editor", "submitter", "viewer"]
ScopeKind = Literal["tenant", "cluster", "department", "project"]


class Grant(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A role on a scope; it covers the scope and everything below it."""

    role: Role
    scope_kind: ScopeKind
    scope_id: str


TENANT_ADMIN: Final = Grant(role="admin", scope_kind="tenant", scope_id="tenant")


class ScopeRef(msgspec.Struct, frozen=True, order=True):
    """A node of the org tree: tenant -> cluster -> department -> project. The tenant's id is ""."""

    kind: ScopeKind
    id: str = ""


TENANT: Final = ScopeRef("tenant")


class QuotaResource(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """One resource's quota in a node pool (Run:ai's `Resource`)."""

    deserved: float | None = None
    limit: float | None = None
    over_quota_weight: float | None = None
    units: str | None = None  # memory only: "Mib", "MB" or "GB"


class NodePoolRef(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    id: str
    name: str | None = None


class NodePoolResources(
    msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"
):
    """An org unit's quota in one node pool (Run:ai's `ResourcesNullable`)."""

    node_pool: NodePoolRef | None = None
    gpu: QuotaResource | None = None
    cpu: QuotaResource | None = None
    memory: QuotaResource | None = None
