"""Clusters, departments and projects from the org tree's read model, and their names."""

from collections.abc import Iterable

from domain.values import ScopeKind, ScopeRef
from projections import org_units
from projections.org_units import OrgUnitRow
from projections.queries import Reads

_KINDS: tuple[ScopeKind, ...] = ("cluster", "department", "project")


async def every(reads: Reads) -> list[OrgUnitRow]:
    """Every live unit, of every kind."""
    async with reads.connection() as conn:
        return await org_units.list_units(conn)


async def one(reads: Reads, kind: ScopeKind, unit_id: str) -> OrgUnitRow | None:
    async with reads.connection() as conn:
        return await org_units.get_unit(conn, kind, unit_id)


async def names(reads: Reads, refs: Iterable[ScopeRef]) -> dict[ScopeRef, str]:
    """The names of these units the read model holds, one query per kind."""
    wanted = list(refs)
    found: dict[ScopeRef, str] = {}
    async with reads.connection() as conn:
        for kind in _KINDS:
            ids = {ref.id for ref in wanted if ref.kind == kind}
            if ids:
                named = await org_units.names_of(conn, kind, ids)
                found.update({ScopeRef(kind, i): n for i, n in named.items()})
    return found
