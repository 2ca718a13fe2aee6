"""Templates from their catalogue: a page of a list in Run:ai's grammar and its count, one by
id, those using an asset, and their combined specs under a project's policy."""

from collections.abc import Sequence, Set
from typing import Any, Final, NamedTuple, cast
from uuid import UUID

import asyncpg

from domain.bounded import Bounded
from domain.policy_compliance import issues
from domain.policy_rules import ComplianceIssue
from domain.values import ScopeRef
from projections import template_catalogue, template_pages
from projections.queries import Reads, policy_reads
from projections.template_catalogue import TemplateRow
from projections.template_queries import Condition


def keys_riding(
    seen: Set[ScopeRef] | None, conditions: Sequence[Condition], asked: template_pages.Asked
) -> template_pages.KeysQuery:
    """A page's keys query as it rides on a request's settling statement (its parameters from
    $2 on, after the standing's)."""
    return template_pages.keys_query(seen, conditions, asked, first=2)


class Ridden(NamedTuple):
    """A `keys_riding` query as the request's settling statement read it, and what it found."""

    sql: str
    args: tuple[object, ...]
    rows: Sequence[Any]


async def page(
    reads: Reads,
    seen: Set[ScopeRef] | None,
    conditions: Sequence[Condition],
    asked: template_pages.Asked,
    ridden: Ridden | None = None,
) -> tuple[list[TemplateRow], bool]:
    """The page of templates the caller may see (`seen`; None: every scope) that the query
    selects, and whether more follow: from the keys `ridden` found when they are this page's."""
    if ridden is not None and (ridden.sql, ridden.args) == keys_riding(seen, conditions, asked):
        chosen, more = template_pages.chosen_by(ridden.rows, asked.limit)
        if (rows := template_pages.whole(chosen)) is not None:
            return rows, more
        async with reads.connection() as conn:
            return await template_pages.completed(conn, chosen), more
    async with reads.connection() as conn:
        return await template_pages.page(conn, seen, conditions, asked)


async def count(
    reads: Reads, seen: Set[ScopeRef] | None, conditions: Sequence[Condition], *, search: str | None
) -> int:
    """How many templates the caller may see the query selects."""
    async with reads.connection() as conn:
        return await template_pages.count(conn, seen, conditions, search=search)


async def one(reads: Reads, template_id: UUID) -> TemplateRow | None:
    async with reads.connection() as conn:
        return await template_catalogue.get_template(conn, template_id)


# How the request's settling read fetches one template with its standing (`$2`: the id).
ONE_BY_ID = template_catalogue.one_by_id("$2")


def found(record: object) -> TemplateRow | None:
    """The template the settling read fetched with `ONE_BY_ID` (None: there is none)."""
    return template_catalogue.found(cast(asyncpg.Record, record))


def visible(row: TemplateRow, seen: Set[ScopeRef]) -> bool:
    return row.template.meta.scope_ref in seen


async def names(reads: Reads, template_ids: Set[UUID], seen: Set[ScopeRef]) -> dict[UUID, str]:
    """The names of those templates the caller may see."""
    async with reads.connection() as conn:
        return await template_catalogue.names_in(conn, sorted(template_ids), seen)


async def using_asset(reads: Reads, asset_id: UUID, seen: Set[ScopeRef]) -> list[TemplateRow]:
    """The templates the caller may see that link or load the asset."""
    async with reads.connection() as conn:
        return await template_catalogue.templates_with(conn, asset_id, seen)


async def compliance(
    reads: Reads,
    rows: list[TemplateRow],
    lineage: Sequence[ScopeRef],
    *,
    policies: policy_reads.KeptPolicies,
    epoch: int | None,
) -> list[list[ComplianceIssue]]:
    """Each row's issues under the policy in force at the end of `lineage` (a project's) as of
    the policies' `epoch`, its combined specs with the policy's defaults beneath them. Kept per
    row version and policy."""
    policy, digest = await policies.effective(reads, lineage, epoch)
    if not policy.rules:
        return [[] for _ in rows]
    keys = [(row.template.id, row.template.version, digest) for row in rows]
    # Taken out of the map once: what this page puts in may push out what it found there.
    found = {key: kept for key in keys if (kept := _ISSUES.get(key)) is not None}
    missing = {key: row for row, key in zip(rows, keys, strict=True) if key not in found}
    if missing:
        async with reads.connection() as conn:
            combined = await template_catalogue.combined_under(
                conn, list(missing.values()), policy.worker_defaults, policy.master_defaults
            )
        for key, specs in zip(missing, combined, strict=True):
            found[key] = issues(policy, specs.spec, specs.master)
            _ISSUES.put(key, found[key])
    return [found[key] for key in keys]


# A template version's issues under a policy (its encoding): neither changes once written.
_ISSUES: Final[Bounded[tuple[UUID, int, bytes], list[ComplianceIssue]]] = Bounded(8192)
