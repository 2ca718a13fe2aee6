"""Distributed policies in Run:ai's shapes (docs/api/policies.md): a scope's answer is what it sets
(`policy`) and what is in force there (`effective`), only the latter when it sets nothing. Also:
domain/policies.py, services/policies.py, projections/policy_catalogue.py."""

from datetime import datetime
from typing import Annotated, Any, Final, Literal
from uuid import UUID

import msgspec
from litestar import delete, get, patch, put
from litestar.di import NamedDependency
from litestar.params import JSONBody, QueryParameter
from msgspec import Meta

from domain.commands import ApplyPolicy, ChangePolicy, DeletePolicy
from domain.name_rules import DISPLAY
from domain.org_units import UnknownScopeError
from domain.policies import Effective, Policy
from domain.values import ScopeRef
from infra.http import policy_schemas as schemas
from infra.http.adapters import Adapters
from infra.http.asset_schemas import RequestBody
from infra.http.callers import Caller, actor, visibility
from infra.http.numerals import natural
from infra.http.openapi_document import named
from projections import policy_catalogue as catalogue
from projections.policy_catalogue import PolicyRow
from projections.queries import policy_reads as queries
from services import policies as use_cases
from services.errors import InvalidRequestError
from services.ports.event_store import Written
from services.stamps import Stamps

PATH: Final = "/api/v2/policy/distributed"
LIST: Final = "/api/v2/policy"
TAGS: Final = ["Policy"]
ScopeKind = Literal["tenant", "cluster", "department", "project"]


class PolicyCreationFields(RequestBody, frozen=True, kw_only=True):
    name: Annotated[str, Meta(min_length=1), named(DISPLAY)] | None = None
    scope: ScopeKind
    # An integer in Run:ai's document; a string where its other ids are (runapy sends either).
    project_id: int | str | None = None
    department_id: str | None = None
    cluster_id: UUID | None = None


class OverwriteRequest(RequestBody, frozen=True, kw_only=True):
    meta: PolicyCreationFields
    policy: dict[str, Any] | None = None


class ChangeRequest(RequestBody, frozen=True, kw_only=True):
    meta: PolicyCreationFields
    policy: dict[str, Any] | None = None
    reset: list[str] | None = None


class PolicyMeta(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    id: UUID
    name: str
    scope: str
    cluster_id: UUID | None = None
    department_id: str | None = None
    project_id: int | None = None  # an integer in Run:ai's document
    created_by: str
    created_at: datetime
    updated_by: str
    updated_at: datetime


class DistributedPolicy(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Run:ai's DistributedPolicyV2."""

    meta: PolicyMeta | None = None
    policy: dict[str, Any] | None = None
    effective: dict[str, Any]


class PolicyListEntry(msgspec.Struct, frozen=True, kw_only=True):
    type: str
    meta: PolicyMeta
    status: dict[str, Any]


class PolicyList(msgspec.Struct, frozen=True, kw_only=True):
    policies: list[PolicyListEntry]


ScopeParam = Annotated[ScopeKind, QueryParameter(name="scope")]
Department = Annotated[str | None, QueryParameter(name="departmentId")]
Project = Annotated[str | None, QueryParameter(name="projectId")]
Cluster = Annotated[UUID | None, QueryParameter(name="clusterId")]
ValidateOnly = Annotated[bool, QueryParameter(name="validateOnly")]
Approve = Annotated[bool | None, QueryParameter(name="approveClusterDeletion")]


@get(PATH, tags=TAGS, operation_id="get_distributed_policy_v2")
async def get_policy(
    request: Caller,
    adapters: NamedDependency[Adapters],
    scope_kind: ScopeParam,
    department_id: Department = None,
    project_id: Project = None,
    cluster_id: Cluster = None,
) -> DistributedPolicy:
    ref = scope_of(scope_kind, cluster_id, department_id, project_id, "/")
    seen, lineages = await visibility(request)
    lineage = lineages.get(ref)
    if lineage is None or ref not in seen:
        raise UnknownScopeError(ref.kind, ref.id, field=_param(ref))
    held = await queries.of_scopes(adapters.reads, lineage)
    own = held.get(ref)
    in_force = catalogue.in_force(lineage, held)
    if own is None:
        return DistributedPolicy(effective=schemas.effective_wire(in_force))
    return DistributedPolicy(
        meta=_meta_of_row(own),
        policy=schemas.wire_of(own.body),
        effective=schemas.effective_wire(in_force),
    )


@put(PATH, tags=TAGS, operation_id="overwrite_distributed_policy_v2")
async def overwrite(
    request: Caller,
    data: JSONBody[OverwriteRequest],
    adapters: NamedDependency[Adapters],
    validate_only: ValidateOnly = False,
    approve_cluster_deletion: Approve = None,
) -> DistributedPolicy:
    meta = data.meta
    command = ApplyPolicy(
        scope=scope_of_meta(meta),
        name=meta.name or f"{meta.scope}-distributed",
        body=schemas.body_of(data.policy),
        metadata=actor(request),
        validate_only=validate_only,
    )
    async with adapters.streams.session() as session:
        applied = await use_cases.apply_policy(command, streams=session)
    return _written(applied)


@patch(PATH, tags=TAGS, operation_id="update_distributed_policy_v2")
async def change(
    request: Caller,
    data: JSONBody[ChangeRequest],
    adapters: NamedDependency[Adapters],
    validate_only: ValidateOnly = False,
    approve_cluster_deletion: Approve = None,
) -> DistributedPolicy:
    meta = data.meta
    command = ChangePolicy(
        scope=scope_of_meta(meta),
        name=meta.name,
        body=schemas.body_of(data.policy),
        reset=tuple(_reset(data.reset or [])),
        metadata=actor(request),
        validate_only=validate_only,
    )
    async with adapters.streams.session() as session:
        applied = await use_cases.change_policy(command, streams=session)
    return _written(applied)


@delete(PATH, status_code=204, tags=TAGS, operation_id="delete_distributed_policy")
async def remove(
    request: Caller,
    adapters: NamedDependency[Adapters],
    scope_kind: ScopeParam,
    department_id: Department = None,
    project_id: Project = None,
    cluster_id: Cluster = None,
    approve_cluster_deletion: Approve = None,
) -> None:
    ref = scope_of(scope_kind, cluster_id, department_id, project_id, "/")
    command = DeletePolicy(scope=ref, metadata=actor(request))
    async with adapters.streams.session() as session:
        await use_cases.delete_policy(command, streams=session)


@get(LIST, tags=TAGS, operation_id="list_policies")
async def list_policies(
    request: Caller,
    adapters: NamedDependency[Adapters],
    workload_type: Annotated[
        Literal["Workspace", "Training", "Distributed", "Inference", "DistributedInference"] | None,
        QueryParameter(name="workloadType"),
    ] = None,
    scope_kind: Annotated[ScopeKind | None, QueryParameter(name="scope")] = None,
    department_id: Department = None,
    project_id: Project = None,
    cluster_id: Cluster = None,
    include_fallback_policies: Annotated[
        bool | None, QueryParameter(name="includeFallbackPolicies")
    ] = None,
) -> PolicyList:
    """The policies of the scopes the caller sees (only distributed ones are kept here), by
    scope and the ids given."""
    if workload_type not in (None, "Distributed"):
        return PolicyList(policies=[])
    seen, _ = await visibility(request)
    rows = await queries.every(adapters.reads)
    wanted = {"cluster": cluster_id and str(cluster_id), "department": department_id,
              "project": project_id}  # fmt: skip
    chosen = [
        row
        for row in rows
        if row.scope in seen
        and (scope_kind is None or row.scope.kind == scope_kind)
        and (wanted["cluster"] is None or str(row.placement.cluster_id) == wanted["cluster"])
        and (wanted["department"] is None or row.placement.department_id == wanted["department"])
        and (wanted["project"] is None or row.placement.project_id == wanted["project"])
    ]
    return PolicyList(
        policies=[
            PolicyListEntry(type="distributed", meta=_meta_of_row(row), status={}) for row in chosen
        ]
    )


def scope_of(
    kind: ScopeKind,
    cluster_id: UUID | None,
    department_id: str | None,
    project_id: str | None,
    at: str,
) -> ScopeRef:
    """The scope a request names by its kind and that kind's id."""
    if kind == "tenant":
        return ScopeRef("tenant")
    given = {"cluster": None if cluster_id is None else str(cluster_id),
             "department": department_id, "project": project_id}[kind]  # fmt: skip
    if not given:
        raise InvalidRequestError(f"{at}{kind}Id", f"the {kind}'s id, for scope {kind}")
    return ScopeRef(kind, given)


def scope_of_meta(meta: PolicyCreationFields) -> ScopeRef:
    project = None if meta.project_id is None else str(meta.project_id)
    return scope_of(meta.scope, meta.cluster_id, meta.department_id, project, "/meta/")


def _param(scope: ScopeRef) -> str:
    return f"/{scope.kind}Id" if scope.kind != "tenant" else "/scope"


def _reset(paths: list[str]) -> list[str]:
    for i, path in enumerate(paths):
        head = path.split(".", 1)[0]
        if head not in ("worker", "master"):
            raise InvalidRequestError(f"/reset/{i}", "a field's path, such as worker.compute.gpu")
    return paths


def _meta(policy: Policy | PolicyRow, stamps: Stamps) -> PolicyMeta:
    return PolicyMeta(
        id=policy.policy_id,
        name=policy.name,
        scope=policy.scope.kind,
        cluster_id=policy.placement.cluster_id,
        department_id=policy.placement.department_id,
        project_id=_project_id(policy.placement.project_id),
        created_by=stamps.created.by,
        created_at=stamps.created.at,
        updated_by=stamps.updated.by,
        updated_at=stamps.updated.at,
    )


def _meta_of_row(row: PolicyRow) -> PolicyMeta:
    created, updated = (
        Written(row.created_at, row.created_by),
        Written(row.updated_at, row.updated_by),
    )
    return _meta(row, Stamps(created=created, updated=updated))


def _project_id(given: str | None) -> int | None:
    return None if given is None else natural(given)


def _written(applied: use_cases.Applied) -> DistributedPolicy:
    in_force: Effective = applied.effective
    return DistributedPolicy(
        meta=None if applied.stamps is None else _meta(applied.policy, applied.stamps),
        policy=schemas.wire_of(applied.policy.body),
        effective=schemas.effective_wire(in_force),
    )


POLICY_ROUTES: Final = (get_policy, overwrite, change, remove, list_policies)
