"""Migrations never empty a read model to have it replayed: its lists would be empty until the
replay ended. A projection's `version` is raised instead, and the projector rebuilds the read
model blue/green (infra/followers/read_model_versions.py)."""

import re

from infra.postgres.migrate import available_migrations
from projections import ALL

# Those that did, before read models had versions: frozen, never to grow.
REPLAYED_BY_TRUNCATION = frozenset({16, 23, 24, 25, 27})

_COMMENT = re.compile(r"--[^\n]*")
_TRUNCATE = re.compile(r"\bTRUNCATE\b", re.IGNORECASE)


def test_no_later_migration_truncates_a_read_model() -> None:
    replaying = {
        f"{m.version:04d}_{m.name}.sql"
        for m in available_migrations()
        if _TRUNCATE.search(_COMMENT.sub("", m.sql)) and m.version not in REPLAYED_BY_TRUNCATION
    }
    assert not replaying, (
        f"{sorted(replaying)} truncate a read model, which then lists nothing until replayed:"
        " raise the version of its projection (projections/__init__.py) instead; the projector"
        " rebuilds it blue/green at start-up while the old tables keep answering"
    )


def test_the_frozen_migrations_are_the_ones_that_did() -> None:
    found = {m.version for m in available_migrations() if _TRUNCATE.search(_COMMENT.sub("", m.sql))}
    assert found == REPLAYED_BY_TRUNCATION


def test_every_read_model_declares_a_positive_version() -> None:
    assert all(p.version >= 1 for p in ALL)
    assert len({p.name for p in ALL}) == len(ALL)
