"""A workload list decided in SQL (projections/workload_list.py) answers exactly as Run:ai's
grammar read in memory (projections/list_grammar.py) over the fields the list shows: generated
workloads, departments and queries, names with any characters, against a real PostgreSQL."""

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID, uuid4

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from domain.events import EventMetadata, RecordedEvent, WorkloadDeleted, WorkloadRunning
from infra.http.workload_queries import GRAMMAR
from infra.http.workload_schemas import Workload
from infra.http.workload_views import workload_of
from projections import workload_catalogue, workload_list
from projections.list_grammar import Condition, Value, matches, searched
from tests.rolled_back import rolled_back
from tests.workload_samples import requested_workload

pytestmark = [pytest.mark.integration]

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
NAMES = st.text(alphabet=st.sampled_from("abxyzAXZ09-_ é中😀\U0010fffd"), min_size=1, max_size=6)
PROJECTS = ("1", "7", "12")
DEPARTMENTS = {"3": "Research", "4": "résumé"}  # "5" is gone: it reads as no name
TEXT_FIELDS = tuple(f for f in GRAMMAR.fields if not f.endswith("At"))
DATE_FIELDS = ("createdAt", "deletedAt", "completedAt", "phaseUpdatedAt")
SEEN_VALUES = (
    "distributed", "Train", "1", "7", "12", "team", "3", "4", "5", "Research", "résumé",
    "alice", "Bob", "Creating", "Running", "PyTorch", "MPI", "train", "build",
    str(UUID(int=1)), str(UUID(int=7)),
)  # fmt: skip
TEXT_OPS = ("==", "!=", "<=", ">=", "=@", "!@", "=^", "=$")

workloads = st.lists(
    st.fixed_dictionaries(
        {
            "name": NAMES,
            "project": st.sampled_from(PROJECTS),
            "department": st.sampled_from([None, "3", "4", "5"]),
            "framework": st.sampled_from(["PyTorch", "MPI", "TF"]),
            "priority": st.sampled_from([None, "train", "build"]),
            "template": st.sampled_from([None, UUID(int=7), UUID(int=8)]),
            "hours": st.integers(0, 4),
            "by": st.sampled_from(["alice", "bob", "Bob"]),
            "fate": st.sampled_from(["requested", "running", "deleted"]),
        }
    ),
    min_size=3,
    max_size=20,
)


def _fields(workload: Workload) -> dict[str, Value]:
    """What each field of the list reads as, from the wire form (the list's own view)."""
    template = workload.additional_fields.get("templateId")
    return {
        "type": workload.type,
        "name": workload.name,
        "clusterId": str(workload.cluster_id),
        "projectId": workload.project_id,
        "projectName": workload.project_name,
        "departmentId": workload.department_id,
        "departmentName": workload.department_name,
        "submittedBy": workload.submitted_by,
        "phase": workload.phase,
        "distributedFramework": workload.distributed_framework,
        "category": workload.category,
        "priorityClassName": workload.priority_class_name,
        "templateId": template if isinstance(template, str) else None,
        "createdAt": workload.created_at,
        "deletedAt": workload.deleted_at,
        "completedAt": workload.completed_at,
        "phaseUpdatedAt": workload.phase_updated_at,
    }


@st.composite
def queries(draw: st.DrawFn, names: list[str]) -> dict[str, Any]:
    conditions = []
    for _ in range(draw(st.integers(0, 2))):
        field = draw(st.sampled_from((*TEXT_FIELDS, *DATE_FIELDS)))
        if field in DATE_FIELDS:
            operator = draw(st.sampled_from(("==", "!=", "<=", ">=")))
            at = EPOCH + timedelta(hours=draw(st.integers(0, 5)))
            conditions.append(Condition(field, operator, at))
            continue
        # Values the rows hold, whole or cut short, so conditions select some rows, not none.
        held = [*names, *SEEN_VALUES]
        whole = draw(st.sampled_from(held))
        value = draw(st.one_of(st.just(whole), st.just(whole[: max(1, len(whole) // 2)]), NAMES))
        conditions.append(Condition(field, draw(st.sampled_from(TEXT_OPS)), value))
    return {
        "conditions": conditions,
        "search": draw(st.one_of(st.none(), st.sampled_from(["a", "X", "é", "中"]), NAMES)),
        "deleted": draw(st.booleans()),
        "offset": draw(st.integers(0, 6)),
        "limit": draw(st.integers(1, 8)),
        "projects": sorted(draw(st.sets(st.sampled_from(PROJECTS), min_size=1))),
    }


def _recorded(event: Any, stream_id: UUID, version: int, at: datetime, by: str) -> RecordedEvent:
    return RecordedEvent(
        position=0,
        event_id=uuid4(),
        stream_type="workload",
        stream_id=stream_id,
        version=version,
        recorded_at=at,
        metadata=EventMetadata(actor_subject=by, actor_kind="user"),
        event=event,
    )


async def _store(conn: Any, catalogue: list[dict[str, Any]]) -> None:
    await conn.execute("DELETE FROM workload_catalogue")
    await conn.execute("DELETE FROM org_units WHERE kind = 'department'")
    for unit_id, name in DEPARTMENTS.items():
        await conn.execute(
            "INSERT INTO org_units (kind, id, name, cluster_id, details, created_at, created_by,"
            " updated_at, updated_by, version) VALUES ('department', $1, $2, $3, '{}', $4,"
            " 'admin', $4, 'admin', 1)",
            unit_id, name, UUID(int=1), EPOCH,
        )  # fmt: skip
    for item in catalogue:
        spec: dict[str, Any] = {"distributedFramework": item["framework"]}
        if item["priority"]:
            spec["priorityClass"] = item["priority"]
        requested = requested_workload(spec, name=item["name"])
        requested = replace(
            requested,
            project_id=item["project"],
            department_id=item["department"],
            snapshot=replace(requested.snapshot, template_id=item["template"]),
        )
        at = EPOCH + timedelta(hours=item["hours"])
        wid = requested.workload_id
        await workload_catalogue.apply(conn, _recorded(requested, wid, 1, at, item["by"]))
        later = at + timedelta(minutes=30)
        if item["fate"] == "running":
            running = WorkloadRunning(workload_id=wid, run=1)
            await workload_catalogue.apply(conn, _recorded(running, wid, 2, later, item["by"]))
        elif item["fate"] == "deleted":
            gone = WorkloadDeleted(workload_id=wid)
            await workload_catalogue.apply(conn, _recorded(gone, wid, 2, later, item["by"]))


async def _check(conn: Any, catalogue: list[dict[str, Any]], query: dict[str, Any]) -> None:
    await _store(conn, catalogue)
    rows = [
        workload_catalogue.row_of(r)
        for r in await conn.fetch(f"SELECT {workload_catalogue.COLUMNS} FROM workload_catalogue")
    ]
    shown = [
        workload_of(row, DEPARTMENTS)
        for row in sorted(rows, key=lambda r: (-r.created_at.timestamp(), r.workload.id))
        if row.workload.request.project_id in query["projects"]
        and row.workload.deleted == query["deleted"]
    ]
    expected = [
        w.id
        for w in shown
        if matches(query["conditions"], _fields(w)) and searched(query["search"], (w.name,))
    ]
    offset, limit = query["offset"], query["limit"]
    page, more = await workload_list.page(
        conn,
        query["projects"],
        query["conditions"],
        deleted=query["deleted"],
        search=query["search"],
        offset=offset,
        limit=limit,
    )
    counted = await workload_list.count(
        conn,
        query["projects"],
        query["conditions"],
        deleted=query["deleted"],
        search=query["search"],
    )
    assert [row.workload.id for row in page] == expected[offset : offset + limit]
    assert more == (offset + limit < len(expected))
    assert counted == len(expected)


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data(), catalogue=workloads)
def test_a_workload_page_in_sql_is_the_page_in_memory(
    postgres_url: str, data: st.DataObject, catalogue: list[dict[str, Any]]
) -> None:
    query = data.draw(queries([item["name"] for item in catalogue]))
    asyncio.run(rolled_back(postgres_url, lambda conn: _check(conn, catalogue, query)))
