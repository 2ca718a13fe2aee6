"""Storage classes and their configurations from their catalogue: a cluster's classes (each with
its configuration), one configuration, or a page of them chosen, sorted and paged in SQL by
`filterBy` over Run:ai's fields. Seen by whoever sees their cluster."""

from collections.abc import Sequence, Set
from typing import Final, Literal, get_args
from uuid import UUID

from domain.values import ScopeRef
from projections import storage_class_catalogue
from projections.list_grammar import Condition, Grammar
from projections.list_sql import Where
from projections.queries import Reads
from projections.storage_class_catalogue import (
    CONFIGURATION_COLUMNS,
    CONFIGURATIONS,
    ConfigurationRow,
    StorageClassRow,
    configuration_of,
)

# Run:ai's StorageClassConfigurationFilterBy and SortBy fields.
Field = Literal["name", "tenantId", "scopeType", "scopeId"]
GRAMMAR: Final = Grammar(get_args(Field))
TENANT: Final = "1"  # one tenant per service
_TEXT: Final = {
    "name": "name",
    "tenantId": f"'{TENANT}'",
    "scopeType": "'cluster'",
    "scopeId": "cluster_id::text",
}
_SORT: Final = {f: f'{e} COLLATE "C"' for f, e in _TEXT.items()}


def visible(cluster_id: UUID, seen: Set[ScopeRef]) -> bool:
    return ScopeRef("cluster", str(cluster_id)) in seen


async def classes(reads: Reads, cluster_id: UUID, name: str | None = None) -> list[StorageClassRow]:
    """A cluster's classes (or its one named so), by name, each with its configuration's rules."""
    async with reads.connection() as conn:
        return await storage_class_catalogue.classes_of(conn, cluster_id, name)


async def configuration(reads: Reads, configuration_id: UUID) -> ConfigurationRow | None:
    async with reads.connection() as conn:
        return await storage_class_catalogue.configuration(conn, configuration_id)


async def page(
    reads: Reads,
    seen: Set[ScopeRef],
    conditions: Sequence[Condition],
    *,
    sort_by: Field | None,
    descending: bool,
    offset: int,
    limit: int,
) -> tuple[list[ConfigurationRow], bool]:
    """The configurations of the clusters the caller sees that the request selects, by the field
    asked (by name when none), ties by id; and whether more follow."""
    query = Where(_TEXT, {})
    clusters = sorted(ref.id for ref in seen if ref.kind == "cluster")
    query.where.append(f"cluster_id::text = ANY({query.param(clusters)}::text[])")
    for condition in conditions:
        query.condition(condition)
    direction = "DESC" if descending else "ASC"
    order = f"{_SORT[sort_by or 'name']} {direction}, configuration_id {direction}"
    async with reads.connection() as conn:
        rows = await conn.fetch(
            f"SELECT {CONFIGURATION_COLUMNS} FROM {CONFIGURATIONS} WHERE {query.clause}"
            f" ORDER BY {order} OFFSET {query.param(offset)} LIMIT {query.param(limit + 1)}",
            *query.params,
        )
    return [configuration_of(r) for r in rows[:limit]], len(rows) > limit
