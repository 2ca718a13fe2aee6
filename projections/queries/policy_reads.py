"""Policies from their catalogue: those of a scope's lineage, every one, and what a policy
in a scope's place would change of the templates the caller sees."""

from collections.abc import Sequence

from domain.policies import PolicyBody
from domain.values import ScopeRef
from projections import org_units, policy_catalogue, policy_impact
from projections.policy_catalogue import PolicyRow
from projections.policy_impact import Changed
from projections.queries import Reads, Viewer


async def of_scopes(reads: Reads, scopes: Sequence[ScopeRef]) -> dict[ScopeRef, PolicyRow]:
    async with reads.connection() as conn:
        return await policy_catalogue.of_scopes(conn, scopes)


async def every(reads: Reads) -> list[PolicyRow]:
    async with reads.connection() as conn:
        return await policy_catalogue.list_all(conn)


async def impact(
    reads: Reads, projects: list[ScopeRef], viewer: Viewer, scope: ScopeRef, body: PolicyBody
) -> tuple[dict[str, str], list[Changed]]:
    """The names of `projects`, and the templates of those the caller sees whose compliance
    `body` in `scope`'s place would change."""
    async with reads.connection() as conn:
        names = await org_units.names_of(conn, "project", [p.id for p in projects])
        seen_projects = [p for p in projects if p in viewer.seen]
        changed = await policy_impact.changed_by(
            conn, seen_projects, viewer.lineages, viewer.seen, scope, body
        )
    return names, changed
