"""Which departments or projects a list or a count selects (`/api/v1/org-unit/departments`,
`/projects` and their `/count`): Run:ai's `filterBy` over the fields the lists show, and for
projects its free-text `search` (a project's name). The units the GPU metrics would need
(`gpuAllocated`, `avgGpuUtilization24h`, ...) are not measured here, so they are not fields."""

from collections.abc import Mapping, Sequence
from typing import Final

from domain.values import ScopeKind, ScopeRef
from infra.http.lists import conditions_of
from infra.http.org_unit_schemas import department_wire, project_from_row
from projections.list_grammar import Grammar, Value, matches, searched
from projections.org_units import OrgUnitRow

_PROJECT_FIELDS: Final = (
    "name", "clusterId", "departmentId", "parentId", "parentName", "phase", "totalGpuQuota",
    "createdAt",
)  # fmt: skip
_GRAMMARS: Final[Mapping[ScopeKind, Grammar]] = {
    "department": Grammar(
        ("name", "clusterId", "totalGpuQuota", "createdAt"),
        dates=("createdAt",),
        numbers=("totalGpuQuota",),
    ),
    "project": Grammar(_PROJECT_FIELDS, dates=("createdAt",), numbers=("totalGpuQuota",)),
}


def select(
    units: Sequence[OrgUnitRow],
    names: Mapping[ScopeRef, str],
    filter_by: Sequence[str] | None,
    search: str | None,
) -> list[OrgUnitRow]:
    """The units (all of one kind) that meet every `filterBy` item and the search; `names`
    holds the name of every live unit, for a project's parent."""
    if not units:
        return []
    grammar = _GRAMMARS.get(units[0].kind)
    if grammar is None:  # clusters are listed whole
        return list(units)
    conditions = conditions_of(grammar, filter_by)
    return [
        unit
        for unit in units
        if matches(conditions, _fields(unit, names)) and searched(search, (unit.name,))
    ]


def _fields(unit: OrgUnitRow, names: Mapping[ScopeRef, str]) -> dict[str, Value]:
    if unit.kind == "department":
        department = department_wire(unit)
        return {
            "name": department.name,
            "clusterId": department.cluster_id,
            "totalGpuQuota": department.total_resources.gpu_quota,
            "createdAt": department.created_at,
        }
    project = project_from_row(unit)
    parent_kind: ScopeKind = "cluster" if unit.department_id is None else "department"
    return {
        "name": project.name,
        "clusterId": project.cluster_id,
        "departmentId": unit.department_id,
        "parentId": project.parent_id,
        "parentName": names.get(ScopeRef(parent_kind, project.parent_id)),
        "phase": project.status.phase,
        "totalGpuQuota": project.total_resources.gpu_quota,
        "createdAt": project.created_at,
    }
