"""A list decided in SQL (projections/template_pages.py) answers exactly as the in-memory reading
of Run:ai's grammar (tests/template_grammar.py) over the same rows: generated
catalogues and queries, names with any characters, against a real PostgreSQL."""

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID, uuid4

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.combined import Combined, Runnable
from domain.template_specs import DistributedTemplateSpec
from domain.values import ScopeRef, TemplateMeta
from infra.postgres import read_marks
from projections import template_catalogue, template_pages, template_queries
from projections.queries import template_reads
from projections.template_catalogue import COLUMNS, StoredBody, TemplateRow, row_of
from tests import template_grammar
from tests.rolled_back import rolled_back

pytestmark = [pytest.mark.integration]

CLUSTER = UUID("6f1b8e0e-3b8e-4c59-9a34-7c1f5d2a9b10")
SCOPES = [
    ScopeRef("tenant"),
    ScopeRef("cluster", str(CLUSTER)),
    ScopeRef("project", "7"),
    ScopeRef("project", "12"),
]
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
# Names as people write them, and the awkward ones: case, digits, non-ASCII, astral code points.
NAMES = st.text(alphabet=st.sampled_from("abxyzAXZ09-_ é中😀\U0010fffd"), min_size=1, max_size=6)
TEXT_FIELDS = (
    "name", "workloadType", "scopeType", "clusterId", "projectId", "createdBy", "runnable",
)  # fmt: skip
TEXT_OPS = ("==", "!=", "<=", ">=", "=@", "!@", "=^", "=$")


def _meta(name: str, description: str | None, scope: ScopeRef) -> TemplateMeta:
    if scope.kind == "project":
        return TemplateMeta(
            name=name,
            description=description,
            scope="project",
            cluster_id=CLUSTER,
            project_id=int(scope.id),
        )
    if scope.kind == "cluster":
        return TemplateMeta(name=name, description=description, scope="cluster", cluster_id=CLUSTER)
    return TemplateMeta(name=name, description=description, scope="tenant")


templates = st.lists(
    st.tuples(
        NAMES,
        st.one_of(st.none(), NAMES),
        st.sampled_from(SCOPES),
        st.integers(0, 5),
        st.sampled_from(["alice", "bob", "Bob"]),
        st.booleans(),
    ),
    min_size=1,
    max_size=25,
)


@st.composite
def queries(draw: st.DrawFn, names: list[str], used: list[ScopeRef]) -> dict[str, Any]:
    conditions = []
    for _ in range(draw(st.integers(0, 2))):
        field = draw(st.sampled_from((*TEXT_FIELDS, "createdAt")))
        if field == "createdAt":
            operator = draw(st.sampled_from(("==", "!=", "<=", ">=")))
            at = EPOCH + timedelta(hours=draw(st.integers(0, 5)))
            conditions.append(template_queries.Condition(field, operator, at))
            continue
        operator = draw(st.sampled_from(TEXT_OPS))
        known = [n[: draw(st.integers(1, max(1, len(n))))] for n in names] or ["a"]
        value = draw(
            st.one_of(st.sampled_from(known), NAMES, st.sampled_from(["7", "12", "true", "false"]))
        )
        conditions.append(template_queries.Condition(field, operator, value))
    return {
        "conditions": conditions,
        "search": draw(st.one_of(st.none(), st.sampled_from(["a", "X", "é", "中"]), NAMES)),
        "sort_by": draw(
            st.sampled_from(
                [
                    None,
                    "name",
                    "projectId",
                    "clusterId",
                    "createdAt",
                    "updatedBy",
                    "scopeType",
                    "runnable",
                ]
            )
        ),
        "descending": draw(st.booleans()),
        "offset": draw(st.integers(0, 6)),
        "limit": draw(st.integers(1, 8)),
        # Always one scope that holds a template, so the filters have rows to decide on.
        "seen": draw(st.sets(st.sampled_from(SCOPES))) | {draw(st.sampled_from(used))},
    }


async def _store(pool: Any, rows: list[tuple[Any, ...]]) -> list[TemplateRow]:
    await pool.execute("DELETE FROM template_catalogue")
    body = msgspec.json.encode(StoredBody(spec=DistributedTemplateSpec())).decode()
    for name, description, scope, hours, who, runnable in rows:
        meta = msgspec.json.encode(_meta(name, description, scope)).decode()
        combined = Combined(
            spec=DistributedTemplateSpec(), master=None, runnable=Runnable(runnable)
        )
        at = EPOCH + timedelta(hours=hours)
        await pool.execute(
            "INSERT INTO template_catalogue (template_id, name, scope_kind, scope_id, meta,"
            " body, asset_ids, created_at, created_by, updated_at, updated_by, version, combined)"
            " VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, '{}', $7, $8, $7, $8, 1, $9::jsonb)",
            uuid4(), name, scope.kind, scope.id, meta, body, at, who,
            msgspec.json.encode(combined).decode(),
        )  # fmt: skip
    return [row_of(r) for r in await pool.fetch(f"SELECT {COLUMNS} FROM template_catalogue")]


async def _check(conn: Any, catalogue: list[tuple[Any, ...]], query: dict[str, Any]) -> None:
    stored = await _store(conn, catalogue)
    seen = query["seen"]
    visible = [
        {**template_grammar.summary_of(row), "runnable": row.combined.runnable.is_runnable}
        for row in stored
        if row.template.meta.scope_ref in seen
    ]
    expected = template_grammar.select(
        visible,
        filters=[template_grammar.predicate(c) for c in query["conditions"]],
        search=query["search"],
        sort_by=query["sort_by"],
        descending=query["descending"],
    )
    offset, limit = query["offset"], query["limit"]
    asked = template_pages.Asked(
        query["search"], query["sort_by"], query["descending"], offset, limit
    )
    page, more = await template_pages.page(conn, seen, query["conditions"], asked)
    if set(seen) >= set(SCOPES):  # every scope the catalogue holds: named or not, one page
        assert await template_pages.page(conn, None, query["conditions"], asked) == (page, more)
        every = await template_pages.count(conn, None, query["conditions"], search=query["search"])
        assert every == len(expected)
    counted = await template_pages.count(conn, seen, query["conditions"], search=query["search"])
    assert [row.template.id for row in page] == [
        row["id"] for row in expected[offset : offset + limit]
    ]
    assert more == (offset + limit < len(expected))
    assert counted == len(expected)
    # The same page from its keys read along with a request's standing (one statement), its
    # rows decoded already: no other statement is sent.
    keys = template_reads.keys_riding(seen, query["conditions"], asked)
    _, records = await read_marks.standing_with_rows(conn, "someone", [], [], *keys)
    ridden = template_reads.Ridden(keys.sql, keys.args, records)
    assert await template_reads.page(NoReads(), seen, query["conditions"], asked, ridden) == (
        page,
        more,
    )
    named = await template_catalogue.names_in(conn, [r.template.id for r in stored], seen)
    assert named == {
        r.template.id: r.template.meta.name for r in stored if r.template.meta.scope_ref in seen
    }


class NoReads:
    """The read side's connections, none of which a page whose rows are known may take."""

    def connection(self, operation: str | None = None) -> Any:
        raise AssertionError("a page ridden with its rows decoded reads nothing more")


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data(), catalogue=templates)
def test_a_page_in_sql_is_the_page_in_memory(
    postgres_url: str, data: st.DataObject, catalogue: list[tuple[Any, ...]]
) -> None:
    query = data.draw(queries([row[0] for row in catalogue], [row[2] for row in catalogue]))
    asyncio.run(rolled_back(postgres_url, lambda conn: _check(conn, catalogue, query)))
