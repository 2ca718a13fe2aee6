"""The statements of the commonest list pages keep one generic plan that walks the name index, at
a catalogue's size: planned anew each time, a page costs twice its database time, and without
the scope key's statistics (migration 0049) the planner sorted a scan of every row instead."""

import asyncpg
import pytest

from domain.values import ScopeRef
from infra.postgres import read_marks
from projections.queries.template_reads import keys_riding
from projections.template_pages import Asked, keys_query
from projections.template_queries import parse_conditions

pytestmark = [pytest.mark.integration]

SEEN = {ScopeRef("tenant"), ScopeRef("project", "7")}
ROWS = """
INSERT INTO template_catalogue (template_id, name, scope_kind, scope_id, meta, body, asset_ids,
    created_at, created_by, updated_at, updated_by, version, combined)
SELECT gen_random_uuid(), (ARRAY['x', 'y', 'z'])[1 + i % 3] || md5(i::text), 'tenant', '',
       '{}', '{}', '{}', now(), 'a', now(), 'a', 1, jsonb_build_object('spec', repeat('s', 500))
  FROM generate_series(1, 10000) AS i
"""


@pytest.mark.parametrize(
    ("seen", "filters", "sort_by"),
    [(SEEN, [], None), (SEEN, ["name=^x"], "name"), (None, [], None)],
    ids=["first page", "name prefix", "every scope's first page"],
)
async def test_a_list_page_keeps_a_generic_plan_on_the_name_index(
    clean_pool: asyncpg.Pool,
    postgres_url: str,
    seen: set[ScopeRef] | None,
    filters: list[str],
    sort_by: str | None,
) -> None:
    await clean_pool.execute(ROWS)
    await clean_pool.execute("ANALYZE template_catalogue")
    keys = keys_riding(seen, parse_conditions(filters), Asked(None, sort_by, False, 0, 50))
    conn = await asyncpg.connect(postgres_url)  # its own prepared statements, from none
    try:
        for _ in range(12):
            _, rows = await read_marks.standing_with_rows(
                conn, "someone", ["projection:x"], ["projection:x"], keys.sql, keys.args
            )
            assert len(rows) == 51
        plans = await conn.fetchrow(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE '%FROM template_catalogue%'"
            " ORDER BY generic_plans + custom_plans DESC LIMIT 1"
        )
        alone = keys_query(seen, parse_conditions(filters), Asked(None, sort_by, False, 0, 50))
        await conn.execute(f"SET plan_cache_mode = force_generic_plan; PREPARE page AS {alone.sql}")
        values = ", ".join(_literal(arg) for arg in alone.args)
        executed = f"page({values})" if values else "page"
        plan = "\n".join(r[0] for r in await conn.fetch(f"EXPLAIN EXECUTE {executed}"))
    finally:
        await conn.close()
    assert plans is not None
    assert plans["generic_plans"] >= 6, dict(plans)  # (the first five are custom, always)
    assert "template_catalogue_name_c_idx" in plan, plan
    assert "Sort" not in plan, plan


def _literal(value: object) -> str:
    if isinstance(value, tuple):
        return "ARRAY[" + ", ".join(_literal(v) for v in value) + "]::text[]"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)
