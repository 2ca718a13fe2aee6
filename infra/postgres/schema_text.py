"""The schema the migrations make, as one SQL text to read (infra/postgres/schema.sql): sequences,
tables with their columns, types, keys, indexes and statistics, functions, triggers, in name order,
from the catalogue alone (no OIDs, no server version), so one schema is one text."""

import re
from pathlib import Path
from typing import Final

import asyncpg

from infra.postgres.connections import Connection

SCHEMA_FILE: Final = Path(__file__).with_name("schema.sql")
REGENERATE: Final = "trainplate schema --output infra/postgres/schema.sql"

_HEADER: Final = f"""\
-- The schema after every migration in infra/postgres/migrations/, to read. Generated from a
-- fresh, migrated database by `{REGENERATE}`;
-- tests/integration/test_schema_file.py holds it equal to the migrations. Change the schema
-- with a new migration, never here. Rendered by PostgreSQL {{major}}.
"""

# Objects in `public` that an extension installed are the extension's, not ours.
_OURS: Final = "NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.objid = {oid} AND e.deptype = 'e')"

_EXTENSIONS: Final = "SELECT extname FROM pg_extension WHERE extname <> 'plpgsql' ORDER BY extname"

_TABLES: Final = f"""
SELECT c.oid, c.relname, c.relpersistence = 'u' AS unlogged
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND {_OURS.format(oid="c.oid")}
ORDER BY c.relname
"""

_COLUMNS: Final = """
SELECT a.attname, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull,
       a.attidentity::text, a.attgenerated::text, pg_get_expr(d.adbin, d.adrelid) AS expression,
       CASE WHEN a.attcollation <> t.typcollation THEN co.collname END AS collation
FROM pg_attribute a
JOIN pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
LEFT JOIN pg_collation co ON co.oid = a.attcollation
WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
"""

# Keys first (primary, unique, exclusion), then references, then checks; NOT NULL is the column's.
_CONSTRAINTS: Final = """
SELECT conname, pg_get_constraintdef(oid) AS definition
FROM pg_constraint
WHERE conrelid = $1 AND contype IN ('p', 'u', 'x', 'f', 'c')
ORDER BY array_position(ARRAY['p', 'u', 'x', 'f', 'c'], contype::text), conname
"""

# The indexes no key made (a key's own index is its constraint's).
_INDEXES: Final = """
SELECT pg_get_indexdef(i.indexrelid) AS definition
FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
WHERE i.indrelid = $1 AND NOT EXISTS (
    SELECT 1 FROM pg_constraint k
    WHERE k.conindid = i.indexrelid AND k.conrelid = i.indrelid AND k.contype IN ('p', 'u', 'x')
)
ORDER BY ic.relname
"""

# Extended statistics (what the planner knows of an expression a query filters on).
_STATISTICS: Final = """
SELECT pg_get_statisticsobjdef(oid) AS definition
FROM pg_statistic_ext WHERE stxrelid = $1 ORDER BY stxname
"""

# Identity columns' sequences belong to their column's definition.
_SEQUENCES: Final = f"""
SELECT s.sequencename, s.data_type::text, s.start_value, s.increment_by, s.min_value,
       s.max_value, s.cache_size, s.cycle
FROM pg_sequences s JOIN pg_class c ON c.relname = s.sequencename
JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = s.schemaname
WHERE s.schemaname = 'public' AND {_OURS.format(oid="c.oid")} AND NOT EXISTS (
    SELECT 1 FROM pg_depend i WHERE i.objid = c.oid AND i.deptype = 'i'
)
ORDER BY s.sequencename
"""

_FUNCTIONS: Final = f"""
SELECT pg_get_functiondef(p.oid) AS definition
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = 'public' AND {_OURS.format(oid="p.oid")}
ORDER BY p.proname, pg_get_function_identity_arguments(p.oid)
"""

_TRIGGERS: Final = """
SELECT pg_get_triggerdef(t.oid) AS definition
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND NOT t.tgisinternal
ORDER BY c.relname, t.tgname
"""

# Anything else of ours in `public` this text does not render: its absence would go unnoticed.
_OTHERS: Final = f"""
SELECT c.relkind::text || ' ' || c.relname AS object
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind NOT IN ('r', 'p', 'i', 'S', 't')
  AND {_OURS.format(oid="c.oid")}
UNION ALL
SELECT t.typtype::text || ' ' || t.typname
FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
WHERE n.nspname = 'public' AND t.typtype IN ('e', 'd', 'r', 'm')
  AND {_OURS.format(oid="t.oid")}
"""


class UnrenderedObjectsError(RuntimeError):
    def __init__(self, objects: list[str]) -> None:
        super().__init__(f"the schema holds objects schema_text cannot render yet: {objects}")
        self.objects = objects


async def schema_text(conn: Connection) -> str:
    others = [row["object"] for row in await conn.fetch(_OTHERS)]
    if others:
        raise UnrenderedObjectsError(sorted(others))
    parts = [_HEADER.format(major=await server_major(conn))]
    extensions = [f"CREATE EXTENSION {r['extname']};" for r in await conn.fetch(_EXTENSIONS)]
    if extensions:
        parts.append("\n".join(extensions) + "\n")
    sequences = [_sequence(row) for row in await conn.fetch(_SEQUENCES)]
    if sequences:
        parts.append("\n".join(sequences) + "\n")
    for table in await conn.fetch(_TABLES):
        parts.append(await _table(conn, table["oid"], table["relname"], table["unlogged"]))
    for row in await conn.fetch(_FUNCTIONS):
        parts.append(row["definition"].strip() + ";\n")
    triggers = [f"{row['definition']};" for row in await conn.fetch(_TRIGGERS)]
    if triggers:
        parts.append("\n".join(triggers) + "\n")
    return "\n".join(parts)


async def server_major(conn: Connection) -> int:
    """How the catalogue prints a definition may change with PostgreSQL's major version."""
    return int(await conn.fetchval("SELECT current_setting('server_version_num')")) // 10000


def rendered_by(text: str) -> int | None:
    """The major version of PostgreSQL that rendered a schema text."""
    found = re.search(r"Rendered by PostgreSQL (\d+)\.", text)
    return None if found is None else int(found.group(1))


async def _table(conn: Connection, oid: int, name: str, unlogged: bool) -> str:
    columns = await conn.fetch(_COLUMNS, oid)
    width = max(len(column["attname"]) for column in columns)
    lines = [f"    {column['attname']:<{width}} {_column(column)}".rstrip() for column in columns]
    lines += [
        f"    CONSTRAINT {row['conname']} {row['definition']}"
        for row in await conn.fetch(_CONSTRAINTS, oid)
    ]
    kind = "UNLOGGED TABLE" if unlogged else "TABLE"
    text = f"CREATE {kind} {name} (\n" + ",\n".join(lines) + "\n);\n"
    for row in await conn.fetch(_INDEXES, oid):
        text += f"{row['definition']};\n"
    for row in await conn.fetch(_STATISTICS, oid):
        text += f"{row['definition']};\n"
    return text


def _column(row: asyncpg.Record) -> str:
    parts = [row["type"]]
    if row["collation"] is not None:
        parts.append(f'COLLATE "{row["collation"]}"')
    identity = {"a": "GENERATED ALWAYS AS IDENTITY", "d": "GENERATED BY DEFAULT AS IDENTITY"}
    if row["attidentity"] in identity:
        parts.append(identity[row["attidentity"]])
    if row["attnotnull"]:
        parts.append("NOT NULL")
    if row["expression"] is not None:
        generated = {"s": "STORED", "v": "VIRTUAL"}.get(row["attgenerated"])
        if generated is None:
            parts.append(f"DEFAULT {row['expression']}")
        else:
            parts.append(f"GENERATED ALWAYS AS ({row['expression']}) {generated}")
    return " ".join(parts)


def _sequence(row: asyncpg.Record) -> str:
    return (
        f"CREATE SEQUENCE {row['sequencename']} AS {row['data_type']}"
        f" START {row['start_value']} INCREMENT {row['increment_by']}"
        f" MINVALUE {row['min_value']} MAXVALUE {row['max_value']} CACHE {row['cache_size']}"
        + (" CYCLE;" if row["cycle"] else ";")
    )
