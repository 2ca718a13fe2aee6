"""`/api/v1/authorization/me/access-rules` (and `/count`): the roles the caller itself holds,
in Run:ai's shapes; no role is needed to ask.

They are exactly the grants authentication settled for the request, which every permission
check and every list's visibility of this request goes by (a grant or a revocation counts from
the next request on, on every API process, whoever made it). Each is shown with its access
rule from the access rules read model, its id and when and by whom it was granted, once that
read model holds it; a role an application was created with has no rule, and no id.
"""

from datetime import datetime
from typing import Annotated, Final

import msgspec
from litestar import get
from litestar.di import NamedDependency
from litestar.params import QueryParameter

from domain.access import ROLE_IDS
from domain.values import Grant
from infra.http.access_rules import TENANT_ID, ShownRule
from infra.http.adapters import Adapters
from infra.http.callers import Caller
from infra.http.lists import Count, Search
from infra.http.openapi_document import NOT_NEGATIVE
from projections.access_rules import AccessRuleRow
from projections.list_grammar import searched
from projections.queries import access_rule_reads as queries

PATH: Final = "/api/v1/authorization/me/access-rules"
_ROLE_IDS: Final = {role: role_id for role_id, role in ROLE_IDS.items()}


class MeAccessRule(ShownRule, frozen=True, kw_only=True, omit_defaults=True):
    id: int | None = None
    created_at: datetime | None = None
    created_by: str | None = None


class MeAccessRulePage(msgspec.Struct, frozen=True, rename="camel"):
    total_records: int
    display_records: int
    access_rules: list[MeAccessRule]


class MeAccessRulesResponse(msgspec.Struct, frozen=True, rename="camel"):
    access_rules: MeAccessRulePage


@get(PATH, tags=["Me"])
async def my_rules(
    request: Caller,
    adapters: NamedDependency[Adapters],
    limit: Annotated[int, QueryParameter(ge=1, le=500)] = 50,
    offset: Annotated[int, NOT_NEGATIVE] = 0,
    search: Search = None,
) -> MeAccessRulesResponse:
    """`search` finds a text in the subject, the role's name or the scope's name."""
    chosen = await _mine(request, adapters, search)
    page = chosen[offset : offset + limit]
    return MeAccessRulesResponse(MeAccessRulePage(len(chosen), len(page), page))


@get(f"{PATH}/count", tags=["Me"])
async def count_my_rules(
    request: Caller,
    adapters: NamedDependency[Adapters],
    search: Search = None,
) -> Count:
    return Count(len(await _mine(request, adapters, search)))


ME_ROUTES: Final = (my_rules, count_my_rules)


async def _mine(request: Caller, adapters: Adapters, search: str | None) -> list[MeAccessRule]:
    """The caller's grants as rules, in the order it holds them."""
    principal = request.user
    user = principal.kind == "user"
    subject_type = "user" if user else "app"
    rows, names = await queries.held_by(
        adapters.reads, subject_type, principal.subject, principal.grants
    )
    unclaimed = list(rows)
    found: list[MeAccessRule] = []
    for grant in principal.grants:
        row = next((r for r in unclaimed if _grant_of(r) == grant), None)
        if row is not None:
            unclaimed.remove(row)  # one rule for each grant, should two be alike
        tenant = grant.scope_kind == "tenant"
        found.append(
            MeAccessRule(
                subject_id=principal.subject,
                subject_type=subject_type,
                role_id=_ROLE_IDS[grant.role],
                scope_id="" if tenant else grant.scope_id,
                scope_type=grant.scope_kind,
                role_name=grant.role,
                scope_name=names.get((grant.scope_kind, grant.scope_id), grant.scope_id),
                tenant_id=TENANT_ID,
                id=None if row is None else row.rule_id,
                created_at=None if row is None else row.created_at,
                created_by=None if row is None else row.created_by,
            )
        )
    return [r for r in found if searched(search, (r.subject_id, r.role_name, r.scope_name))]


def _grant_of(row: AccessRuleRow) -> Grant:
    return Grant(role=row.role, scope_kind=row.scope_kind, scope_id=row.scope_id)
