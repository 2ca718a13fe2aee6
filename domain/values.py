"""Value objects: plain, frozen data shared by events and aggregates."""

from typing import Final, Literal
from uuid import UUID

import msgspec

from domain.specs import WorkloadSupportedTypes

Role = Literal["admin", "editor", "submitter", "viewer"]
ScopeKind = Literal["tenant", "cluster", "department", "project"]


class Grant(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A role on a scope; it covers the scope and everything below it."""

    role: Role
    scope_kind: ScopeKind
    scope_id: str


TENANT_ADMIN: Final = Grant(role="admin", scope_kind="tenant", scope_id="tenant")


class AccessRule(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A grant given after creation, under an id by which it is later revoked."""

    rule_id: int
    grant: Grant


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


def quota_total(
    resources: tuple[NodePoolResources, ...], resource: Literal["gpu", "cpu", "memory"]
) -> float | None:
    """A unit's total quota of one resource (Run:ai's `totalResources`): the sum of what it
    deserves in each node pool, in their order; None when no pool says."""
    quotas = [getattr(r, resource) for r in resources]
    known = [float(q.deserved) for q in quotas if q is not None and q.deserved is not None]
    return sum(known) if known else None


AssetKind = Literal[
    "environment", "compute", "nfs", "pvc", "s3", "git", "hostPath", "config-map", "secret-volume"
]


class Placement(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """Where a named thing (asset, template) lives. The scope never changes, and neither do the
    ids of its ancestors, so they are recorded once, as the write side found them."""

    name: str
    description: str | None = None
    scope: ScopeKind
    cluster_id: UUID | None = None
    department_id: str | None = None
    project_id: int | None = None

    @property
    def lineage(self) -> tuple[ScopeRef, ...]:
        """The scope, then its ancestors up to the tenant."""
        chain = []
        if self.project_id is not None:
            chain.append(ScopeRef("project", str(self.project_id)))
        if self.department_id is not None:
            chain.append(ScopeRef("department", self.department_id))
        if self.cluster_id is not None:
            chain.append(ScopeRef("cluster", str(self.cluster_id)))
        return (*chain, TENANT)

    @property
    def scope_ref(self) -> ScopeRef:
        match self.scope:
            case "project":
                return ScopeRef("project", str(self.project_id))
            case "department":
                return ScopeRef("department", str(self.department_id))
            case "cluster":
                return ScopeRef("cluster", str(self.cluster_id))
            case _:
                return ScopeRef("tenant")


class AssetMeta(Placement, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """An asset's name and placement, and what it is for."""

    workload_supported_types: WorkloadSupportedTypes | None = None
    auto_delete: bool = False
    private: bool = False


class TemplateMeta(Placement, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """A template's name and placement."""
