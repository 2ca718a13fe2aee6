"""The departments and projects a list selects in SQL (projections/queries/org_unit_reads.py)
are exactly those Run:ai's grammar read in memory (projections/list_grammar.py) selects over
the values the lists show: generated units, quotas, grants and queries, against PostgreSQL."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID, uuid4

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.events import (
    ClusterCreated,
    DepartmentCreated,
    DepartmentUpdated,
    EventMetadata,
    ProjectCreated,
    ProjectUpdated,
    RecordedEvent,
)
from domain.values import NodePoolRef, NodePoolResources, QuotaResource, ScopeKind, ScopeRef
from infra.http.org_unit_schemas import department_wire, project_from_row
from projections import org_units
from projections.list_grammar import Condition, InvalidFilterError, Value, matches, searched
from projections.org_units import OrgUnitRow
from projections.queries import org_unit_reads
from tests.rolled_back import rolled_back

pytestmark = [pytest.mark.integration]

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
NAMES = st.text(alphabet=st.sampled_from("abxyzAXZ09-_ é中😀\U0010fffd"), min_size=1, max_size=6)
CLUSTERS = (UUID(int=1), UUID(int=2))
# Ids of different lengths: the lists go by numeric-aware id.
DEPARTMENTS = ("1", "2", "10", "21", "5", "6", "7", "8", "9", "11", "12", "13")
PROJECTS = ("1", "3", "4", "12", "100", "5", "6", "7", "8", "9", "10", "11")
SEEN = {ScopeRef("department", d) for d in DEPARTMENTS} | {ScopeRef("project", p) for p in PROJECTS}
# Quotas whose sums Python and PostgreSQL write differently (1e15, 0.1 + 0.2, an overflow to
# inf, an integral float), an int as a caller's Python may hold one, and none at all.
QUOTAS = st.sampled_from([None, 0.0, 0.5, 1, 2.0, 0.1, 0.2, 1e15, 1e16, 3e-5, -1.5, 1e308])
TEXT_OPS = ("==", "!=", "<=", ">=", "=@", "!@", "=^", "=$")
QUOTA_TEXTS = (
    "0", "0.3", "0.30000000000000004", "1.0", "2", "2.5", "1e+16", "1e15", "inf", ".", "e", "-",
    "0.5", "1000000000000000.0", "3e-05", "-1.5", "1_0", "3.0", ".0",
)  # fmt: skip

pools = st.lists(
    st.builds(
        lambda gpu, cpu: NodePoolResources(
            node_pool=NodePoolRef(id="22", name="default"),
            gpu=None if gpu is False else QuotaResource(deserved=gpu),
            cpu=QuotaResource(deserved=cpu),
        ),
        st.one_of(st.just(False), QUOTAS),
        QUOTAS,
    ),
    max_size=3,
).map(tuple)

units = st.fixed_dictionaries(
    {
        "cluster_name": NAMES,
        "departments": st.lists(
            st.fixed_dictionaries(
                {
                    "name": NAMES,
                    "cluster": st.sampled_from(CLUSTERS),
                    "pools": pools,
                    "updated": st.one_of(st.none(), pools),
                    "hours": st.integers(0, 4),
                }
            ),
            min_size=1,
            max_size=4,
        ),
        "projects": st.lists(
            st.fixed_dictionaries(
                {
                    "name": NAMES,
                    "cluster": st.sampled_from(CLUSTERS),
                    # "99" is no department the read model holds: its name reads as none.
                    "department": st.sampled_from([None, None, *DEPARTMENTS[:4], "99"]),
                    "pools": pools,
                    "updated": st.one_of(st.none(), pools),
                    "hours": st.integers(0, 4),
                }
            ),
            min_size=1,
            max_size=5,
        ),
    }
)


class _OnConnection:
    """The read side's `Reads` over the test's one connection, inside its transaction."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    @asynccontextmanager
    async def connection(self, operation: str | None = None) -> AsyncIterator[Any]:
        yield self._conn


def _fields(unit: OrgUnitRow, names: dict[ScopeRef, str]) -> dict[str, Value]:
    """What each field reads as: the value the list shows (its wire form), a project's parent
    by the name of the unit its `parentId` names."""
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


@st.composite
def queries(draw: st.DrawFn, tree: dict[str, Any]) -> dict[str, Any]:
    kind: ScopeKind = draw(st.sampled_from(("department", "project")))
    grammar = org_unit_reads.GRAMMARS[kind]
    held = [
        tree["cluster_name"], "east", "Ready", "Re", *DEPARTMENTS, "99", *map(str, CLUSTERS),
        *(d["name"] for d in tree["departments"]), *(p["name"] for p in tree["projects"]),
    ]  # fmt: skip
    items = []
    for _ in range(draw(st.integers(0, 2))):
        # The fields whose readings SQL works out otherwise than Python, more often.
        field = draw(st.one_of(st.just("totalGpuQuota"), st.sampled_from(grammar.fields)))
        operator = draw(st.sampled_from(TEXT_OPS))
        if field == "createdAt":
            value = (EPOCH + timedelta(hours=draw(st.integers(0, 5)))).isoformat()
        elif field == "totalGpuQuota":
            value = draw(st.sampled_from(QUOTA_TEXTS))
        else:
            whole = draw(st.sampled_from(held))
            value = draw(st.sampled_from([whole, whole[: max(1, len(whole) // 2)], whole[-1:]]))
        items.append(f"{field}{operator}{value}")
    conditions: list[Condition] = []
    for item in items:  # those the grammar refuses (a date's `=@`, `<=inf`) answer 400 instead
        with suppress(InvalidFilterError):
            conditions.extend(grammar.parse([item]))
    searches = st.sampled_from(["a", "X", "é", "中", "1"])
    seen = draw(st.one_of(st.just(SEEN), st.sets(st.sampled_from(sorted(SEEN)))))
    return {
        "kind": kind,
        "conditions": conditions,
        "search": draw(st.one_of(st.none(), st.none(), searches, NAMES)),
        "seen": seen | {ScopeRef("cluster", str(CLUSTERS[0]))},
    }


def _recorded(event: Any, version: int, at: datetime) -> RecordedEvent:
    return RecordedEvent(
        position=0,
        event_id=uuid4(),
        stream_type="org_unit",
        stream_id=uuid4(),
        version=version,
        recorded_at=at,
        metadata=EventMetadata(actor_subject="admin", actor_kind="user"),
        event=event,
    )


async def _store(conn: Any, tree: dict[str, Any]) -> None:
    """The tree, through the read model's own projection (which works out the totals)."""
    await conn.execute("DELETE FROM org_units")
    for cluster, name in zip(CLUSTERS, ("east", tree["cluster_name"]), strict=True):
        await org_units.apply(
            conn, _recorded(ClusterCreated(cluster_id=cluster, name=name), 1, EPOCH)
        )
    made: list[tuple[Any, Any, dict[str, Any]]] = []
    for unit_id, d in zip(DEPARTMENTS, tree["departments"], strict=False):
        department = DepartmentCreated(
            department_id=unit_id, cluster_id=d["cluster"], name=d["name"], resources=d["pools"]
        )
        changed = DepartmentUpdated(department_id=unit_id, resources=d["updated"] or ())
        made.append((department, changed, d))
    for unit_id, p in zip(PROJECTS, tree["projects"], strict=False):
        project = ProjectCreated(
            project_id=unit_id, cluster_id=p["cluster"], department_id=p["department"],
            name=p["name"], resources=p["pools"],
        )  # fmt: skip
        made.append((project, ProjectUpdated(project_id=unit_id, resources=p["updated"] or ()), p))
    for created, updated, item in made:
        at = EPOCH + timedelta(hours=item["hours"])
        await org_units.apply(conn, _recorded(created, 1, at))
        if item["updated"] is not None:
            await org_units.apply(conn, _recorded(updated, 2, at + timedelta(minutes=30)))


async def _check(conn: Any, tree: dict[str, Any], asked: list[dict[str, Any]]) -> None:
    await _store(conn, tree)
    every = await org_units.list_units(conn)
    names = {ScopeRef(u.kind, u.id): u.name for u in every}
    reads = _OnConnection(conn)
    for query in asked:
        kind, seen, conditions = query["kind"], query["seen"], query["conditions"]
        search = query["search"] if kind == "project" else None  # departments take none
        expected = [
            u
            for u in every
            if u.kind == kind
            and ScopeRef(u.kind, u.id) in seen
            and matches(conditions, _fields(u, names))
            and searched(search, (u.name,))
        ]
        chosen = await org_unit_reads.chosen(reads, kind, seen, conditions, search=search)
        counted = await org_unit_reads.count(reads, kind, seen, conditions, search=search)
        assert chosen == expected, query
        assert counted == len(expected), query


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data(), tree=units)
def test_an_org_unit_list_in_sql_is_the_list_in_memory(
    postgres_url: str, data: st.DataObject, tree: dict[str, Any]
) -> None:
    asked = data.draw(st.lists(queries(tree), min_size=1, max_size=8))
    asyncio.run(rolled_back(postgres_url, lambda conn: _check(conn, tree, asked)))


# Totals Python writes otherwise than PostgreSQL would: integral, from 1e15 on, inexact sums,
# an overflow to inf, a negative, a small one; and none (no pools, or none with a GPU quota).
TOTALS: list[tuple[float | None, ...]] = [
    (), (None,), (1.0,), (0.5, 0.5), (0.1, 0.2), (1e15,), (1e16,), (1e308, 1e308), (-1.5,),
    (3e-05,), (0.0,), (2.5, None),
]  # fmt: skip
UNIT_NAMES = ("research", "Ops", "ops-é", "中", "z", "R")
# Under the cluster, a department held, and one the read model does not hold.
PARENTS = (None, "1", "2", "99")
VALUES = {
    "name": ("research", "re", "Ops", "o", "中", "z", "s-é"),
    "clusterId": (str(CLUSTERS[0]), str(CLUSTERS[1]), "00000000", "1", "2"),
    "departmentId": ("1", "2", "99", "9", "0"),
    "parentId": ("1", "99", str(CLUSTERS[1]), "0000", "2"),
    "parentName": ("east", "west", "research", "Ops", "e", "R"),
    "phase": ("Ready", "R", "y", "x"),
    "totalGpuQuota": QUOTA_TEXTS,
    "createdAt": tuple(f"2026-01-01T0{h}:00:00Z" for h in range(4)),
}


def test_every_operator_over_every_field_reads_as_the_list_in_memory(postgres_url: str) -> None:
    def unit(index: int, quotas: tuple[float | None, ...]) -> dict[str, Any]:
        pools = tuple(
            NodePoolResources(gpu=None if q is None else QuotaResource(deserved=q)) for q in quotas
        )
        return {
            "name": UNIT_NAMES[index % len(UNIT_NAMES)],
            "cluster": CLUSTERS[index % 2],
            "department": PARENTS[index % len(PARENTS)],
            "pools": pools,
            "updated": None,
            "hours": index % 3,
        }

    tree = {
        "cluster_name": "west",
        "departments": [unit(i, quotas) for i, quotas in enumerate(TOTALS)],
        "projects": [unit(i, quotas) for i, quotas in enumerate(TOTALS)],
    }
    asked = []
    for kind in ("department", "project"):
        grammar = org_unit_reads.GRAMMARS[kind]
        for field in grammar.fields:
            for operator in TEXT_OPS:
                for value in VALUES[field]:
                    with suppress(InvalidFilterError):  # a date's `=@`, a number's `<=inf`
                        conditions = grammar.parse([f"{field}{operator}{value}"])
                        asked.append(
                            {"kind": kind, "conditions": conditions, "search": None, "seen": SEEN}
                        )
    asyncio.run(rolled_back(postgres_url, lambda conn: _check(conn, tree, asked)))
