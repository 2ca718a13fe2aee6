"""Policies from their catalogue: those of a scope's lineage, every one, what a policy in a
scope's place would change of the templates the caller sees, and effective policies kept."""

from collections.abc import Sequence

import msgspec

from domain.bounded import Bounded
from domain.policies import Effective, PolicyBody
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


class KeptPolicies:
    """Lineages' effective policies (and their encodings), each kept under the policies' epoch
    it was read at: that moves with every change to their rows (migration 0048)."""

    def __init__(self, size: int = 1024) -> None:
        self._kept: Bounded[tuple[tuple[ScopeRef, ...], int], tuple[Effective, bytes]]
        self._kept = Bounded(size)

    async def effective(
        self, reads: Reads, lineage: Sequence[ScopeRef], epoch: int | None
    ) -> tuple[Effective, bytes]:
        """The policy in force at the end of `lineage`; `epoch` None: read afresh."""
        key = None if epoch is None else (tuple(lineage), epoch)
        kept = None if key is None else self._kept.get(key)
        if kept is None:
            async with reads.connection() as conn:
                policy = await policy_catalogue.effective_at(conn, lineage)
            kept = (policy, _encode(policy))
            if key is not None:
                self._kept.put(key, kept)
        return kept


_encode = msgspec.json.Encoder().encode
