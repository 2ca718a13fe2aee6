"""`/api/v1/authorization/me/access-rules` (and `/count`): the roles the caller holds, no role
needed to ask: the grants its request was settled with, each with its rule once the access rules
read model has it (none for a role an application was created with). See docs/api/access.md."""

from datetime import datetime
from typing import Annotated, Final

import msgspec
from litestar import get
from litestar.di import NamedDependency
from litestar.params import QueryParameter

from domain.access import ROLE_IDS
from infra.http.access_rules import TENANT_ID, ShownRule
from infra.http.adapters import Adapters
from infra.http.callers import Caller
from infra.http.lists import Count, Search
from infra.http.openapi_document import NOT_NEGATIVE
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
    """The caller's grants as rules, in the order it holds them; `search` finds a text in the
    subject, the role's name or the scope's name."""
    principal, subject_type = request.user, _subject_type(request)
    held, total = await queries.held_page(
        adapters.reads,
        subject_type,
        principal.subject,
        principal.grants,
        search=search,
        offset=offset,
        limit=limit,
    )
    page = [_shown(principal.subject, subject_type, one) for one in held]
    return MeAccessRulesResponse(MeAccessRulePage(total, len(page), page))


@get(f"{PATH}/count", tags=["Me"])
async def count_my_rules(
    request: Caller,
    adapters: NamedDependency[Adapters],
    search: Search = None,
) -> Count:
    principal = request.user
    found = await queries.held_count(
        adapters.reads, _subject_type(request), principal.subject, principal.grants, search=search
    )
    return Count(found)


ME_ROUTES: Final = (my_rules, count_my_rules)


def _subject_type(request: Caller) -> str:
    return "user" if request.user.kind == "user" else "app"


def _shown(subject: str, subject_type: str, held: queries.Held) -> MeAccessRule:
    grant, row = held.grant, held.rule
    return MeAccessRule(
        subject_id=subject,
        subject_type=subject_type,
        role_id=_ROLE_IDS[grant.role],
        scope_id="" if grant.scope_kind == "tenant" else grant.scope_id,
        scope_type=grant.scope_kind,
        role_name=grant.role,
        scope_name=held.scope_name,
        tenant_id=TENANT_ID,
        id=None if row is None else row.rule_id,
        created_at=None if row is None else row.created_at,
        created_by=None if row is None else row.created_by,
    )
