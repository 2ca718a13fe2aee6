"""Templates from their catalogue: a page of a list in Run:ai's grammar and its count, one by
id, those using an asset, and their combined specs under a project's policy."""

from collections.abc import Sequence, Set
from typing import cast
from uuid import UUID

import asyncpg

from domain.combined import Combined
from domain.policies import Effective
from domain.values import ScopeRef
from projections import policy_catalogue, template_catalogue, template_pages
from projections.queries import Reads
from projections.template_catalogue import TemplateRow
from projections.template_queries import Condition


async def page(
    reads: Reads,
    seen: Set[ScopeRef],
    conditions: Sequence[Condition],
    *,
    search: str | None,
    sort_by: str | None,
    descending: bool,
    offset: int,
    limit: int,
) -> tuple[list[TemplateRow], bool]:
    """The page of templates the caller may see that the query selects, and whether more
    follow."""
    async with reads.connection() as conn:
        return await template_pages.page(
            conn,
            seen,
            conditions,
            search=search,
            sort_by=sort_by,
            descending=descending,
            offset=offset,
            limit=limit,
        )


async def count(
    reads: Reads, seen: Set[ScopeRef], conditions: Sequence[Condition], *, search: str | None
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


async def using_asset(reads: Reads, asset_id: UUID, seen: Set[ScopeRef]) -> list[TemplateRow]:
    """The templates the caller may see that link or load the asset."""
    async with reads.connection() as conn:
        return await template_catalogue.templates_with(conn, asset_id, seen)


async def under_policy(
    reads: Reads, rows: list[TemplateRow], lineage: Sequence[ScopeRef]
) -> tuple[Effective, list[Combined | None]]:
    """The policy in force at the end of `lineage` (a project's), and each row's combined
    specs with its defaults beneath them (None for each when it has no rules)."""
    async with reads.connection() as conn:
        policy = await policy_catalogue.effective_at(conn, lineage)
        combined: list[Combined | None] = (
            list(
                await template_catalogue.combined_under(
                    conn, rows, policy.worker_defaults, policy.master_defaults
                )
            )
            if policy.rules
            else [None] * len(rows)
        )
    return policy, combined
