"""`/api/v1/authorization/roles` and `/access-rules` in Run:ai's shapes: a rule gives an application
(subject type `app` or `service-account`) a role on a scope, granted by admins there or above.
Also: services/access_rules.py, projections/access_rules.py."""

from datetime import UTC, datetime
from typing import Annotated, Final, Literal
from uuid import UUID

import msgspec
from litestar import delete, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody, QueryParameter

from domain.access import ROLE_DESCRIPTIONS, ROLE_IDS
from domain.applications import AccessRuleNotFoundError
from domain.commands import CreateAccessRule, DeleteAccessRule, SubjectKind
from domain.values import Grant, Role, ScopeKind
from infra.http.adapters import Adapters
from infra.http.callers import Caller, actor, creation_id, seen_scopes
from infra.http.lists import Count, FilterBy, Search, conditions_of
from infra.http.openapi_document import NOT_NEGATIVE, DisplayName, ScopeOfRequest, never, only
from infra.http.permissions import Permission, permissions_of
from projections.access_rules import AccessRuleRow
from projections.queries import access_rule_reads as queries
from services.access_rules import create_access_rule, delete_access_rule
from services.errors import InvalidRequestError

TENANT_ID: Final = 1
CREATED_AT: Final = datetime(2026, 1, 1, tzinfo=UTC)  # the built-in roles' fixed birthday

SubjectType = Literal["user", "app", "service-account", "group"]


class AccessRuleCreationRequest(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, rename="camel"
):
    subject_id: DisplayName
    subject_type: Annotated[SubjectType, never("group")]
    role_id: Annotated[int, only(*ROLE_IDS)]
    scope_id: str
    scope_type: ScopeOfRequest
    cluster_id: UUID | None = None


class AccessRuleStatus(msgspec.Struct, frozen=True):
    phase: str = "Ready"


class ShownRule(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """What every access rule shows, whichever list shows it: whose, which role where, and
    their names (Run:ai's AccessRuleCreationFields and EnrichmentDataFields)."""

    subject_id: str
    subject_type: str
    role_id: int
    scope_id: str
    scope_type: str
    role_name: str
    scope_name: str
    tenant_id: int


class AccessRuleResponse(ShownRule, frozen=True, kw_only=True):
    id: int
    created_at: datetime
    updated_at: datetime
    created_by: str
    status: AccessRuleStatus


class AccessRuleList(msgspec.Struct, frozen=True, rename="camel"):
    total_records: int
    display_records: int
    access_rules: list[AccessRuleResponse]


class RoleResponse(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    id: int
    name: str
    description: str
    permissions: list[Permission]
    created_at: datetime
    updated_at: datetime
    created_by: str
    custom: bool
    effective_enabled: bool
    enabled: bool


def _role(role_id: int, role: Role) -> RoleResponse:
    return RoleResponse(
        id=role_id,
        name=role,
        description=ROLE_DESCRIPTIONS[role],
        permissions=permissions_of(role),
        created_at=CREATED_AT,
        updated_at=CREATED_AT,
        created_by="system",
        custom=False,
        effective_enabled=True,
        enabled=True,
    )


@get("/api/v1/authorization/roles", tags=["Roles"])
async def list_roles() -> list[RoleResponse]:
    return [_role(role_id, role) for role_id, role in ROLE_IDS.items()]


@get("/api/v1/authorization/roles/{role_id:int}", tags=["Roles"])
async def get_role(role_id: FromPath[int]) -> RoleResponse:
    if role_id not in ROLE_IDS:
        raise InvalidRequestError("/roleId", f"there is no role {role_id}")
    return _role(role_id, ROLE_IDS[role_id])


@post("/api/v1/authorization/access-rules", status_code=201, tags=["Access rules"])
async def create_rule(
    request: Caller,
    data: JSONBody[AccessRuleCreationRequest],
    adapters: NamedDependency[Adapters],
) -> AccessRuleResponse:
    if data.subject_type == "group":
        raise InvalidRequestError("/subjectType", "groups are not supported; grant users or apps")
    if data.role_id not in ROLE_IDS:
        raise InvalidRequestError("/roleId", f"there is no role {data.role_id}")
    if data.scope_type == "system":
        raise InvalidRequestError("/scopeType", "the system scope is not granted")
    if not data.subject_id:
        raise InvalidRequestError("/subjectId", "must not be empty")
    subject_kind: SubjectKind = "user" if data.subject_type == "user" else "application"
    scope_kind: ScopeKind = data.scope_type
    grant = Grant(
        role=ROLE_IDS[data.role_id],
        scope_kind=scope_kind,
        scope_id="tenant" if scope_kind == "tenant" else data.scope_id,
    )
    # The subject is part of what the key names: a rule's id is issued once per key, and one
    # id granted to two subjects would be two rules under one id.
    creation, keyed = creation_id(request, f"access-rule {subject_kind} {data.subject_id}")
    command = CreateAccessRule(
        subject_kind=subject_kind,
        subject_id=data.subject_id,
        grant=grant,
        creation_id=creation,
        keyed=keyed,
        metadata=actor(request),
    )
    granted = await create_access_rule(command, store=adapters.streams, ids=adapters.ids)
    rule, by = granted.state, granted.stamps.created
    return _wire(
        AccessRuleRow(
            rule_id=rule.rule_id,
            subject_type="user" if subject_kind == "user" else "app",
            subject_id=data.subject_id,
            role=grant.role,
            scope_kind=grant.scope_kind,
            scope_id=grant.scope_id,
            scope_name=grant.scope_id,
            created_at=by.at,
            created_by=by.by,
        ),
        data.subject_type,
    )


# Run:ai's filterBy fields of an access rule; a rule revoked is gone, so `deletedAt` is never set.
# Revoked rules are not kept (their events are, in the audit log): there are none to include.
IncludeDeleted = Annotated[bool, QueryParameter(name="includeDeleted")]


@get("/api/v1/authorization/access-rules", tags=["Access rules"])
async def list_rules(
    request: Caller,
    adapters: NamedDependency[Adapters],
    subject_id: Annotated[str | None, QueryParameter(name="subjectId")] = None,
    role_id: Annotated[int | None, QueryParameter(name="roleId")] = None,
    offset: Annotated[int, NOT_NEGATIVE] = 0,
    limit: Annotated[int, QueryParameter(ge=1, le=500)] = 500,
    filter_by: FilterBy = None,
    search: Search = None,
    include_deleted: IncludeDeleted = False,
) -> AccessRuleList:
    """The rules on the scopes the caller sees; `filterBy` (`roleName==viewer`,
    `createdAt>=2026-01-01T00:00:00Z`) and `search` (subject, role or scope name) narrow them."""
    conditions = conditions_of(queries.GRAMMAR, filter_by)
    rows, total = await queries.page(
        adapters.reads,
        await seen_scopes(request),
        conditions,
        search=search,
        subject_id=subject_id,
        role_id=role_id,
        offset=offset,
        limit=limit,
    )
    page = [_wire(row) for row in rows]
    return AccessRuleList(total, len(page), page)


@get("/api/v1/authorization/access-rules/count", tags=["Access rules"])
async def count_rules(
    request: Caller,
    adapters: NamedDependency[Adapters],
    filter_by: FilterBy = None,
    search: Search = None,
    include_deleted: IncludeDeleted = False,
) -> Count:
    """How many rules the list shows for the same `filterBy` and `search`."""
    conditions = conditions_of(queries.GRAMMAR, filter_by)
    found = await queries.count(
        adapters.reads, await seen_scopes(request), conditions, search=search
    )
    return Count(found)


@get("/api/v1/authorization/access-rules/{rule_id:int}", tags=["Access rules"])
async def get_rule(
    request: Caller,
    rule_id: FromPath[int],
    adapters: NamedDependency[Adapters],
) -> AccessRuleResponse:
    row = await queries.one(adapters.reads, rule_id, await seen_scopes(request))
    if row is None:
        raise AccessRuleNotFoundError(rule_id)
    return _wire(row)


@delete("/api/v1/authorization/access-rules/{rule_id:int}", tags=["Access rules"])
async def delete_rule(
    request: Caller,
    rule_id: FromPath[int],
    adapters: NamedDependency[Adapters],
) -> None:
    command = DeleteAccessRule(rule_id=rule_id, metadata=actor(request))
    await delete_access_rule(command, store=adapters.streams, holders=adapters.rule_holders)


ACCESS_RULE_ROUTES: Final = (
    list_roles,
    get_role,
    create_rule,
    list_rules,
    count_rules,
    get_rule,
    delete_rule,
)


def _wire(row: AccessRuleRow, subject_type: str | None = None) -> AccessRuleResponse:
    role_id = next(i for i, role in ROLE_IDS.items() if role == row.role)
    return AccessRuleResponse(
        subject_id=row.subject_id,
        subject_type=subject_type or row.subject_type,
        role_id=role_id,
        scope_id="" if row.scope_kind == "tenant" else row.scope_id,
        scope_type=row.scope_kind,
        role_name=row.role,
        scope_name="tenant" if row.scope_kind == "tenant" else row.scope_name,
        id=row.rule_id,
        created_at=row.created_at,
        updated_at=row.created_at,
        created_by=row.created_by,
        tenant_id=TENANT_ID,
        status=AccessRuleStatus(),
    )
