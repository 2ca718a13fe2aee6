"""The template list grammar read in memory, row by row: what a page decided in SQL
(projections/template_pages.py) must answer, by its property test. Text compares by code point,
a missing value reads as the empty string, a project id sorts as a number, ties fall to the id."""

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from projections.template_catalogue import TemplateRow
from projections.template_queries import Condition

Filter = Callable[[Mapping[str, Any]], bool]


def summary_of(row: TemplateRow) -> dict[str, Any]:
    """The fields a list filters and sorts by."""
    meta = row.template.meta
    return {
        "id": row.template.id,
        "name": meta.name,
        "description": meta.description,
        "workloadType": "Distributed",
        "scopeType": meta.scope,
        "clusterId": meta.cluster_id,
        "projectId": meta.project_id,
        "departmentId": meta.department_id,
        "createdAt": row.created_at,
        "updatedAt": row.updated_at,
        "createdBy": row.created_by,
        "updatedBy": row.updated_by,
    }


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, datetime):
        return value.isoformat()
    return "" if value is None else str(value)


def predicate(condition: Condition) -> Filter:
    """The condition as a test of a row's fields."""
    if isinstance(condition.value, datetime):
        return _compare_dates(condition.field, condition.operator, condition.value)
    return _compare_text(condition.field, condition.operator, condition.value)


def _compare_dates(field: str, operator: str, moment: datetime) -> Filter:
    tests: dict[str, Callable[[datetime], bool]] = {
        "==": lambda v: v == moment,
        "!=": lambda v: v != moment,
        "<=": lambda v: v <= moment,
        ">=": lambda v: v >= moment,
    }
    test = tests[operator]
    return lambda row: isinstance(row.get(field), datetime) and test(row[field])


def _compare_text(field: str, operator: str, wanted: str) -> Filter:
    tests: dict[str, Callable[[str], bool]] = {
        "==": lambda v: v == wanted,
        "!=": lambda v: v != wanted,
        "<=": lambda v: v <= wanted,
        ">=": lambda v: v >= wanted,
        "=@": lambda v: wanted in v,
        "!@": lambda v: wanted not in v,
        "=^": lambda v: v.startswith(wanted),
        "=$": lambda v: v.endswith(wanted),
    }
    test = tests[operator]
    return lambda row: test(_text(row.get(field)))


def select(
    rows: Sequence[Mapping[str, Any]],
    *,
    filters: Sequence[Filter] = (),
    search: str | None = None,
    sort_by: str | None = None,
    descending: bool = False,
) -> list[Mapping[str, Any]]:
    """Rows passing every filter and the free-text search (name and description), sorted."""
    chosen = [row for row in rows if all(f(row) for f in filters)]
    if search:
        needle = search.lower()
        chosen = [
            row
            for row in chosen
            if needle in _text(row.get("name")).lower()
            or needle in _text(row.get("description")).lower()
        ]
    key = sort_by or "name"

    def order(row: Mapping[str, Any]) -> tuple[str, str]:
        value = row.get(key)
        text = (
            f"{value:012d}"
            if isinstance(value, int) and not isinstance(value, bool)
            else _text(value)
        )
        return text, _text(row.get("id"))

    return sorted(chosen, key=order, reverse=descending)
