"""Which data volumes a list or a count selects (`/api/v1/datavolumes`, `/count`): Run:ai's
`requestType` (those originated in the scopes the caller sees, or those usable in one project),
`filterBy` over the fields its document names, the free-text `search`, and the list's order and
page."""

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Final, Literal, get_args

from domain.org_units import UnknownScopeError
from domain.values import ScopeRef
from infra.http.lists import conditions_of
from infra.http.numerals import natural
from projections.data_volume_catalogue import DataVolumeRow
from projections.list_grammar import Grammar, Value, matches, searched

RequestType = Literal["Originated", "UsableInProject"]
SortField = Literal[
    "name", "projectId", "clusterId", "departmentId", "projectName", "createdAt", "createdBy",
    "phase",
]  # fmt: skip
FIELDS: Final[tuple[str, ...]] = get_args(SortField)
GRAMMAR: Final = Grammar(FIELDS, dates=("createdAt",))
# Every data volume here is Ready once created (docs/api/assets.md, "Data volumes").
PHASE: Final = "Ready"


def origin(row: DataVolumeRow) -> ScopeRef:
    return ScopeRef("project", row.project_id)


def shared_refs(row: DataVolumeRow) -> list[ScopeRef]:
    return [ScopeRef(s.scope_type, s.scope_id) for s in row.shared_scopes]  # type: ignore[arg-type]


def visible(row: DataVolumeRow, seen: set[ScopeRef]) -> bool:
    """Seen by those who see its project or a scope it is shared with."""
    return origin(row) in seen or any(ref in seen for ref in shared_refs(row))


def select(
    rows: Sequence[DataVolumeRow],
    *,
    request_type: RequestType,
    usable_in: str | None,
    seen: set[ScopeRef],
    lineages: Mapping[ScopeRef, tuple[ScopeRef, ...]],
    project_names: Mapping[str, str],
    filter_by: Sequence[str] | None,
    search: str | None,
) -> list[DataVolumeRow]:
    """The rows the request asks for, of those the caller may see. UsableInProject needs a
    project the caller sees; the data volumes usable there live in it or are shared with it or
    a scope above it."""
    conditions = conditions_of(GRAMMAR, filter_by)
    if request_type == "Originated":
        if usable_in is not None:
            raise UnknownScopeError("project", usable_in, field="/usableInProjectId")
        chosen = [row for row in rows if origin(row) in seen]
    else:
        if usable_in is None:
            raise UnknownScopeError("project", "", field="/usableInProjectId")
        project = ScopeRef("project", usable_in)
        lineage = lineages.get(project)
        if lineage is None or project not in seen:
            raise UnknownScopeError("project", usable_in, field="/usableInProjectId")
        chosen = [row for row in rows if _usable(row, lineage)]
    return [
        row
        for row in chosen
        if matches(conditions, fields_of(row, project_names))
        and searched(search, (row.name, row.description, project_names.get(row.project_id)))
    ]


def _usable(row: DataVolumeRow, lineage: Sequence[ScopeRef]) -> bool:
    held = {origin(row), *shared_refs(row)}
    return any(scope in held for scope in lineage)


def fields_of(row: DataVolumeRow, project_names: Mapping[str, str]) -> dict[str, Value]:
    return {
        "name": row.name,
        "projectId": row.project_id,
        "clusterId": str(row.cluster_id),
        "departmentId": row.department_id,
        "projectName": project_names.get(row.project_id),
        "createdAt": row.created_at,
        "createdBy": row.created_by,
        "phase": PHASE,
    }


def ordered(
    rows: Sequence[DataVolumeRow],
    project_names: Mapping[str, str],
    sort_by: SortField | None,
    descending: bool,
) -> list[DataVolumeRow]:
    """By the field asked (by name when none), ties by id, so pages never overlap."""
    field = sort_by or "name"

    def key(row: DataVolumeRow) -> tuple[int, str, str]:
        value = fields_of(row, project_names)[field]
        text = value.isoformat() if isinstance(value, datetime) else str(value or "")
        # Numbers (project ids) sort as numbers: padded to one width.
        if field == "projectId" and natural(text) is not None:
            text = text.zfill(20)
        return (value is None, text, str(row.datavolume_id))

    return sorted(rows, key=key, reverse=descending)
