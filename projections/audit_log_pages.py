"""A page of Run:ai's audit log, chosen, sorted and paged in SQL over the entries of the events
(`audit_log`, this read model's) and those that are no event (`audit_records`, the API's: sign-
ins, refused writes), read as one list over their indexes; always within a time range."""

from collections.abc import Sequence
from datetime import datetime
from typing import Final, Literal, get_args
from uuid import UUID

import asyncpg
import msgspec

from projections.executor import Executor
from projections.list_grammar import Condition, Grammar
from projections.list_sql import Where

# Run:ai's AuditLogFilter and AuditLogSort fields; each but the time is a column of that name.
Filtered = Literal[
    "timestamp", "subject", "subject_type", "source_ip", "action", "result", "url",
    "entity_type", "entity_name", "cluster_name",
]  # fmt: skip
SortField = Literal[
    "timestamp", "subject", "subject_type", "source_ip", "action", "http_method", "result",
    "url", "entity_type", "entity_name", "entity_id",
]  # fmt: skip
GRAMMAR: Final = Grammar(get_args(Filtered), dates=("timestamp",))
_TEXT: Final = {field: field for field in get_args(Filtered) if field != "timestamp"}
_DATES: Final = {"timestamp": "logged_at"}
_SORT: Final = {
    field: f'{field} COLLATE "C"' for field in get_args(SortField) if field != "timestamp"
}

_COLUMNS: Final = (
    "id, logged_at, subject, subject_type, source_ip, action, http_method, url, entity_type,"
    " entity_name, entity_id, result, http_status_code, cluster_id, cluster_name, request_id,"
    " metadata::text AS metadata"
)
_ENTRIES: Final = (
    f"(SELECT {_COLUMNS} FROM audit_log UNION ALL SELECT {_COLUMNS} FROM audit_records) AS e"
)


class AuditEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One entry as stored: '' for text it lacks; `metadata` a JSON object of strings."""

    id: UUID
    logged_at: datetime
    subject: str
    subject_type: str
    source_ip: str
    action: str
    http_method: str
    url: str
    entity_type: str
    entity_name: str
    entity_id: str
    result: str
    http_status_code: int | None
    cluster_id: UUID | None
    cluster_name: str
    request_id: str
    metadata: str


def _where(start: datetime, end: datetime, conditions: Sequence[Condition]) -> Where:
    """The entries from `start` up to (not including) `end` that meet every condition."""
    query = Where(_TEXT, _DATES)
    query.where.append(f"logged_at >= {query.param(start)}::timestamptz")
    query.where.append(f"logged_at < {query.param(end)}::timestamptz")
    for condition in conditions:
        query.condition(condition)
    return query


async def page(
    conn: Executor,
    start: datetime,
    end: datetime,
    conditions: Sequence[Condition],
    *,
    sort_by: SortField,
    descending: bool,
    offset: int,
    limit: int,
) -> tuple[list[AuditEntry], bool]:
    """The page the query selects, and whether more follow. Ties fall to the time, then the id."""
    query = _where(start, end, conditions)
    way = "DESC" if descending else "ASC"
    keys = [f"logged_at {way}", f"id {way}"]
    if sort_by != "timestamp":
        keys.insert(0, f"{_SORT[sort_by]} {way}")
    rows = await conn.fetch(
        f"SELECT * FROM {_ENTRIES} WHERE {query.clause} ORDER BY {', '.join(keys)}"
        f" OFFSET {query.param(offset)} LIMIT {query.param(limit + 1)}",
        *query.params,
    )
    return [_entry(row) for row in rows[:limit]], len(rows) > limit


async def count(
    conn: Executor, start: datetime, end: datetime, conditions: Sequence[Condition]
) -> int:
    query = _where(start, end, conditions)
    row = await conn.fetchrow(
        f"SELECT count(*) FROM {_ENTRIES} WHERE {query.clause}", *query.params
    )
    assert row is not None  # an aggregate always answers
    return int(row[0])


def _entry(record: asyncpg.Record) -> AuditEntry:
    return AuditEntry(**{field: record[field] for field in AuditEntry.__struct_fields__})
